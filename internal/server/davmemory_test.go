package server_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/longtest"
)

// procMemMB reads a process's resident size now and at its peak, in MiB.
func procMemMB(t *testing.T, pid int) (rss, peak float64) {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc to measure the server by: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
		if err != nil {
			continue
		}
		switch k {
		case "VmRSS":
			rss = kb / 1024
		case "VmHWM":
			peak = kb / 1024
		}
	}
	return rss, peak
}

// standalone starts the real rboinc-server on v's root, with settings
// written into its rboinc.json first, and returns v as seen through it
// and the server's process id.
func standalone(t testing.TB, v *env, settings map[string]any) (*env, int) {
	t.Helper()
	exe := realServer(t)
	cfgPath := filepath.Join(v.e.Root, engine.ConfigFile)
	var cfg map[string]any
	b, err := os.ReadFile(cfgPath)
	if err == nil {
		err = json.Unmarshal(b, &cfg)
	}
	if err != nil {
		t.Fatal(err)
	}
	for k, val := range settings {
		cfg[k] = val
	}
	b, _ = json.Marshal(cfg)
	if err := os.WriteFile(cfgPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	addrFile := filepath.Join(t.TempDir(), "addr")
	logf, err := os.Create(filepath.Join(t.TempDir(), "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logf.Close() })
	cmd := exec.Command(exe, "serve", "--root", v.e.Root, "--listen", "127.0.0.1:0", "--addr-file", addrFile)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	var addr string
	for i := 0; i < 400 && addr == ""; i++ {
		if b, err := os.ReadFile(addrFile); err == nil && len(b) > 0 {
			addr = strings.TrimSpace(string(b))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if addr == "" {
		log, _ := os.ReadFile(logf.Name())
		t.Fatalf("the server did not start:\n%s", log)
	}
	sv := *v
	sv.srv = &httptest.Server{URL: "http://" + addr}
	return &sv, cmd.Process.Pid
}

// tally counts what attacks were granted (or answered otherwise than
// expected), from many goroutines.
type tally struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *tally) note(what string, ok bool) {
	if ok {
		c.mu.Lock()
		if c.n == nil {
			c.n = map[string]int{}
		}
		c.n[what]++
		c.mu.Unlock()
	}
}

func (c *tally) get(what string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[what]
}

func (c *tally) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return fmt.Sprint(c.n)
}

// davAttackSettings are the settings the WebDAV attacks expect: a scratch
// quota of 4 MiB.
var davAttackSettings = map[string]any{"max_scratch_bytes": 4 << 20}

// prepareDAVAttacks gives alice's area what the WebDAV attacks need: a
// tree 400 collections deep, a file to lock and a collection of 10,000
// files.
func prepareDAVAttacks(t *testing.T, v *env) {
	t.Helper()
	area := v.e.DAVRoot(store0("alice"))
	if err := os.MkdirAll(filepath.Join(append([]string{area}, strings.Split(strings.Repeat("d/", 400), "/")...)...), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(area, "f"), []byte("x"), 0o644)
	wide := filepath.Join(area, "w")
	os.Mkdir(wide, 0o755)
	for i := range 10000 {
		os.WriteFile(filepath.Join(wide, strconv.Itoa(i)), nil, 0o644)
	}
}

// davAttacks starts in wg, against r, the attacks of issue 26 on the
// WebDAV area and upload collections (alice's and bob's), noting in got
// what was granted; check says whether only what should be was.
func davAttacks(t *testing.T, r *env, wg *sync.WaitGroup, got *tally) (check func()) {
	big := lockInfoOwner("shared", "<D:href>"+strings.Repeat("o", 900<<10)+"</D:href>")
	small := lockInfoOwner("shared", strings.Repeat("o", 4000))
	for w := range 8 {
		wg.Go(func() {
			for i := w; i < 150; i += 8 {
				a := r.call("alice", "LOCK", davA+"f", strings.NewReader(big), "Timeout", "Infinite", "Depth", "0")
				got.note("900 KB locks", a.ok())
				a = r.call("alice", "LOCK", davA+"f", strings.NewReader(small), "Timeout", "Infinite", "Depth", "0")
				got.note("4 KB locks", a.ok())
				if a.ok() && !strings.Contains(a.body, "Second-3600") {
					t.Errorf("a lock granted otherwise than for an hour: %v", a)
				}
			}
		})
	}
	// With the 32 other workers, as many requests as a user may have in
	// flight (max_user_requests, 64).
	for range 32 {
		wg.Go(func() {
			a := r.call("alice", "PROPFIND", davA+"d/", nil, "Depth", "infinity")
			got.note("PROPFIND infinity", a.status == 207)
		})
	}
	for range 16 {
		wg.Go(func() {
			a := r.call("alice", "PROPFIND", davA+"w/", nil, "Depth", "1")
			got.note("listings of 10,000", a.status == 207)
		})
	}
	for w := range 8 {
		wg.Go(func() {
			for range 250 {
				got.note("uploads", r.call("alice", "POST", "/rboinc_cgi/api/v1/uploads", nil).ok())
			}
			r.call("bob", "MKCOL", fmt.Sprintf("/DAV/bob/e%d/", w), nil)
			for i := range 2000 {
				a := r.call("bob", "MKCOL", fmt.Sprintf("/DAV/bob/e%d/%d/", w, i), nil)
				if !a.ok() {
					break
				}
				got.note("empty collections", true)
			}
		})
	}
	return func() {
		t.Helper()
		if got.get("900 KB locks") != 0 || got.get("4 KB locks") != 100 || got.get("PROPFIND infinity") != 0 || got.get("uploads") != 100 || got.get("empty collections") > 1024 || got.get("listings of 10,000") != 16 {
			t.Errorf("granted %v; want no 900 KB lock, 100 4 KB ones, no PROPFIND of infinite depth, 16 listings, 100 uploads, at most 1024 collections", got)
		}
	}
}

// TestDAVAttacksStandaloneMemory runs the real standalone server and, all
// at once, the attacks of issue 26 on its WebDAV area and upload
// collections: 150 shared locks with Timeout Infinite and 900 KB owners
// and 150 with 4 KB owners, 32 PROPFINDs of infinite depth on a tree 400
// collections deep, 16 listings (Depth 1) of a collection of 10,000
// files, 2,000 upload collections, and empty collections made until the
// scratch quota (4 MiB) stops them. The server's resident memory stays
// under 100 MB throughout (the listings at once took it to 117 MiB, one
// at a time 38 MiB). TestAttacksAtOnceStandaloneMemory makes the same
// attacks with others at once and checks the same, so this one, which
// tells the WebDAV attacks' share apart, is in the long matrix.
func TestDAVAttacksStandaloneMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real server")
	}
	longtest.Skip(t, "the WebDAV attacks alone (TestAttacksAtOnceStandaloneMemory makes them too)")
	v := newEnv(t)
	prepareDAVAttacks(t, v)
	r, pid := standalone(t, v, davAttackSettings)
	r.mustStatus(207, "PROPFIND", davA, "", "Depth", "1")
	rss0, peak0 := procMemMB(t, pid)

	var wg sync.WaitGroup
	var got tally
	check := davAttacks(t, r, &wg, &got)
	wg.Wait()
	rss1, peak1 := procMemMB(t, pid)
	t.Logf("standalone server: resident %.1f MiB before the attacks (peak %.1f), %.1f MiB after (peak %.1f); granted: %v", rss0, peak0, rss1, peak1, &got)
	if peak1 > 100 {
		t.Errorf("the server's resident memory reached %.1f MiB", peak1)
	}
	check()
}
