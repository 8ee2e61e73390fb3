package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"

	"github.com/rboinc/rboinc/internal/store"
)

// chromium finds a Chromium to drive. Without one the browser tests are
// skipped, unless RBOINC_NEED_CHROMIUM is set (CI sets it): then they fail.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("RBOINC_NEED_CHROMIUM") != "" {
		t.Fatal("no Chromium found (apt-get install chromium), and RBOINC_NEED_CHROMIUM is set")
	}
	t.Skip("no Chromium (apt-get install chromium): the status pages are not tested in a browser")
	return ""
}

// webServer is a running `rboinc-server serve` with users.
type webServer struct {
	t      *testing.T
	root   string
	url    string // http://HOST:PORT
	tokens map[string]string
	env    []string
}

func startWebServer(t *testing.T, users ...string) *webServer {
	w := &webServer{t: t, root: filepath.Join(t.TempDir(), "root"), tokens: map[string]string{}}
	w.run("rboinc-server", "init", "--root", w.root)
	for _, u := range users {
		w.tokens[u] = strings.TrimSpace(w.run("rboinc-server", "user", "add", "--root", w.root, u))
	}
	addr := filepath.Join(t.TempDir(), "addr")
	logf, err := os.Create(filepath.Join(t.TempDir(), "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(binDir, "rboinc-server"), "serve", "--root", w.root, "--listen", "127.0.0.1:0", "--addr-file", addr, "--status-refresh", "1s")
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
		}
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("server log:\n%s", b)
		}
	})
	for i := 0; i < 200 && w.url == ""; i++ {
		if b, err := os.ReadFile(addr); err == nil && len(b) > 0 {
			w.url = "http://" + strings.TrimSpace(string(b))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if w.url == "" {
		t.Fatal("the server did not start")
	}
	return w
}

// run runs one of the built commands and returns its output.
func (w *webServer) run(name string, args ...string) string {
	w.t.Helper()
	cmd := exec.Command(filepath.Join(binDir, name), args...)
	cmd.Env = append(os.Environ(), w.env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// submit submits a langevin chain as user, with conf as its input.conf.
func (w *webServer) submit(user, group, name string, steps int, conf string) {
	w.t.Helper()
	cf := filepath.Join(w.t.TempDir(), "input.conf")
	os.WriteFile(cf, []byte(conf), 0o644)
	w.env = []string{"RBOINC_URL=" + w.url + "/rboinc_cgi", "RBOINC_TOKEN=" + w.tokens[user]}
	w.run("rboinc-submit", "-app_name", "langevin", "-group", group, "-name", name, "-num_steps", strconv.Itoa(steps),
		"-coor_file", filepath.Join(examples, "input.coor"), "-vel_file", filepath.Join(examples, "input.vel"), "-conf_file", cf)
}

// get fetches a path with HTTP Basic as user ("" for none).
func (w *webServer) get(user, path string) (int, string) {
	w.t.Helper()
	req, _ := http.NewRequest("GET", w.url+path, nil)
	if user != "" {
		req.SetBasicAuth(user, w.tokens[user])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// newBrowser starts a headless Chromium of its own (its own credential
// cache) that answers the server's Basic challenge as user with token
// ("" for none: it cancels the login, as a person without a token would).
func newBrowser(t *testing.T, exe, user, token string) context.Context {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.WindowSize(1100, 900))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelA() })
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting Chromium: %v", err)
	}
	// Every request pauses for us: continue it, and answer the login.
	paused := chromedp.Events(ctx, fetch.RequestPaused)
	auth := chromedp.Events(ctx, fetch.AuthRequired)
	go func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			go chromedp.Call(ctx, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
		}
	}()
	go func() {
		for ev, err := range auth {
			if err != nil {
				return
			}
			resp := &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseCancelAuth}
			if user != "" {
				resp = &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseProvideCredentials, Username: user, Password: token}
			}
			go chromedp.Call(ctx, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{RequestID: ev.RequestID, AuthChallengeResponse: resp})
		}
	}()
	yes := true
	if _, err := chromedp.Call(ctx, fetch.Enable, fetch.EnableParams{HandleAuthRequests: &yes}); err != nil {
		t.Fatal(err)
	}
	return ctx
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// navigate loads url in the tab. The pages under test refresh themselves
// every second (--status-refresh 1s): a refresh firing as the navigation
// starts aborts it (net::ERR_ABORTED), which is the browser's doing, not
// the server's; the navigation is then made again.
func navigate(t *testing.T, ctx context.Context, url string) {
	t.Helper()
	var err error
	for range 5 {
		err = chromedp.Do(ctx, chromedp.Navigate(url))
		if err != nil && !strings.Contains(err.Error(), "net::ERR_ABORTED") {
			break
		}
		if err != nil {
			continue
		}
		// The page left may have started its own reload (its meta
		// refresh) just before: the load waited for can be that reload's,
		// with the old page in the tab.
		at := eval[string](t, ctx, "document.location.href")
		if at == url || at == url+"/" {
			break
		}
		err = fmt.Errorf("the tab shows %s", at)
	}
	if err != nil {
		t.Fatalf("navigating to %s: %v", url, err)
	}
}

// screenshot saves the page as NAME.png into $RBOINC_SCREENSHOTS, when set
// (the README's pictures: RBOINC_SCREENSHOTS=$PWD/docs go test -run TestBrowser ./e2e).
func screenshot(t *testing.T, ctx context.Context, name string) {
	dir := os.Getenv("RBOINC_SCREENSHOTS")
	if dir == "" {
		return
	}
	b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserStatusPages drives the status pages in a real headless
// Chromium: logging in, a group's progress moving as the stand-in
// computes, a failed chain's reason, a download, the charts, confinement
// to the user's own chains, no page without credentials, and names and
// reasons carrying HTML shown as text.
func TestBrowserStatusPages(t *testing.T) {
	noteSources(repoDir)
	exe := chromium(t)
	w := startWebServer(t, "alice", "bob")
	// The slow chain's steps take a second each: enough of them that a
	// loaded machine still shows the group's count moving after the
	// running chain's page was read (with 5, CI at load saw only 6 and 7).
	const slowSteps = 10
	const g1Steps = slowSteps + 2 // and the quick chain's
	w.submit("alice", "g1", "slow", slowSteps, "steps 10\nsleep 1\n")
	w.submit("alice", "g1", "quick", 2, "")
	w.submit("alice", "g2", "doomed", 2, "steps 10\nfail 1\n")
	w.submit("bob", "bobgroup", "bobchain", 1, "")

	alice := newBrowser(t, exe, "alice", w.tokens["alice"])
	status := w.url + "/rboinc_cgi/status/"

	// A running chain's page says where its step is in BOINC (the page
	// reloads itself; between steps the chain has none to say).
	navigate(t, alice, status+"g1/slow")
	where := ""
	for end := time.Now().Add(30 * time.Second); where == "" && time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		where = eval[string](t, alice, `(() => { const p = document.querySelector('#where'); return p ? p.innerText : '' })()`)
	}
	if !regexp.MustCompile(`^Current step: (waiting in BOINC, sent to no volunteer yet|running on a volunteer since \d{4}-\d\d-\d\d \d\d:\d\d UTC|being validated by BOINC)\.$`).MatchString(where) {
		t.Fatalf("the running chain's page says %q of its step in BOINC", where)
	}

	// Logged in, the group's steps done grow on their own (the page
	// reloads itself every second; we never navigate again).
	navigate(t, alice, status)
	done := func() int {
		return eval[int](t, alice, `(() => { const r = document.querySelector('tr.group[data-group="g1"]'); return r ? +r.dataset.done : -1 })()`)
	}
	first, seen := done(), map[int]bool{}
	if first < 0 {
		t.Fatalf("no group g1 on the page: %s", eval[string](t, alice, "document.body.innerText"))
	}
	deadline := time.Now().Add(90 * time.Second)
	shot := false
	for time.Now().Before(deadline) {
		n := done()
		if n >= 0 {
			seen[n] = true
		}
		if !shot && n >= 4 && n < g1Steps {
			screenshot(t, alice, "status-overview") // mid-way, with an ETA
			shot = true
		}
		if n == g1Steps {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if !seen[g1Steps] || len(seen) < 3 {
		t.Fatalf("group g1's steps done went through %v from %d: want at least three values up to %d", seen, first, g1Steps)
	}
	if s := eval[string](t, alice, `document.querySelector('tr.group[data-group="g1"]').innerText`); !strings.Contains(s, fmt.Sprintf("%d / %d", g1Steps, g1Steps)) {
		t.Fatalf("g1's line: %q", s)
	}

	// The charts: as many bars as bins, and the turnaround histogram
	// counts every done step of alice's (the database says how many).
	db, err := store.Open(context.Background(), filepath.Join(w.root, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var doneSteps int
	db.SQL().QueryRow(`SELECT count(*) FROM steps s JOIN chains c ON c.id = s.chain_id JOIN users u ON u.id = c.user_id WHERE u.name = 'alice' AND s.state = 'done'`).Scan(&doneSteps)
	navigate(t, alice, status)
	if n := eval[int](t, alice, `document.querySelectorAll('svg#turnaround rect.bar').length`); n != 9 {
		t.Fatalf("turnaround histogram: %d bars, want 9", n)
	}
	if n := eval[int](t, alice, `document.querySelectorAll('svg#perhour rect.bar').length`); n != 24 {
		t.Fatalf("steps per hour: %d bars, want 24", n)
	}
	sum := `[...document.querySelectorAll('svg#SEL rect.bar')].reduce((a, r) => a + +r.dataset.count, 0)`
	if n := eval[int](t, alice, strings.Replace(sum, "SEL", "turnaround", 1)); n != doneSteps || n != g1Steps {
		t.Fatalf("the histogram counts %d steps, the database has %d done", n, doneSteps)
	}
	if n := eval[int](t, alice, strings.Replace(sum, "SEL", "perhour", 1)); n != doneSteps {
		t.Fatalf("steps per hour add up to %d, the database has %d done", n, doneSteps)
	}
	if h := eval[float64](t, alice, `Math.max(...[...document.querySelectorAll('svg#turnaround rect.bar')].map(r => +r.getAttribute('height')))`); h <= 10 {
		t.Fatalf("the tallest bar is %v high", h)
	}
	if n := eval[int](t, alice, `[...document.querySelectorAll('svg rect.bar')].filter(r => r.getBoundingClientRect().height > 0 && +r.dataset.count == 0).length`); n != 0 {
		t.Fatalf("%d empty bins are drawn as bars", n)
	}

	// A failed chain, followed from the list to its reason.
	if err := chromedp.Do(alice, chromedp.Click(chromedp.CSS(`#failed a[href$="/g2/doomed"]`)), chromedp.WaitVisible(chromedp.CSS("#reason"))); err != nil {
		t.Fatalf("following the failed chain: %v", err)
	}
	if r := eval[string](t, alice, `document.querySelector('#reason').innerText`); !strings.Contains(r, "configured to fail") {
		t.Fatalf("reason %q", r)
	}
	screenshot(t, alice, "status-failed-chain")

	// A finished output, downloaded by the browser with the same login.
	dl := t.TempDir()
	if _, err := chromedp.CallBrowser(alice, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{Behavior: browser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dl}); err != nil {
		t.Fatal(err)
	}
	navigate(t, alice, status+"g1/quick")
	// A done chain of 2 steps lists 2 steps, not the one kept for -extend.
	if rows := eval[string](t, alice, `[...document.querySelectorAll('#steps tr')].slice(1).map(r => r.cells[0].innerText + ' ' + r.cells[2].innerText).join('; ')`); rows != "0 done; 1 done" {
		t.Fatalf("the steps of a done 2-step chain: %q", rows)
	}
	href := eval[string](t, alice, `document.querySelector('a.download').getAttribute('href')`)
	name := eval[string](t, alice, `document.querySelector('a.download').textContent`)
	screenshot(t, alice, "status-chain")
	if err := chromedp.Do(alice, chromedp.Click(chromedp.CSS("a.download"))); err != nil {
		t.Fatal(err)
	}
	var got []byte
	for i := 0; i < 100 && got == nil; i++ {
		if b, err := os.ReadFile(filepath.Join(dl, name)); err == nil && len(b) > 0 {
			got = b
		}
		time.Sleep(100 * time.Millisecond)
	}
	code, want := w.get("alice", href)
	if got == nil || code != 200 || string(got) != want {
		t.Fatalf("downloaded %s: %q; the server has %d %q", name, got, code, want)
	}

	// Bob sees his chains only, also at the address of alice's.
	bob := newBrowser(t, exe, "bob", w.tokens["bob"])
	navigate(t, bob, status)
	body := eval[string](t, bob, "document.body.innerText")
	if !strings.Contains(body, "bobgroup") || strings.Contains(body, "g1") || strings.Contains(body, "doomed") {
		t.Fatalf("bob's page:\n%s", body)
	}
	for _, p := range []string{"g1", "g1/quick", "g2/doomed"} {
		navigate(t, bob, status+p)
		if body := eval[string](t, bob, "document.body.innerText"); strings.Contains(body, "quick") && !strings.Contains(body, "no chain") || strings.Contains(body, "configured to fail") {
			t.Fatalf("bob at %s:\n%s", p, body)
		}
	}

	// Without credentials (the login dialog cancelled) no page shows
	// anything of anyone's.
	anon := newBrowser(t, exe, "", "")
	for _, p := range []string{"", "g1", "g1/quick", "g2/doomed", "bobgroup"} {
		navigate(t, anon, status+p)
		body := eval[string](t, anon, "document.body.innerText")
		if !strings.Contains(body, "Log in with your rboinc user name and token") || strings.Contains(body, "quick") || strings.Contains(body, "bobchain") {
			t.Fatalf("without credentials at %s:\n%s", p, body)
		}
	}
	navigate(t, anon, w.url+href)
	if body := eval[string](t, anon, "document.body.innerText"); body == want || !strings.Contains(body, "unauthorized") {
		t.Fatalf("the download without credentials: %q", body)
	}

	// Names and reasons carrying HTML are shown as text: chains the API
	// would refuse, put into the database directly.
	ctx := context.Background()
	u, err := db.UserByName(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	evil := `<b id="inj1">x</b>`
	cs, err := db.CreateChains(ctx, u, []store.NewChain{{Chain: store.Chain{Group: `g<i id="inj2">`, Name: evil, Queue: "q", App: "a", NSteps: 1, Params: "{}", Layout: "{}"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.FailChain(ctx, cs[0].ID, 0, `crashed: <img id="inj3" src="x">`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SQL().Exec(`INSERT INTO results(chain_id, step, idx, file, md5, size) VALUES (?, 0, 0, ?, 'd41d8cd98f00b204e9800998ecf8427e', 0)`, cs[0].ID, `<u id="inj4">out</u>`); err != nil {
		t.Fatal(err)
	}
	injected := `document.querySelectorAll('#inj1, #inj2, #inj3, #inj4').length`
	navigate(t, alice, status)
	if n := eval[int](t, alice, injected); n != 0 {
		t.Fatalf("the overview made %d injected elements", n)
	}
	body = eval[string](t, alice, "document.body.innerText")
	if !strings.Contains(body, `g<i id="inj2">`) || !strings.Contains(body, `crashed: <img id="inj3" src="x">`) {
		t.Fatalf("the overview does not show the names as text:\n%s", body)
	}
	if err := chromedp.Do(alice, chromedp.Click(chromedp.CSS(`#failed a`)), chromedp.WaitVisible(chromedp.CSS("#reason"))); err != nil {
		t.Fatal(err)
	}
	body = eval[string](t, alice, "document.body.innerText")
	if n := eval[int](t, alice, injected); n != 0 || !strings.Contains(body, evil) || !strings.Contains(body, `<u id="inj4">out</u>`) {
		t.Fatalf("the chain page made %d injected elements:\n%s", n, body)
	}
	if err := chromedp.Do(alice, chromedp.Click(chromedp.CSS(`h1 a`)), chromedp.WaitVisible(chromedp.CSS("#chains"))); err != nil {
		t.Fatal(err)
	}
	if n := eval[int](t, alice, injected); n != 0 || !strings.Contains(eval[string](t, alice, "document.body.innerText"), evil) {
		t.Fatalf("the group page made %d injected elements", n)
	}

	// On a phone, the page fits the screen's width.
	phone := newBrowser(t, exe, "alice", w.tokens["alice"])
	if err := chromedp.Do(phone, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(3)), chromedp.Navigate(status)); err != nil {
		t.Fatal(err)
	}
	if sw := eval[int](t, phone, "document.documentElement.scrollWidth"); sw > 400 {
		t.Errorf("on a phone the page is %d px wide, the screen 390", sw)
	}
	screenshot(t, phone, "status-phone")
}
