package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rboinc/rboinc/workflow/wire"
)

// BenchmarkEventPollers: 1,000 long polls wait on the events feed of a
// real `rboinc-server serve` process at once, each on its own connection,
// ten per user (a user's requests in progress are bounded); then one
// user's transition answers that user's ten. It reports how much the
// server process's resident memory grew while they all wait (target
// < 50 MB), and how long the last of the ten took to answer after the
// transition, against a single poll's wake-up in the same run.
func BenchmarkEventPollers(b *testing.B) {
	n := 1000
	if testing.Short() {
		n = 100
	}
	ps := startServe(b)
	users := []string{ps.token}
	for k := 1; k < n/10; k++ {
		users = append(users, ps.addUser(b, fmt.Sprintf("u%d", k)))
	}
	for i := 0; i < b.N; i++ {
		group := fmt.Sprintf("g%d", i)
		ps.submit(b, group, "c1", "c2")
		ps.quiet(b, group)
		one := ps.wakeAll(b, []string{ps.token}, group, "c1")
		ps.quiet(b, group)
		var tokens []string
		for k := range n {
			tokens = append(tokens, users[k%len(users)])
		}
		res := ps.wakeAll(b, tokens, group, "c2")
		b.ReportMetric(float64(res.mem)/(1<<20), fmt.Sprintf("MB-RSS/%dpollers", n))
		b.ReportMetric(float64(res.last.Microseconds())/1000, "ms-last-of-10")
		b.ReportMetric(float64(one.last.Microseconds())/1000, "ms-single")
		if one.last > 0 {
			b.ReportMetric(float64(res.last)/float64(one.last), "ten/single")
		}
	}
}

// serveProc is a real server process on a fresh root, user alice.
type serveProc struct {
	host, url, token, root string
	pid                    int
}

func startServe(b *testing.B) *serveProc {
	exe := realServer(b)
	root := b.TempDir()
	if out, err := exec.Command(exe, "init", "--root", root, "--url", "http://127.0.0.1:1/rboinc_cgi").CombinedOutput(); err != nil {
		b.Fatalf("init: %v\n%s", err, out)
	}
	out, err := exec.Command(exe, "user", "add", "--root", root, "alice").Output()
	if err != nil {
		b.Fatalf("user add: %v", err)
	}
	addr := filepath.Join(b.TempDir(), "addr")
	cmd := exec.Command(exe, "serve", "--root", root, "--listen", "127.0.0.1:0", "--addr-file", addr)
	logf, err := os.Create(filepath.Join(root, "serve.log"))
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	b.Cleanup(func() {
		if b.Failed() {
			l, _ := os.ReadFile(logf.Name())
			b.Logf("server log:\n%s", tail(string(l), 3000))
		}
	})
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for range 200 {
		if a, err := os.ReadFile(addr); err == nil && len(a) > 0 {
			host := "http://" + strings.TrimSpace(string(a))
			return &serveProc{host: host, url: host + "/rboinc_cgi", token: strings.TrimSpace(string(out)), root: root, pid: cmd.Process.Pid}
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Fatal("the server did not start")
	return nil
}

func (p *serveProc) call(b *testing.B, method, path string, body any, out any) {
	var r io.Reader
	if body != nil {
		j, _ := json.Marshal(body)
		r = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, p.url+path, r)
	req.Header.Set("Authorization", "Bearer "+p.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(resp.Body)
		b.Fatalf("%s %s: %s %s", method, path, resp.Status, msg)
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			b.Fatal(err)
		}
	}
}

// submit makes chains of the example queue from inline-free uploads.
// quiet stops the group and waits until no event came for a second: the
// next event is the one a test makes.
func (p *serveProc) quiet(b *testing.B, group string) {
	p.call(b, "POST", wire.PathStop, wire.ChainRef{Group: group}, nil)
	var r wire.EventsResponse
	p.call(b, "GET", wire.PathEvents, nil, &r)
	for last := r.LastID; ; {
		r = wire.EventsResponse{}
		p.call(b, "GET", wire.PathEvents+"?after="+itoa(last)+"&wait=1s", nil, &r)
		if len(r.Events) == 0 {
			return
		}
		last = r.Events[len(r.Events)-1].ID
	}
}

func (p *serveProc) addUser(b *testing.B, name string) string {
	out, err := exec.Command(realServer(b), "user", "add", "--root", p.root, name).Output()
	if err != nil {
		b.Fatalf("user add %s: %v", name, err)
	}
	return strings.TrimSpace(string(out))
}

func (p *serveProc) submit(b *testing.B, group string, names ...string) {
	var up wire.UploadResponse
	p.call(b, "POST", wire.PathUploads, nil, &up)
	var refs []wire.FileRef
	for _, c := range []string{"1 2 3\n", "0 0 0\n"} {
		req, _ := http.NewRequest("PUT", p.host+up.DAVPath+md5of(c), strings.NewReader(c))
		req.Header.Set("Authorization", "Bearer "+p.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode/100 != 2 {
			b.Fatalf("PUT: %v %v", err, resp)
		}
		resp.Body.Close()
		refs = append(refs, wire.FileRef{MD5: md5of(c), Size: int64(len(c))})
	}
	req := wire.SubmitRequest{Queue: "langevin", Group: group, Upload: up.ID, Options: wire.Options{NumSteps: 3}}
	for _, n := range names {
		req.Chains = append(req.Chains, wire.ChainSpec{Name: n, Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}})
	}
	p.call(b, "POST", wire.PathSubmit, req, nil)
}

func rssBytes(b *testing.B, pid int) uint64 {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skip("no /proc to read the server's memory from")
	}
	for _, l := range strings.Split(string(st), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb << 10
		}
	}
	b.Fatal("no VmRSS in /proc status")
	return 0
}

type wakeResult struct {
	mem  uint64
	last time.Duration // of the first token's polls
}

// wakeAll starts a poll per token, waits until all are sent and waiting,
// measures the server's memory, stops the first token's chain, and times
// that user's answers; the other polls are then given up.
func (p *serveProc) wakeAll(b *testing.B, tokens []string, group, chain string) wakeResult {
	var start wire.EventsResponse
	p.call(b, "GET", wire.PathEvents, nil, &start)
	before := rssBytes(b, p.pid)
	n := len(tokens)
	tr := &http.Transport{MaxIdleConnsPerHost: n, MaxConnsPerHost: 0}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sent atomic.Int64
	var mine []time.Time
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, tok := range tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each user's feed from its own newest event on.
			after := start.LastID
			if tok != p.token {
				after = 1 << 40
			}
			req, _ := http.NewRequestWithContext(ctx, "GET", p.url+wire.PathEvents+"?after="+itoa(after)+"&wait=30s", nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
				WroteRequest: func(httptrace.WroteRequestInfo) { sent.Add(1) }}))
			resp, err := cl.Do(req)
			if err != nil {
				if ctx.Err() == nil {
					b.Error(err)
				}
				return
			}
			var r wire.EventsResponse
			err = jsonDecode(resp, &r)
			if tok != p.token {
				return
			}
			at := time.Now()
			if err != nil || len(r.Events) == 0 || resp.StatusCode != 200 {
				b.Errorf("poll: %s %v %+v", resp.Status, err, r)
			}
			mu.Lock()
			mine = append(mine, at)
			mu.Unlock()
		}()
	}
	for sent.Load() < int64(n) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // the server has read them all and waits
	mem := rssBytes(b, p.pid)
	stopped := time.Now()
	p.call(b, "POST", wire.PathResume, wire.ChainRef{Group: group, Name: chain}, nil)
	want := (n + 99) / 100
	if n == 1 {
		want = 1
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		k := len(mine)
		mu.Unlock()
		if k >= want {
			break
		}
	}
	cancel()
	wg.Wait()
	var last time.Duration
	for _, at := range mine {
		last = max(last, at.Sub(stopped))
	}
	if len(mine) < want {
		b.Fatalf("%d of the user's %d polls answered", len(mine), want)
	}
	var extra uint64
	if mem > before {
		extra = mem - before
	}
	return wakeResult{mem: extra, last: last}
}

func jsonDecode(resp *http.Response, v any) error {
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
