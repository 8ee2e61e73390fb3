package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
)

// benchUser is the scientist the benchmarks submit as.
const benchUser = "bench"

// rbServer is a running `rboinc-server serve` on a fresh server root.
type rbServer struct {
	root  string
	proj  string
	url   string // the API base, for RBOINC_URL
	token string
	cmd   *exec.Cmd
	done  chan struct{}
	log   *os.File
}

// startServer initialises a server root with the embedded BOINC stand-in
// and serves it. The stand-in's volunteer loop stays off (the root is
// marked as not simulated): nothing computes the work units, so nothing
// but the measured work runs; the benchmarks play BOINC's part themselves
// (outputs in the upload hierarchy, hook calls).
func startServer(ctx context.Context, bin, work, create string) (*rbServer, error) {
	root := filepath.Join(work, "server")
	srvBin := filepath.Join(bin, "rboinc-server")
	args := []string{"init", "--root", root}
	if create != "" {
		args = append(args, "--create", create)
	}
	if _, err := run(ctx, cmdSpec{Name: srvBin, Args: args}); err != nil {
		return nil, err
	}
	// Generic JSON, so that settings this program does not know survive.
	cfgPath := filepath.Join(root, engine.ConfigFile)
	raw, err := os.ReadFile(cfgPath)
	if err != nil {
		return nil, err
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return nil, err
	}
	cfg["simulated"] = false
	// Nothing computes the work units, so every chain stays in progress:
	// the 150,000 held work units need the limit of chains in progress off.
	if _, ok := cfg["max_running_chains"]; ok {
		cfg["max_running_chains"] = 0
	}
	data, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.WriteFile(cfgPath, append(data, '\n'), 0o644); err != nil {
		return nil, err
	}
	proj, _ := cfg["boinc_project"].(string)
	r, err := run(ctx, cmdSpec{Name: srvBin, Args: []string{"user", "add", "--root", root, benchUser}})
	if err != nil {
		return nil, err
	}
	s := &rbServer{root: root, proj: proj, token: strings.TrimSpace(string(r.Stdout)), done: make(chan struct{})}
	addrFile := filepath.Join(work, "server.addr")
	os.Remove(addrFile)
	if s.log, err = os.Create(filepath.Join(work, "server.log")); err != nil {
		return nil, err
	}
	s.cmd = exec.Command(srvBin, "serve", "--root", root, "--listen", "127.0.0.1:0", "--addr-file", addrFile)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { s.cmd.Wait(); close(s.done) }()
	for i := 0; i < 200; i++ {
		if b, err := os.ReadFile(addrFile); err == nil && len(b) > 0 {
			s.url = "http://" + strings.TrimSpace(string(b)) + "/rboinc_cgi"
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("the server exited; see %s", s.log.Name())
		case <-time.After(50 * time.Millisecond):
		}
	}
	s.stop()
	return nil, errors.New("the server did not start within 10 s")
}

// env is what the clients need to reach the server.
func (s *rbServer) env() []string {
	return []string{"RBOINC_URL=" + s.url, "RBOINC_TOKEN=" + s.token}
}

func (s *rbServer) pid() int { return s.cmd.Process.Pid }

// stop interrupts the server (only the process this program started) and
// waits for it.
func (s *rbServer) stop() {
	s.cmd.Process.Signal(os.Interrupt)
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
	s.log.Close()
}

// fileServer is the baseline: Go's plain static file server over dir.
type fileServer struct {
	srv  *http.Server
	base string
}

func startFileServer(dir string) (*fileServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	fs := &fileServer{srv: &http.Server{Handler: http.FileServer(http.Dir(dir))}, base: "http://" + ln.Addr().String()}
	go fs.srv.Serve(ln)
	return fs, nil
}

func (fs *fileServer) close() { fs.srv.Close() }
