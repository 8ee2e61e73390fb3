package engine_test

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/pool"
	"github.com/rboinc/rboinc/workflow/wire"
)

// leaveUnindexed puts content into the pool and stages it, without a row
// in the pool's index: what a server killed (kill -9) between an inline
// content's write and the recording of its row leaves.
func (f *fixture) leaveUnindexed(t *testing.T, content string) string {
	t.Helper()
	sum, n, err := f.e.Pool.WriteContent(strings.NewReader(content))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.Pool.Stage(f.e.Proj, sum, n); err != nil {
		t.Fatal(err)
	}
	return sum
}

// poolRows counts content sum's rows in the pool's index and its owners.
func (f *fixture) poolRows(t *testing.T, sum string) (pool, owners int) {
	t.Helper()
	db := f.e.State().SQL()
	if err := db.QueryRowContext(f.ctx, `SELECT COUNT(*) FROM pool WHERE md5 = ?`, sum).Scan(&pool); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(f.ctx, `SELECT COUNT(*) FROM pool_owners WHERE md5 = ?`, sum).Scan(&owners); err != nil {
		t.Fatal(err)
	}
	return pool, owners
}

// checkGone fails unless nothing of content sum is left: its file, its
// download link, its rows.
func (f *fixture) checkGone(t *testing.T, sum, when string) {
	t.Helper()
	link := f.e.Proj.DownloadPath(pool.PhysicalName(sum))
	_, lerr := os.Stat(link)
	p, o := f.poolRows(t, sum)
	if f.e.Pool.Has(sum) || lerr == nil || p != 0 || o != 0 {
		t.Fatalf("%s: content %s left: in the pool directory %v, download link %v, %d pool rows, %d owner rows",
			when, sum, f.e.Pool.Has(sum), lerr == nil, p, o)
	}
}

// The soak's leftover: a request killed after writing and staging an
// inline content, before its row; the client sends it again, the pool
// directory has it (its bytes are only checked), and the chains record the
// user as its owner. Once everything is purged, collection must leave
// nothing of it: no file, no link, no owner row.
func TestPoolContentLeftByKilledRequestIsCollected(t *testing.T) {
	f := newFixture(t)
	req, contents := inlineRequest("g", 3)
	sum := f.leaveUnindexed(t, contents[2])
	if _, err := f.e.SubmitInline(f.ctx, f.u, req, strings.NewReader(strings.Join(contents, ""))); err != nil {
		t.Fatal(err)
	}
	if p, o := f.poolRows(t, sum); p != 1 || o != 1 {
		t.Errorf("a content the submission uses: %d pool rows, %d owner rows; want 1 and 1", p, o)
	}
	if _, err := f.e.Purge(f.ctx, f.u, wire.ChainRef{Group: "g"}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.Collect(f.ctx, -time.Hour); err != nil {
		t.Fatal(err)
	}
	f.checkGone(t, sum, "after purging everything")
}

// A content left in the pool directory with no row and that nothing uses
// (the killed request was not sent again) is collected once it is older
// than the grace, and not before: a request in flight writes its contents
// before it records them.
func TestPoolContentWithoutRowIsCollectedAfterGrace(t *testing.T) {
	f := newFixture(t)
	engine.SetUnindexedMinAge(t, 0)
	sum := f.leaveUnindexed(t, "left by a killed request\n")
	if _, err := f.e.Collect(f.ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	if !f.e.Pool.Has(sum) {
		t.Fatal("a content younger than the grace was collected (a request in flight may be about to record it)")
	}
	if _, err := f.e.Collect(f.ctx, -time.Hour); err != nil {
		t.Fatal(err)
	}
	f.checkGone(t, sum, "after its grace")
}

// An owner row of a content that has no pool row (the content was
// collected while a submission recorded its user as owner) and that
// nothing uses goes at the next collection; one a live chain uses stays.
func TestOwnerRowWithoutPoolRowIsCollected(t *testing.T) {
	f := newFixture(t)
	const stray = "0123456789abcdef0123456789abcdef"
	if _, err := f.e.State().SQL().ExecContext(f.ctx, `INSERT INTO pool_owners(user_id, md5) VALUES (?, ?)`, f.u.ID, stray); err != nil {
		t.Fatal(err)
	}
	wu0 := f.submit("g", "c1", 1).Chains[0].FirstWU
	_, s0, _ := f.e.State().StepByWU(f.ctx, wu0)
	used := s0.Inputs[1]
	if _, err := f.e.State().SQL().ExecContext(f.ctx, `DELETE FROM pool WHERE md5 = ?`, used); err != nil {
		t.Fatal(err)
	}
	if _, err := f.e.Collect(f.ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, o := f.poolRows(t, stray); o != 0 {
		t.Errorf("%d owner rows of a content not pooled and not used", o)
	}
	if _, o := f.poolRows(t, used); o != 1 {
		t.Errorf("%d owner rows of a content a live chain uses, want 1", o)
	}
}

// Submissions of the same contents (some cut short by their client),
// purges and collections, all at once: once everything is purged and
// collected, nothing of the contents is left.
func TestPoolContentsConcurrentWithCollection(t *testing.T) {
	f := newFixture(t)
	engine.SetUnindexedMinAge(t, 0)
	const submitters, rounds = 3, 8
	contents := []string{"shared 1\n", "shared 2\n", "shared 3\n"}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			// A collection that spares nothing for age: what a submission
			// in flight holds is protected only by being in use or touched.
			f.e.Collect(f.ctx, -time.Hour)
		}
	}()
	var sub sync.WaitGroup
	var ok atomic.Int32
	for s := range submitters {
		sub.Add(1)
		go func() {
			defer sub.Done()
			for r := range rounds {
				group := fmt.Sprintf("g%d_%d", s, r)
				req := wire.SubmitRequest{Queue: "langevin", Group: group, Options: wire.Options{NumSteps: 1}}
				own := fmt.Sprintf("%d %d 0\n", s, r)
				body := contents[r%3] + contents[(r+1)%3] + own
				for _, c := range []string{contents[r%3], contents[(r+1)%3], own} {
					req.Inline = append(req.Inline, ref(c))
				}
				req.Chains = []wire.ChainSpec{{Name: "c", Files: map[string]wire.FileRef{"coor_file": ref(own), "vel_file": ref(contents[r%3])}},
					{Name: "d", Files: map[string]wire.FileRef{"coor_file": ref(contents[(r+1)%3]), "vel_file": ref(contents[r%3])}}}
				if r%4 == 3 {
					body = body[:len(body)-2] // the client went away
				}
				// Errors are expected: a collection that spares nothing
				// may take a content from under a submission.
				if _, err := f.e.SubmitInline(f.ctx, f.u, req, strings.NewReader(body)); err == nil {
					ok.Add(1)
				} else if r%4 != 3 {
					t.Log(err)
				}
				f.e.Purge(f.ctx, f.u, wire.ChainRef{Group: group})
			}
		}()
	}
	sub.Wait()
	if ok.Load() == 0 {
		t.Fatal("no submission went through")
	}
	close(stop)
	wg.Wait()
	if _, err := f.e.Collect(f.ctx, -time.Hour); err != nil {
		t.Fatal(err)
	}
	for s := range submitters {
		for r := range rounds {
			f.checkGone(t, ref(fmt.Sprintf("%d %d 0\n", s, r)).MD5, "after purging everything")
		}
	}
	for _, c := range contents {
		f.checkGone(t, ref(c).MD5, "after purging everything")
	}
}

// A submission by upload that finds a content of its user in the pool
// directory without a row (what a killed request leaves, its retry having
// made the user its owner) and so neither ingests nor records it marks it
// as wanted: collection of files no row names, running before the chains
// are recorded, would otherwise remove the file they are about to use.
func TestSubmissionKeepsUnindexedContentItUses(t *testing.T) {
	f := newFixture(t)
	coor, vel := "1 2 3\n", "0 0 0\n"
	var refs []wire.FileRef
	for _, c := range []string{coor, vel} {
		sum := f.leaveUnindexed(t, c)
		if _, err := f.e.State().SQL().ExecContext(f.ctx, `INSERT INTO pool_owners(user_id, md5) VALUES (?, ?)`, f.u.ID, sum); err != nil {
			t.Fatal(err)
		}
		refs = append(refs, wire.FileRef{MD5: sum, Size: int64(len(c))})
	}
	time.Sleep(20 * time.Millisecond)
	mid := time.Now()
	time.Sleep(20 * time.Millisecond)
	if _, err := f.e.Submit(f.ctx, f.u, wire.SubmitRequest{Queue: "langevin", Group: "g",
		Options: wire.Options{NumSteps: 1},
		Chains:  []wire.ChainSpec{{Name: "c", Files: map[string]wire.FileRef{"coor_file": refs[0], "vel_file": refs[1]}}}}); err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		if f.e.Pool.AgedSince(r.MD5, mid) {
			t.Errorf("content %s used by the submission left untouched: collection may remove it before the chains are recorded", r.MD5)
		}
	}
}

// gate is a reader that blocks until open is closed, then ends: a client
// that stalls in the middle of its request body.
type gate struct{ open chan struct{} }

func (g gate) Read([]byte) (int, error) { <-g.open; return 0, io.EOF }

// An inline request whose body takes longer than collection's minimum age
// (a big submission over a slow link) keeps the contents it wrote early:
// collection of files no row names, running while the rest of the body
// comes in, must not remove them before the chains record them.
func TestSlowInlineRequestKeepsContentsItWrote(t *testing.T) {
	f := newFixture(t)
	engine.SetUnindexedMinAge(t, 400*time.Millisecond)
	req, contents := inlineRequest("g", 2)
	early := md5hex(contents[0])
	g := gate{open: make(chan struct{})}
	body := io.MultiReader(strings.NewReader(contents[0]+contents[1]), g, strings.NewReader(contents[2]))
	done := make(chan error, 1)
	go func() {
		_, err := f.e.SubmitInline(f.ctx, f.u, req, body)
		done <- err
	}()
	for deadline := time.Now().Add(10 * time.Second); !f.e.Pool.Has(early); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first inline content never reached the pool")
		}
	}
	time.Sleep(time.Second) // the body stalls past the minimum age
	if _, err := f.e.Collect(f.ctx, 0); err != nil {
		t.Fatal(err)
	}
	close(g.open)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !f.e.Pool.Has(early) {
		t.Fatalf("content %s, written early by a request still reading its body, was collected before the request recorded it", early)
	}
}

func md5hex(s string) string {
	h := md5.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}
