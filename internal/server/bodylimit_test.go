package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
)

// rawAnswer is what rawPost read back.
type rawAnswer struct {
	status int
	hdr    http.Header
	err    wire.Error
	body   string
}

// rawPost sends a POST over its own connection, the body written while
// the answer is read (a server may answer before it has read the body, as
// a refusal does): length -1 sends it chunked. An answer that does not come
// within the time given fails the test.
func rawPost(t *testing.T, srvURL, token, path string, body io.Reader, length int64) rawAnswer {
	t.Helper()
	u, _ := url.Parse(srvURL)
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		w := bufio.NewWriterSize(c, 64<<10)
		fmt.Fprintf(w, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n", server.Base+path, u.Host, token)
		if length >= 0 {
			fmt.Fprintf(w, "Content-Length: %d\r\n\r\n", length)
			io.Copy(w, body)
			w.Flush()
			return
		}
		fmt.Fprintf(w, "Transfer-Encoding: chunked\r\n\r\n")
		buf := make([]byte, 32<<10)
		for {
			n, rerr := body.Read(buf)
			if n > 0 {
				fmt.Fprintf(w, "%x\r\n", n)
				w.Write(buf[:n])
				if _, err := io.WriteString(w, "\r\n"); err != nil {
					return
				}
			}
			if rerr != nil {
				break
			}
		}
		io.WriteString(w, "0\r\n\r\n")
		w.Flush()
	}()
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("POST %s: no answer: %v", path, err)
	}
	b, _ := io.ReadAll(resp.Body)
	a := rawAnswer{status: resp.StatusCode, hdr: resp.Header, body: string(b)}
	json.Unmarshal(b, &a.err)
	return a
}

// repeated is a reader of n copies of item, made as it is read.
type repeated struct {
	item string
	n    int
	off  int
}

func (r *repeated) Read(p []byte) (int, error) {
	w := 0
	// The rest of an item begun in the last read.
	if r.off > 0 && r.n > 0 {
		k := copy(p, r.item[r.off:])
		w = k
		if r.off += k; r.off == len(r.item) {
			r.off, r.n = 0, r.n-1
		}
	}
	// Whole items, the first copied and then doubled: a byte at a time
	// they took minutes under -race.
	if whole := min(r.n, (len(p)-w)/len(r.item)); whole > 0 {
		end := w + whole*len(r.item)
		filled := w + copy(p[w:end], r.item)
		for filled < end {
			filled += copy(p[filled:end], p[w:filled])
		}
		w, r.n = end, r.n-whole
	}
	// The start of the next item.
	if w < len(p) && r.n > 0 {
		r.off = copy(p[w:], r.item)
		w += r.off
		if r.off == len(r.item) {
			r.off, r.n = 0, r.n-1
		}
	}
	if w == 0 {
		return 0, io.EOF
	}
	return w, nil
}

// missingBody is a pool/missing request of n checksums, made as it is
// read, and its length.
func missingBody(n int) (io.Reader, int64) {
	const sum = `"0123456789abcdef0123456789abcdef"`
	head, tail := `{"md5s":[`, sum+`]}`
	return io.MultiReader(strings.NewReader(head), &repeated{item: sum + ",", n: n - 1}, strings.NewReader(tail)),
		int64(len(head) + (n-1)*(len(sum)+1) + len(tail))
}

// TestBodyLimitsPerRoute: every route that reads a JSON body refuses one
// past its limit with 413 naming the limit (announced: before reading it;
// chunked: as soon as the limit is passed), and takes one at the limit.
// The server takes 1/div of every limit: the table holds the real ones,
// and a route with another route's limit still answers another number.
func TestBodyLimitsPerRoute(t *testing.T) {
	t.Parallel()   // its own server
	const div = 64 // 64 MiB bodies took a minute under -race
	v := newEnv(t)
	s := server.New(v.e, slog.New(slog.NewTextHandler(v.logs, nil)))
	server.DivideBodyLimits(s, div)
	v.srv = httptest.NewServer(s.Handler())
	t.Cleanup(v.srv.Close)
	tok := v.tokens["alice"]
	routes := []struct {
		path  string
		limit int64
		ok    string // a valid body, padded to the limit with spaces
	}{
		{wire.PathMissing, 4 << 20, `{"md5s":[]}`},
		{wire.PathAck, 4 << 20, `{"group":"g","files":[]}`},
		{wire.PathStop, 1 << 20, `{"group":"g"}`},
		{wire.PathResume, 1 << 20, `{"group":"g"}`},
		{wire.PathExtend, 1 << 20, `{"group":"g","steps":1}`},
		{wire.PathPriority, 1 << 20, `{"group":"g","priority":1}`},
		{wire.PathAbort, 1 << 20, `{"group":"g"}`},
		{wire.PathPurge, 1 << 20, `{"group":"g"}`},
		{wire.PathBatchRetire, 1 << 20, `{"name":"b"}`},
		{wire.PathBatchLease, 1 << 20, `{"name":"b","lease":1}`},
		{wire.PathBatchQuery, 8 << 20, `{"names":[]}`},
		{wire.PathBatchAbort, 8 << 20, `{"jobs":[]}`},
		{wire.PathSubmit, 64 << 20, `{"queue":"nosuch","group":"g","chains":[]}`},
		{wire.PathSubmitInline, 64 << 20, ""},
	}
	for _, rt := range routes {
		rt.limit /= div
		// The route's first member, its value a string past the limit.
		key := "queue"
		if rt.ok != "" {
			key = strings.Split(rt.ok, `"`)[1]
		}
		over := func() io.Reader {
			return io.MultiReader(strings.NewReader(`{"`+key+`":"`), &repeated{item: "a", n: int(rt.limit)}, strings.NewReader(`"}`))
		}
		n := rt.limit + int64(len(`{"`+key+`":""}`))
		for _, length := range []int64{n, -1} {
			if rt.path == wire.PathSubmitInline && length >= 0 {
				continue // its length counts the contents too: the head is measured as it is read
			}
			a := rawPost(t, v.srv.URL, tok, rt.path, over(), length)
			if a.status != http.StatusRequestEntityTooLarge || a.err.Code != wire.CodeTooLarge || !strings.Contains(a.err.Error, strconv.FormatInt(rt.limit, 10)) {
				t.Errorf("%s, %d bytes (length %d): %d %s", rt.path, n, length, a.status, a.body)
			}
		}
		if rt.ok != "" {
			body := rt.ok + strings.Repeat(" ", int(rt.limit)-len(rt.ok))
			if a := rawPost(t, v.srv.URL, tok, rt.path, strings.NewReader(body), int64(len(body))); a.status == http.StatusRequestEntityTooLarge || a.status >= 500 {
				t.Errorf("%s at its limit: %d %s", rt.path, a.status, a.body)
			}
		}
	}
}

// TestListsCountedWhileRead: a list one item longer than a route takes is
// refused (413 naming the count) although its body is within the limit.
func TestListsCountedWhileRead(t *testing.T) {
	t.Parallel() // its own server
	v := newEnv(t)
	body, n := missingBody(wire.MaxMissingMD5s + 1)
	a := rawPost(t, v.srv.URL, v.tokens["alice"], wire.PathMissing, body, n)
	if a.status != http.StatusRequestEntityTooLarge || !strings.Contains(a.err.Error, strconv.Itoa(wire.MaxMissingMD5s)) {
		t.Fatalf("%d checksums (%d bytes): %d %s", wire.MaxMissingMD5s+1, n, a.status, a.body)
	}
	files := make([]string, wire.MaxAckFiles+1)
	for i := range files {
		files[i] = "c-ALICE_g-0-2-RND0001_0"
	}
	if a := v.post("alice", server.Base+wire.PathAck, wire.AckRequest{Group: "g", Files: files}); a.status != http.StatusRequestEntityTooLarge || !strings.Contains(a.err.Error, strconv.Itoa(wire.MaxAckFiles)) {
		t.Fatalf("ack of %d files: %s", len(files), a)
	}
	// The client splits its lists: the same requests through it pass.
	cl, err := client.New(v.srv.URL+server.Base, v.tokens["alice"])
	if err != nil {
		t.Fatal(err)
	}
	// One checksum past the limit: two requests, the second the rest (each
	// checksum is a database lookup, slow under -race).
	sums := make([]string, wire.MaxMissingMD5s+1)
	for i := range sums {
		sums[i] = fmt.Sprintf("%032x", i)
	}
	missing, err := cl.Missing(context.Background(), sums)
	if err != nil || len(missing) != len(sums) {
		t.Fatalf("client: %d of %d missing, %v", len(missing), len(sums), err)
	}
	if _, err := cl.Ack(context.Background(), wire.AckRequest{Group: "g", Files: files}); err != nil {
		t.Fatalf("client ack of %d files: %v", len(files), err)
	}
}

// TestHugeMissingBodyKeepsHeap: a 105 MB pool/missing request (the attack
// that took the server from 29 to 474 MB) is refused, announced or
// chunked, while the server's heap stays within a few MiB of where it was.
func TestHugeMissingBodyKeepsHeap(t *testing.T) {
	v := newEnv(t)
	const items = 3000000 // 35 bytes each: 105 MB
	for _, announced := range []bool{true, false} {
		body, n := missingBody(items)
		length := n
		if !announced {
			length = -1
		}
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		before := m.HeapAlloc
		var peak atomic.Uint64
		peak.Store(before)
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			var m runtime.MemStats
			for {
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > peak.Load() {
					peak.Store(m.HeapAlloc)
				}
				select {
				case <-stop:
					return
				case <-time.After(2 * time.Millisecond):
				}
			}
		}()
		a := rawPost(t, v.srv.URL, v.tokens["alice"], wire.PathMissing, body, length)
		close(stop)
		<-sampled
		runtime.GC()
		runtime.ReadMemStats(&m)
		grew := int64(peak.Load()) - int64(before)
		t.Logf("%d-byte body (announced %v): %d %s; heap %.1f MiB before, %.1f MiB at most during, %.1f MiB after",
			n, announced, a.status, a.err.Error, float64(before)/(1<<20), float64(peak.Load())/(1<<20), float64(m.HeapAlloc)/(1<<20))
		if a.status != http.StatusRequestEntityTooLarge {
			t.Errorf("answer %d %s", a.status, a.body)
		}
		if grew > 24<<20 {
			t.Errorf("the heap grew by %.1f MiB while refusing the body", float64(grew)/(1<<20))
		}
	}
}

// TestJSONBudget: while bodies being read fill the server's budget
// (max_json_bytes_in_flight), other requests are answered 503 with
// Retry-After, announced ones before a byte is read; once the bodies are
// answered, the same requests pass.
func TestJSONBudget(t *testing.T) {
	v := newEnv(t)
	v.e.Cfg.MaxJSONInFlight = 1 << 20
	srv := httptest.NewServer(server.New(v.e, slog.New(slog.NewTextHandler(io.Discard, nil))).Handler())
	defer srv.Close()
	tok := v.tokens["alice"]

	// A submission whose body stops after 900 KiB: held, read, unanswered.
	u, _ := url.Parse(srv.URL)
	head := `{"queue":"` + strings.Repeat("q", 900<<10)
	tail := `","group":"g","chains":[]}`
	hold := func() net.Conn {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s", server.Base+wire.PathSubmit, u.Host, tok, len(head)+len(tail), head)
		return c
	}
	held := hold()
	defer func() { held.Close() }()

	small := `{"md5s":[]}` + strings.Repeat(" ", 300<<10)
	var a rawAnswer
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if a = rawPost(t, srv.URL, tok, wire.PathMissing, strings.NewReader(small), int64(len(small))); a.status != http.StatusOK {
			break
		}
		// Under load a small body may be admitted before the server
		// reads the held one's headers; the held one is then refused
		// (503) instead, and as its body was not read the answer may
		// be lost to a reset: any end but a timeout means hold another.
		held.SetReadDeadline(time.Now().Add(time.Millisecond))
		var ne net.Error
		if n, err := held.Read(make([]byte, 1)); n > 0 || err != nil && !(errors.As(err, &ne) && ne.Timeout()) {
			held.Close()
			held = hold()
		}
		held.SetReadDeadline(time.Time{})
	}
	if a.status != http.StatusServiceUnavailable || a.err.Code != wire.CodeServerBusy || a.hdr.Get("Retry-After") == "" || !strings.Contains(a.err.Error, "max_json_bytes_in_flight") {
		t.Fatalf("announced body past the budget: %d %v %s", a.status, a.hdr, a.body)
	}
	if a := rawPost(t, srv.URL, tok, wire.PathMissing, strings.NewReader(small), -1); a.status != http.StatusServiceUnavailable || a.err.Code != wire.CodeServerBusy {
		t.Fatalf("chunked body past the budget: %d %s", a.status, a.body)
	}
	// A body larger than the whole budget could never pass: 413, not 503.
	big := `{"queue":"` + strings.Repeat("q", 2<<20) + `"}`
	if a := rawPost(t, srv.URL, tok, wire.PathSubmit, strings.NewReader(big), int64(len(big))); a.status != http.StatusRequestEntityTooLarge {
		t.Fatalf("body past the whole budget: %d %s", a.status, a.body)
	}
	// The held submission ends, is answered, and gives its bytes back.
	io.WriteString(held, tail)
	held.SetReadDeadline(time.Now().Add(30 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(held), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if a := rawPost(t, srv.URL, tok, wire.PathMissing, strings.NewReader(small), int64(len(small))); a.status != http.StatusOK {
		t.Fatalf("after the held body was answered: %d %s", a.status, a.body)
	}
}

// TestRepeatedReader: repeated makes exactly n copies of its item,
// whatever the sizes it is read in (the body tests trust its lengths).
func TestRepeatedReader(t *testing.T) {
	for _, item := range []string{"a", "xyz", strings.Repeat("0123456789", 7)} {
		for _, n := range []int{0, 1, 5, 1000, 33333} {
			for _, size := range []int{1, 2, 7, 64, 4096, 32 << 10} {
				if n*len(item)/size > 10000 {
					continue // a few reads of each size tell as much
				}
				r := &repeated{item: item, n: n}
				var got strings.Builder
				buf := make([]byte, size)
				for {
					k, err := r.Read(buf)
					got.Write(buf[:k])
					if err == io.EOF {
						break
					}
					if err != nil || k == 0 {
						t.Fatalf("item %q n %d size %d: read %d, %v", item, n, size, k, err)
					}
				}
				if got.String() != strings.Repeat(item, n) {
					t.Fatalf("item %q n %d read in %d: %d bytes, not %d copies", item, n, size, got.Len(), n)
				}
			}
		}
	}
}
