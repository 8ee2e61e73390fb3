package server_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/server"
	"github.com/rboinc/rboinc/workflow/wire"
)

// addUser gives v another user with a fresh token.
func (v *env) addUser(name string) {
	v.t.Helper()
	tok := server.NewToken()
	if _, err := v.db.AddUser(context.Background(), name, server.HashToken(tok)); err != nil {
		v.t.Fatal(err)
	}
	v.tokens[name] = tok
}

// bodyAttacks sends carol's oversized JSON bodies: the 105 MB
// pool/missing request of issue 26, announced and chunked, and control
// bodies of 16 MiB (their limit is 1 MiB), announced and chunked. Each
// must be refused 413 too_large.
func bodyAttacks(t *testing.T, r *env, wg *sync.WaitGroup, got *tally) (check func()) {
	const items = 3000000 // 35 bytes each: 105 MB
	for _, length := range []int64{0, -1} {
		wg.Go(func() {
			body, n := missingBody(items)
			if length == 0 {
				length = n
			}
			a := rawPost(t, r.srv.URL, r.tokens["carol"], wire.PathMissing, body, length)
			got.note("105 MB pool/missing refused", a.status == http.StatusRequestEntityTooLarge && a.err.Code == wire.CodeTooLarge)
		})
	}
	control := []string{wire.PathStop, wire.PathResume, wire.PathExtend, wire.PathPriority, wire.PathAbort, wire.PathPurge, wire.PathBatchRetire, wire.PathBatchLease}
	for _, path := range control {
		for _, length := range []int64{0, -1} {
			wg.Go(func() {
				const size = 16 << 20
				body := io.MultiReader(strings.NewReader(`{"group":"`), &repeated{item: "g", n: size}, strings.NewReader(`"}`))
				if length == 0 {
					length = size + int64(len(`{"group":""}`))
				}
				a := rawPost(t, r.srv.URL, r.tokens["carol"], path, body, length)
				got.note("16 MiB control bodies refused", a.status == http.StatusRequestEntityTooLarge && a.err.Code == wire.CodeTooLarge)
			})
		}
	}
	return func() {
		t.Helper()
		if n := got.get("105 MB pool/missing refused"); n != 2 {
			t.Errorf("%d of 2 bodies of 105 MB refused 413 too_large", n)
		}
		if n := got.get("16 MiB control bodies refused"); n != 2*len(control) {
			t.Errorf("%d of %d control bodies of 16 MiB refused 413 too_large", n, 2*len(control))
		}
	}
}

// pollEvents is one long poll of user's events feed, waiting up to wait
// or until ctx ends.
func pollEvents(ctx context.Context, r *env, user string, wait time.Duration) (status int, retryAfter string, err error) {
	req, err := http.NewRequestWithContext(ctx, "GET", fmt.Sprintf("%s%s%s?after=0&wait=%s", r.srv.URL, server.Base, wire.PathEvents, wait), nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+r.tokens[user])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), nil
}

// longPollAttack has erin (who has no events) hold 3 times
// max_user_long_polls (8) polls of a minute: 8 wait, the others are
// refused 429 with Retry-After. The waiting ones are hung up on when the
// other attacks are over (stop), and their slots are free again.
func longPollAttack(t *testing.T, r *env, got *tally) (stop func()) {
	const max, polls = 8, 24
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range polls {
		wg.Go(func() {
			start := time.Now()
			status, retry, err := pollEvents(ctx, r, "erin", time.Minute)
			switch {
			case status == http.StatusTooManyRequests && retry != "":
				got.note("long polls refused", true)
			case err != nil && ctx.Err() != nil:
				got.note("long polls held", true)
			case status == http.StatusOK && time.Since(start) >= time.Minute-time.Second:
				// Held its whole minute: the other attacks took longer
				// (a loaded machine).
				got.note("long polls held", true)
			default:
				t.Errorf("a long poll: %d, %v", status, err)
			}
		})
	}
	return func() {
		t.Helper()
		// The refused ones are answered at once; the held ones wait.
		time.Sleep(200 * time.Millisecond)
		cancel()
		wg.Wait()
		if held, refused := got.get("long polls held"), got.get("long polls refused"); held != max || refused != polls-max {
			t.Errorf("of %d long polls of one user, %d held and %d refused 429 with Retry-After; want %d held", polls, held, refused, max)
		}
		// Hung up on, they gave their slots back.
		deadline := time.Now().Add(10 * time.Second)
		for {
			status, _, err := pollEvents(context.Background(), r, "erin", time.Second)
			if status == http.StatusOK {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("after the held polls ended, another: %d %v", status, err)
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// notifyAttacks has dave name webhooks on inner addresses (each refused
// 400 bad_notify_target when submitted), then register public ones, 8 a
// submission, until max_notify_targets (32) refuses them 403
// quota_exceeded.
func notifyAttacks(t *testing.T, r *env, wg *sync.WaitGroup, got *tally) (check func()) {
	inner := []string{"http://127.0.0.1:8080/", "http://localhost/", "http://[::1]/", "http://169.254.169.254/latest/meta-data/",
		"http://10.0.0.1/", "http://192.168.1.1/", "http://[fd00::1]/", "http://0.0.0.0/", "http://[::ffff:127.0.0.1]/"}
	submit := func(group string, notify []string) answer {
		up, refs := r.upload("dave", "1 2 3\n", "0 0 0\n")
		req := langevin(group, "c", up, 1, refs[0], refs[1])
		req.Options.Notify = notify
		return r.post("dave", server.Base+wire.PathSubmit, req)
	}
	wg.Go(func() {
		for _, u := range inner {
			a := submit("inner", []string{u})
			if a.status == http.StatusBadRequest && a.err.Code == wire.CodeBadNotifyTarget {
				got.note("inner webhooks refused", true)
			} else {
				t.Errorf("a webhook to %s: %v", u, a)
			}
		}
	})
	wg.Go(func() {
		for s := range 5 {
			var targets []string
			for i := range 8 {
				targets = append(targets, fmt.Sprintf("http://192.0.2.%d/hook", 8*s+i+1))
			}
			a := submit(fmt.Sprintf("g%d", s), targets)
			switch {
			case a.ok():
				got.note("notify targets", true)
			case a.status == http.StatusForbidden && a.err.Code == wire.CodeQuotaExceeded && strings.Contains(a.err.Error, "max_notify_targets"):
				got.note("notify targets refused", true)
			default:
				t.Errorf("a submission of 8 targets: %v", a)
			}
		}
	})
	return func() {
		t.Helper()
		if n := got.get("inner webhooks refused"); n != len(inner) {
			t.Errorf("%d of %d webhooks to inner addresses refused", n, len(inner))
		}
		if ok, refused := got.get("notify targets"), got.get("notify targets refused"); ok != 4 || refused != 1 {
			t.Errorf("submissions of 8 targets: %d accepted, %d refused past max_notify_targets; want 4 and 1", ok, refused)
		}
	}
}

// TestAttacksAtOnceStandaloneMemory runs the real standalone server under
// every attack of issue 26 at once: the WebDAV attacks of
// TestDAVAttacksStandaloneMemory (locks, PROPFINDs of infinite depth, wide
// listings, 2,000 upload collections, MKCOL until the quota) together with
// 105 MB pool/missing bodies, 16 MiB control bodies, one user's long polls
// past max_user_long_polls, webhooks to inner addresses and past
// max_notify_targets, and bulk download bodies of 16 MiB and 96 bulk
// downloads never read (bulkAttacks). Every attack is refused with its documented code,
// and the server's resident memory stays under 100 MB.
func TestAttacksAtOnceStandaloneMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the real server")
	}
	// Beside the other parallel tests: the server under attack is a
	// process of its own, whose memory alone is measured, and the test
	// mostly waits on it.
	t.Parallel()
	start := time.Now()
	v := newEnv(t)
	for _, u := range []string{"carol", "dave", "erin", "frank"} {
		v.addUser(u)
	}
	v.bigFinishedGroup("frank", "big", 2, 1<<20)
	prepareDAVAttacks(t, v)
	r, pid := standalone(t, v, davAttackSettings)
	r.mustStatus(207, "PROPFIND", davA, "", "Depth", "1")
	rss0, peak0 := procMemMB(t, pid)

	var wg sync.WaitGroup
	var got tally
	stopPolls := longPollAttack(t, r, &got)
	checks := []func(){
		davAttacks(t, r, &wg, &got),
		bodyAttacks(t, r, &wg, &got),
		notifyAttacks(t, r, &wg, &got),
		bulkAttacks(t, r, &wg, &got),
	}
	wg.Wait()
	stopPolls()
	rss1, peak1 := procMemMB(t, pid)
	t.Logf("standalone server: resident %.1f MiB before the attacks (peak %.1f), %.1f MiB after (peak %.1f), in %v; tally: %v",
		rss0, peak0, rss1, peak1, time.Since(start).Round(100*time.Millisecond), &got)
	if peak1 > 100 {
		t.Errorf("the server's resident memory reached %.1f MiB", peak1)
	}
	for _, check := range checks {
		check()
	}
}
