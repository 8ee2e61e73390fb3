package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/cgi"
	"time"

	"github.com/rboinc/rboinc/workflow/engine"
	"github.com/rboinc/rboinc/workflow/standin"
)

// CollectEvery is how often a running server collects unreferenced pool
// contents; CollectGrace spares contents a client asked about recently.
const (
	CollectEvery = time.Minute
	CollectGrace = time.Hour
)

// Serve runs the standalone server until ctx is done: the API, the WebDAV
// area, pool collection and, on the embedded stand-in, its volunteer loop.
// ready, if not nil, receives the listening address.
func Serve(ctx context.Context, e *engine.Engine, listen string, log *slog.Logger, ready func(addr string)) error {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: New(e, log).Handler(), ReadHeaderTimeout: 30 * time.Second}
	errc := make(chan error, 3)
	go func() { errc <- srv.Serve(ln) }()
	if e.Cfg.Simulated {
		v := &standin.Volunteer{ProjectDir: e.Proj.Dir, Logger: log.With("part", "boinc-standin")}
		go func() {
			if err := v.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
				errc <- err
			}
		}()
	}
	go func() {
		t := time.NewTicker(CollectEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if n, err := e.Collect(ctx, CollectGrace); err != nil {
					log.Warn("pool collection", "err", err)
				} else if n > 0 {
					log.Info("pool collection", "removed", n)
				}
			}
		}
	}()
	log.Info("rboinc-server listening", "api", "http://"+ln.Addr().String()+Base, "dav", "http://"+ln.Addr().String()+"/DAV/", "simulated_boinc", e.Cfg.Simulated)
	if ready != nil {
		ready(ln.Addr().String())
	}
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			srv.Close()
			return err
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}

// ServeCGI answers the one request a web server hands to a CGI program.
func ServeCGI(e *engine.Engine, log *slog.Logger) error {
	return cgi.Serve(New(e, log).Handler())
}
