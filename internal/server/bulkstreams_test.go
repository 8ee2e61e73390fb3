package server_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/workflow/wire"
)

// bigFinishedGroup makes n one-step chains of user's in group, finished
// with three outputs of size bytes each: a bulk answer of them is far
// larger than the socket buffers, so a reader that does not read holds
// the server's stream.
func (v *env) bigFinishedGroup(user, group string, n, size int) {
	v.t.Helper()
	for i := range n {
		r := v.submit(user, group, fmt.Sprintf("c%03d", i), 1)
		wu := r.Chains[0].FirstWU
		var paths []string
		for k := range 3 {
			p := v.e.Proj.UploadPath(fmt.Sprintf("%s_0_r1804289383_%d", wu, k))
			os.MkdirAll(filepath.Dir(p), 0o755)
			if err := os.WriteFile(p, []byte(fmt.Sprintf("%d %s\n%s", k, wu, strings.Repeat("x", size))), 0o644); err != nil {
				v.t.Fatal(err)
			}
			paths = append(paths, p)
		}
		if err := v.hookCall(boinc.HookCall{WUName: wu, Files: paths}); err != nil {
			v.t.Fatal(err)
		}
	}
}

// stalledBulk sends user's bulk request for group and reads only the
// answer's status line: the rest it never reads. The connection stays
// open until closed.
func stalledBulk(t *testing.T, srvURL, token, group string) (status string, c net.Conn) {
	u, _ := url.Parse(srvURL)
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Error(err)
		return "", nil
	}
	body := `{"group":"` + group + `"}`
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
		server.Base+wire.PathFilesBulk, u.Host, token, len(body), body)
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	line, err := bufio.NewReaderSize(c, 16).ReadString('\n')
	if err != nil {
		c.Close()
		return "error " + err.Error(), nil
	}
	status = strings.TrimSpace(line)
	if !strings.HasSuffix(status, " 200 OK") {
		// A refusal: its connection is not held.
		c.Close()
		return status, nil
	}
	return status, c
}

// fdCount is how many descriptors process pid holds open.
func fdCount(t *testing.T, pid int) int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Skipf("no /proc to count the server's descriptors: %v", err)
	}
	return len(ents)
}

// sockCount is how many sockets process pid holds open.
func sockCount(t *testing.T, pid int) int {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Skipf("no /proc to count the server's sockets: %v", err)
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

// bulkStreams has each of users open streams bulk downloads of group
// that it never reads past the status line; it returns what was answered
// and the connections held.
func bulkStreams(t *testing.T, r *env, users []string, streams int, group string) (statuses map[string]int, conns []net.Conn) {
	var mu sync.Mutex
	statuses = map[string]int{}
	var wg sync.WaitGroup
	for _, u := range users {
		for range streams {
			wg.Go(func() {
				st, c := stalledBulk(t, r.srv.URL, r.tokens[u], group)
				mu.Lock()
				defer mu.Unlock()
				statuses[st]++
				if c != nil {
					conns = append(conns, c)
				}
			})
		}
	}
	wg.Wait()
	return statuses, conns
}

// TestBulkStalledReadersStandalone: bulk downloads whose readers never
// read, 12 from each of nine users at once, against the real standalone
// server. At most maxBulkStreams (64) stream at once from all users
// together (each user at most maxBulkStreamsPerUser of them, though a
// user may have max_user_requests, 64, requests in progress), the others
// are refused 503 server_busy (or 429); the server
// holds a connection and a file a stream and its memory stays bounded;
// the transfer guard cuts every stalled stream off within its window,
// and then the descriptors and the slots are free again. (Without the
// server-wide bound, 192 streams stalled: 376 descriptors, 51 MiB.)
func TestBulkStalledReadersStandalone(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real server")
	}
	t.Parallel()
	v := newEnv(t)
	// Nine users, so that their shares (maxBulkStreamsPerUser each) add
	// up to more than the server-wide bound.
	users := []string{"carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory"}
	for _, u := range users {
		v.addUser(u)
		v.bigFinishedGroup(u, "big", 2, 1<<20) // 6 MiB an answer
	}
	const window, maxStreams, perUser = 5, 64, 12
	r, pid := standalone(t, v, map[string]any{"min_transfer_rate": 1024, "transfer_window_seconds": window})
	if a := r.call("carol", "GET", "/rboinc_cgi/api/v1/results?group=big", nil); !a.ok() {
		t.Fatalf("carol's results: %v", a)
	}
	fd0, sock0 := fdCount(t, pid), sockCount(t, pid)
	rss0, _ := procMemMB(t, pid)
	start := time.Now()
	statuses, conns := bulkStreams(t, r, users, perUser, "big")
	fd1 := fdCount(t, pid)
	rss1, peak1 := procMemMB(t, pid)
	t.Logf("%d stalled bulk streams of %d users: answers %v in %v; server descriptors %d before, %d while held; resident %.1f MiB before, %.1f MiB while held (peak %.1f)",
		len(conns), len(users), statuses, time.Since(start).Round(time.Millisecond), fd0, fd1, rss0, rss1, peak1)
	ok, busy, many := statuses["HTTP/1.1 200 OK"], statuses["HTTP/1.1 503 Service Unavailable"], statuses["HTTP/1.1 429 Too Many Requests"]
	if ok < maxStreams || ok+busy+many != perUser*len(users) {
		t.Errorf("answers %v, want at least %d 200 and the others 503 or 429", statuses, maxStreams)
	}
	// A connection and the file being sent, each stream held (a stream
	// cut off while the others were opened frees its slot for another).
	if fd1-fd0 > 2*maxStreams+48 {
		t.Errorf("the server holds %d descriptors more while the streams stall, want at most %d", fd1-fd0, 2*maxStreams+48)
	}
	if peak1 > 100 {
		t.Errorf("the server's resident memory reached %.1f MiB", peak1)
	}
	// Cut off within the window once the socket buffers are full, not
	// when the client hangs up: the clients keep every connection open.
	// Sockets counted, not all descriptors: the state's pool may open
	// more of its connections meanwhile (nine users' look-ups at once).
	sock1 := sockCount(t, pid)
	deadline := time.Now().Add(4*window*time.Second + 20*time.Second)
	for sockCount(t, pid) > sock0+8 && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	fd2, sock2 := fdCount(t, pid), sockCount(t, pid)
	t.Logf("descriptors %d, sockets %d (%d before, %d while held) after %v", fd2, sock2, sock0, sock1, time.Since(start).Round(time.Second))
	a := r.call("carol", "POST", "/rboinc_cgi/api/v1/files/bulk", strings.NewReader(`{"group":"big","files":[]}`))
	for _, c := range conns {
		c.Close()
	}
	if sock2 > sock0+8 {
		t.Errorf("the stalled streams were not cut off: %d sockets, %d before, %d while %d streams were held", sock2, sock0, sock1, len(conns))
	}
	if !a.ok() {
		t.Errorf("a bulk request after the stalled ones were cut off: %v", a)
	}
}

// bulkAttacks has carol send bulk requests of 16 MiB, announced and
// chunked (refused 413 too_large; not frank's: his stalled ones take all
// his max_user_requests), and frank (a group of big answers:
// bigFinishedGroup) open 96 bulk downloads he never reads: at most
// maxBulkStreamsPerUser stream, the others are refused 503 or 429. check hangs
// up on the stalled ones.
func bulkAttacks(t *testing.T, r *env, wg *sync.WaitGroup, got *tally) (check func()) {
	for _, length := range []int64{16<<20 + 12, -1} {
		wg.Go(func() {
			body := io.MultiReader(strings.NewReader(`{"group":"`), &repeated{item: "g", n: 16 << 20}, strings.NewReader(`"}`))
			a := rawPost(t, r.srv.URL, r.tokens["carol"], wire.PathFilesBulk, body, length)
			got.note("16 MiB bulk bodies refused", a.status == http.StatusRequestEntityTooLarge && a.err.Code == wire.CodeTooLarge)
		})
	}
	var conns []net.Conn
	wg.Go(func() {
		var statuses map[string]int
		statuses, conns = bulkStreams(t, r, []string{"frank"}, 96, "big")
		for st, n := range statuses {
			switch st {
			case "HTTP/1.1 200 OK":
				for range n {
					got.note("stalled bulk streams", true)
				}
			case "HTTP/1.1 503 Service Unavailable", "HTTP/1.1 429 Too Many Requests":
				for range n {
					got.note("bulk streams refused", true)
				}
			default:
				t.Errorf("%d stalled bulk requests answered %s", n, st)
			}
		}
	})
	return func() {
		t.Helper()
		for _, c := range conns {
			c.Close()
		}
		if n := got.get("16 MiB bulk bodies refused"); n != 2 {
			t.Errorf("%d of 2 bulk bodies of 16 MiB refused 413 too_large", n)
		}
		if held, refused := got.get("stalled bulk streams"), got.get("bulk streams refused"); held > server.MaxBulkStreamsPerUser || held+refused != 96 {
			t.Errorf("of 96 stalled bulk downloads, %d streamed and %d were refused; want at most %d streaming", held, refused, server.MaxBulkStreamsPerUser)
		}
	}
}
