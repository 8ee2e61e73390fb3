package gahp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/gahp"
	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/testbin"
	"github.com/rboinc/rboinc/workflow/wire"
)

// project is a real rboinc server (in-process, HTTP) on the BOINC
// stand-in, with one user, counting what reaches it.
type project struct {
	tb    testing.TB
	e     *engine.Engine
	url   string
	token string
	// inline counts the contents sent inside submissions, puts those sent
	// by WebDAV or resumable PUT.
	inline, puts atomic.Int64
	runs         func() int
}

func newProject(tb testing.TB) *project {
	tb.Helper()
	ctx := context.Background()
	root := tb.TempDir()
	// The stand-in's create_work, a separate process as BOINC's is, is
	// the real rboinc-server of the run's shared build.
	testbin.Preinstall(root, testbin.Path(tb, testbin.Server))
	if _, err := setup.Init(ctx, setup.Options{Root: root, Exe: testbin.Path(tb, testbin.Server), URLBase: "http://127.0.0.1:1"}); err != nil {
		tb.Fatal(err)
	}
	e, err := engine.Open(ctx, root, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { e.Close() })
	p := &project{tb: tb, e: e, token: server.NewToken()}
	if _, err := e.AddUser(ctx, "alice", server.HashToken(p.token)); err != nil {
		tb.Fatal(err)
	}
	h := server.New(e, slog.New(slog.NewTextHandler(io.Discard, nil))).Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, wire.PathSubmitInline):
			// The request's first line lists the contents that follow.
			br := bufio.NewReaderSize(r.Body, 1<<20)
			head, err := br.ReadBytes('\n')
			var req wire.SubmitRequest
			if err == nil && json.Unmarshal(head, &req) == nil {
				p.inline.Add(int64(len(req.Inline)))
			}
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(head), br))
		case r.Method == http.MethodPut:
			p.puts.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	tb.Cleanup(srv.Close)
	p.url = srv.URL + server.Base
	p.runs = countCreateWork(tb, e.Proj.Dir)
	return p
}

// countCreateWork wraps the project's bin/create_work so that every run is
// counted; it returns the count's reader.
func countCreateWork(tb testing.TB, proj string) func() int {
	bin := filepath.Join(proj, "bin")
	orig := filepath.Join(bin, "create_work.orig")
	if err := os.Rename(filepath.Join(bin, "create_work"), orig); err != nil {
		tb.Fatal(err)
	}
	log := filepath.Join(tb.TempDir(), "runs")
	script := "#!/bin/sh\necho run >> '" + log + "'\nexec '" + orig + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "create_work"), []byte(script), 0o755); err != nil {
		tb.Fatal(err)
	}
	return func() int {
		b, _ := os.ReadFile(log)
		return len(b) / len("run\n")
	}
}

// conversation is a GAHP session in-process, spoken to line by line.
type conversation struct {
	tb  testing.TB
	in  *io.PipeWriter
	out *bufio.Reader
}

func (p *project) session(dir string) *conversation {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &gahp.Session{Banner: "1.0.2 Jan 01 2026 test", Dir: dir, Project: gahp.Project{URL: p.url, Token: p.token}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(context.Background(), inR, outW)
		outW.Close()
	}()
	c := &conversation{tb: p.tb, in: inW, out: bufio.NewReaderSize(outR, 1<<20)}
	p.tb.Cleanup(func() { inW.Close(); io.Copy(io.Discard, outR); <-done })
	c.line() // the banner
	return c
}

func (c *conversation) line() string {
	l, err := c.out.ReadString('\n')
	if err != nil {
		c.tb.Fatalf("reading the GAHP's answer: %v", err)
	}
	return strings.TrimSuffix(l, "\n")
}

// ask sends a line and returns the synchronous answer.
func (c *conversation) ask(line string) string {
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.tb.Fatal(err)
	}
	return c.line()
}

// result waits for the result of one asynchronous request (the only one
// outstanding).
func (c *conversation) result(limit time.Duration) string {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		if a := c.ask("RESULTS"); a != "S 0" {
			if a != "S 1" {
				c.tb.Fatalf("RESULTS: %q", a)
			}
			return c.line()
		}
		time.Sleep(5 * time.Millisecond)
	}
	c.tb.Fatalf("no result within %v", limit)
	return ""
}

// request sends an asynchronous request and returns its result.
func (c *conversation) request(line string, limit time.Duration) string {
	if a := c.ask(line); a != "S" {
		c.tb.Fatalf("%.80s: answered %q", line, a)
	}
	return c.result(limit)
}

// batchLine is a BOINC_SUBMIT of n jobs of queue langevin: job i's
// coordinates are file i%distinct of dir, the velocities one shared file.
func batchLine(tb testing.TB, dir string, id int, batch string, n, distinct int) string {
	vel := filepath.Join(dir, "shared.vel")
	if err := os.WriteFile(vel, []byte("0 0 0\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "BOINC_SUBMIT %d %s langevin %d", id, batch, n)
	for i := range n {
		coor := filepath.Join(dir, fmt.Sprintf("c%d.coor", i%distinct))
		if i < distinct {
			if err := os.WriteFile(coor, []byte(fmt.Sprintf("%d 1 1\n", i)), 0o644); err != nil {
				tb.Fatal(err)
			}
		}
		fmt.Fprintf(&b, " %s#%d.%d 0 2 %s input.coor %s input.vel", batch, 7, i, coor, vel)
	}
	b.WriteString(" NULL NULL NULL NULL NULL NULL")
	return b.String()
}
