package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// serveStandalone runs the standalone server of v's engine on a loopback
// port and returns its address.
func serveStandalone(t *testing.T, v *env) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- server.ServeWith(ctx, v.e, server.Listen{Addr: "127.0.0.1:0"}, slog.New(slog.NewTextHandler(io.Discard, nil)), func(a string) { addrc <- a })
	}()
	select {
	case addr := <-addrc:
		t.Cleanup(func() { cancel(); <-done })
		return addr
	case err := <-done:
		cancel()
		t.Fatal(err)
	}
	return ""
}

// answers holds the start of what the server answered to each slowPut, by
// path.
var answers sync.Map

// slowPut opens a connection and starts a PUT of size bytes into user's
// scratch area, sending the headers and then one byte every gap (gap 0:
// nothing more). It returns the connection and a channel that receives
// when the server closed it (or answered), and how long that took.
func slowPut(t *testing.T, addr, token, path string, size int, gap time.Duration) (net.Conn, <-chan time.Duration) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	fmt.Fprintf(c, "PUT %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n", path, addr, token, size)
	start := time.Now()
	cut := make(chan time.Duration, 1)
	go func() {
		// Returns when the server answers or closes the connection; the
		// start of its answer is kept (answers), for a test that expected
		// the request to be held.
		var head [200]byte
		if n, _ := io.ReadAtLeast(c, head[:], 1); n > 0 {
			answers.Store(path, string(head[:n]))
		}
		io.Copy(io.Discard, c)
		cut <- time.Since(start)
	}()
	if gap > 0 {
		go func() {
			for range size {
				if _, err := c.Write([]byte("x")); err != nil {
					return
				}
				time.Sleep(gap)
			}
		}()
	}
	return c, cut
}

// TestSlowClientsAreCutOff: a client that sends its body at a few bytes a
// second, or stops sending, is cut off within about two windows of the
// configured minimum rate, while a normal client is served meanwhile.
func TestSlowClientsAreCutOff(t *testing.T) {
	v := newEnv(t)
	v.e.Cfg.MinTransferRate, v.e.Cfg.TransferWindowSeconds, v.e.Cfg.MaxUserRequests = 1000, 1, 0
	addr := serveStandalone(t, v)
	up := v.newUpload("alice")
	_, trickle := slowPut(t, addr, v.tokens["alice"], up.DAVPath+"a", 100000, 100*time.Millisecond)
	_, stalled := slowPut(t, addr, v.tokens["alice"], up.DAVPath+"b", 100000, 0)

	// Meanwhile a normal client gets its answers.
	req, _ := http.NewRequest("GET", "http://"+addr+"/rboinc_cgi/api/v1/queues", nil)
	req.Header.Set("Authorization", "Bearer "+v.tokens["bob"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("a normal client was not served beside the slow ones: %v %v", resp, err)
	}
	resp.Body.Close()
	big := strings.Repeat("0.5 1.5 2.5\n", 200000)
	req, _ = http.NewRequest("PUT", "http://"+addr+up.DAVPath+md5of(big), strings.NewReader(big))
	req.Header.Set("Authorization", "Bearer "+v.tokens["alice"])
	if resp, err = http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("a normal upload beside the slow ones: %v %v", resp, err)
	}
	resp.Body.Close()

	for name, ch := range map[string]<-chan time.Duration{"1 byte per 100 ms": trickle, "nothing after the headers": stalled} {
		select {
		case d := <-ch:
			// Two windows of 1 s, and room for a loaded machine.
			if d > 6*time.Second {
				t.Errorf("%s: cut off after %v, want within about 2 s", name, d)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s: still connected after 10 s", name)
		}
	}
}

// TestUserRequestCap: a user with as many requests in progress as the
// server takes gets 429 for one more; another user is served.
func TestUserRequestCap(t *testing.T) {
	v := newEnv(t)
	v.e.Cfg.MinTransferRate, v.e.Cfg.MaxUserRequests = 0, 2
	addr := serveStandalone(t, v)
	up := v.newUpload("alice")
	var held []<-chan time.Duration
	for i := range 2 {
		_, cut := slowPut(t, addr, v.tokens["alice"], fmt.Sprintf("%s%d", up.DAVPath, i), 1000, 0)
		held = append(held, cut)
	}
	// Both held PUTs counted before alice asks again: each has its
	// temporary file once past the cap. Asked earlier, alice's third
	// request could take the second place, and the PUT it beat be refused
	// (its 429 then waits behind the body it never gets).
	dir := filepath.Join(v.e.DAVRoot(store.User{Name: "alice"}), up.ID)
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		temps, _ := filepath.Glob(filepath.Join(dir, ".rboinc-put-*"))
		if len(temps) == 2 {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("the two held PUTs did not both start writing in 30 s (%d temporary files in %s)", len(temps), dir)
		}
	}
	call := func(user string) (int, string) {
		req, _ := http.NewRequest("GET", "http://"+addr+"/rboinc_cgi/api/v1/queues", nil)
		req.Header.Set("Authorization", "Bearer "+v.tokens[user])
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b) + resp.Header.Get("Retry-After")
	}
	if st, body := call("alice"); st != http.StatusTooManyRequests || !strings.Contains(body, wire.CodeTooManyRequests) || !strings.Contains(body, "2 requests in progress") {
		for i, cut := range held {
			a, answered := answers.Load(fmt.Sprintf("%s%d", up.DAVPath, i))
			select {
			case d := <-cut:
				t.Errorf("alice's held request %d ended after %s, answered %q", i, d, a)
			default:
				if answered {
					t.Errorf("alice's held request %d was answered: %q", i, a)
				}
			}
		}
		t.Fatalf("alice's third request: %d %s, want 429", st, body)
	}
	if st, body := call("bob"); st != 200 {
		t.Fatalf("bob beside alice's held requests: %d %s", st, body)
	}
}

// TestExpectContinueRefusedAtOnce: a PUT announcing its body with Expect:
// 100-continue and no credentials gets its 401 at once (the server must
// not wait for a body it never asked for), with the transfer guard on.
func TestExpectContinueRefusedAtOnce(t *testing.T) {
	v := newEnv(t)
	addr := serveStandalone(t, v)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "PUT /DAV/alice/x HTTP/1.1\r\nHost: %s\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n", addr)
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 401") {
		t.Fatalf("answer %q, %v; want 401 at once", line, err)
	}
}
