package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/cgi"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
)

// lockSweep is how often a running server forgets expired WebDAV locks.
const lockSweep = time.Minute

// Serve runs the standalone server until ctx is done: the API and the
// WebDAV area. It runs no daemon: `rboinc-server serve` runs the creator,
// the notifier, pool collection and the stand-in beside it (package
// daemon). ready, if not nil, receives the listening address.
func Serve(ctx context.Context, e *engine.Engine, listen string, log *slog.Logger, ready func(addr string)) error {
	return ServeWith(ctx, e, Listen{Addr: listen}, log, ready)
}

// Listen says where and how the standalone server listens.
type Listen struct {
	Addr string
	// CertFile and KeyFile, both given, make the server speak HTTPS only
	// (PEM files; the certificate file may hold the whole chain).
	CertFile, KeyFile string
	// StatusRefresh is how often the status pages reload themselves
	// (0: webstatus.DefaultRefresh).
	StatusRefresh time.Duration
}

// ServeWith is Serve with TLS when l names a certificate and key.
func ServeWith(ctx context.Context, e *engine.Engine, l Listen, log *slog.Logger, ready func(addr string)) error {
	var tlsCfg *tls.Config
	if l.CertFile != "" || l.KeyFile != "" {
		if l.CertFile == "" || l.KeyFile == "" {
			return errors.New("HTTPS needs both a certificate (--tls-cert) and its key (--tls-key)")
		}
		cert, err := tls.LoadX509KeyPair(l.CertFile, l.KeyFile)
		if err != nil {
			return fmt.Errorf("loading the TLS certificate %s and key %s: %w", l.CertFile, l.KeyFile, err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	// Made now rather than one by one by the first submission.
	if err := e.Pool.Prepare(); err != nil {
		log.Warn("preparing the content pool", "err", err)
	}
	ln, err := net.Listen("tcp", l.Addr)
	if err != nil {
		return err
	}
	scheme := "http"
	if tlsCfg != nil {
		ln, scheme = tls.NewListener(ln, tlsCfg), "https"
	}
	// Failed TLS handshakes (scanners, plain HTTP) are routine: debug level.
	s := New(e, log)
	s.StatusRefresh = l.StatusRefresh
	t := e.Cfg.Transfer
	s.perUser = &userRequests{max: t.MaxUserRequests}
	srv := &http.Server{Handler: guardTransfers(s.Handler(), t, log), ReadHeaderTimeout: 30 * time.Second, TLSConfig: tlsCfg,
		IdleTimeout: time.Duration(t.IdleTimeoutSeconds) * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	sweepCtx, endSweep := context.WithCancel(ctx)
	defer endSweep()
	go func() {
		t := time.NewTicker(lockSweep)
		defer t.Stop()
		for {
			select {
			case <-sweepCtx.Done():
				return
			case <-t.C:
				s.expireLocks(time.Now())
			}
		}
	}()
	log.Info("rboinc-server listening", "api", scheme+"://"+ln.Addr().String()+Base, "dav", scheme+"://"+ln.Addr().String()+"/DAV/", "simulated_boinc", e.Cfg.Simulated)
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
	h := New(e, log).Handler()
	return cgi.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The request ends when the web server stops waiting for it, as a
		// standalone server's ends when its client goes away.
		ctx, stop := watchHangup(r.Context(), 1)
		defer stop()
		h.ServeHTTP(w, r.WithContext(ctx))
		// A CGI program that exits with part of the request unread resets
		// its socket, and Apache then loses the answer.
		io.Copy(io.Discard, r.Body)
	}))
}
