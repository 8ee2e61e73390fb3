package advance

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/rboinc/rboinc/internal/hookargs"
	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/spool"
)

// These tests hold Run's own promises (fates, the durability point, what
// each door does) against a Chains that writes down what it is asked. The
// engine's tests run every door against the real engine, BOINC stand-in
// and state database (internal/engine: TestHook*, TestSpool*,
// TestAssimilator*, and the tests that advance chains with Lone).

// journal is a Chains that records its calls in order; a record of a work
// unit named in fail fails, one named in unplaced is unplaced.
type journal struct {
	root     string
	calls    []string
	fail     map[string]error
	unplaced map[string]bool
	syncErr  error
	durable  []bool // per Record: taken was nil
	inTx     bool
}

func (j *journal) Root() string      { return j.root }
func (j *journal) Log() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func (j *journal) Record(ctx context.Context, it *Item, taken *Taken) error {
	j.calls = append(j.calls, "record "+it.Call.WUName)
	j.durable = append(j.durable, taken == nil)
	if err := j.fail[it.Call.WUName]; err != nil {
		return err
	}
	if j.unplaced[it.Call.WUName] {
		w, err := naming.ParseWU(it.Call.WUName)
		if err != nil {
			return err
		}
		return NoStep(w)
	}
	return nil
}

func (j *journal) NoteUnplaced(ctx context.Context, u *Unplaced, entry string) error {
	j.calls = append(j.calls, "unplaced "+u.WU.String())
	return nil
}

// ReadAhead: the journal's records read nothing ahead.
func (j *journal) ReadAhead(context.Context, []string) error { return nil }

func (j *journal) InTransaction(ctx context.Context, fn func(context.Context) error) error {
	j.inTx = true
	defer func() { j.inTx = false }()
	j.calls = append(j.calls, "begin")
	err := fn(ctx)
	j.calls = append(j.calls, "commit")
	return err
}

func (j *journal) Sync() error {
	j.calls = append(j.calls, "sync")
	return j.syncErr
}

func (j *journal) CreateNext(ctx context.Context) error {
	j.calls = append(j.calls, "create")
	return nil
}

const (
	wuA = "a-A_g-0-2-RND0001"
	wuB = "b-A_g-0-2-RND0002"
	wuC = "c-A_g-0-2-RND0003"
)

func batchOf(door Door, wus ...string) Batch {
	b := Batch{Door: door}
	for _, w := range wus {
		b.Items = append(b.Items, &Item{Call: hookargs.HookCall{WUName: w}})
	}
	return b
}

func fates(b Batch) []Fate {
	var out []Fate
	for _, it := range b.Items {
		out = append(out, it.Fate)
	}
	return out
}

func TestRunAssimilatorBatchIsOneTransactionThenSyncThenCreate(t *testing.T) {
	j := &journal{root: t.TempDir()}
	b := batchOf(AssimilatorDoor, wuA, wuB)
	if err := Run(t.Context(), j, b); err != nil {
		t.Fatal(err)
	}
	want := []string{"begin", "record " + wuA, "record " + wuB, "commit", "sync", "create"}
	if !slices.Equal(j.calls, want) {
		t.Fatalf("calls %q, want %q", j.calls, want)
	}
	if !slices.Equal(fates(b), []Fate{Recorded, Recorded}) || slices.Contains(j.durable, true) {
		t.Fatalf("fates %v, durable %v", fates(b), j.durable)
	}
}

// TestRunCallsRecordedBetweenCommitAndSync: a batch's Recorded hook (the
// native assimilator starts the next batch's takes there) runs once its
// records are committed and before they are made durable and the next
// steps created; also when a record failed.
func TestRunCallsRecordedBetweenCommitAndSync(t *testing.T) {
	for _, fail := range []bool{false, true} {
		j := &journal{root: t.TempDir()}
		if fail {
			j.fail = map[string]error{wuB: errors.New("disk gone")}
		}
		b := batchOf(AssimilatorDoor, wuA, wuB)
		b.Recorded = func() { j.calls = append(j.calls, "recorded") }
		Run(t.Context(), j, b)
		want := []string{"begin", "record " + wuA, "record " + wuB, "commit", "recorded", "sync", "create"}
		if !slices.Equal(j.calls, want) {
			t.Errorf("record failed %v: calls %q, want %q", fail, j.calls, want)
		}
	}
}

func TestRunStopsAtTheFirstFailureKeepingWhatCameBefore(t *testing.T) {
	bad := errors.New("disk gone")
	j := &journal{root: t.TempDir(), fail: map[string]error{wuB: bad}}
	b := batchOf(AssimilatorDoor, wuA, wuB, wuC)
	err := Run(t.Context(), j, b)
	if !errors.Is(err, bad) {
		t.Fatalf("err %v, want %v", err, bad)
	}
	if !slices.Equal(fates(b), []Fate{Recorded, Failed, Waiting}) {
		t.Fatalf("fates %v", fates(b))
	}
	if slices.Contains(j.calls, "record "+wuC) || !slices.Contains(j.calls, "sync") {
		t.Fatalf("calls %q: the item after the failure was recorded, or the one before not made durable", j.calls)
	}
}

func TestRunForgetsNothingWhenTheSyncFails(t *testing.T) {
	j := &journal{root: t.TempDir(), syncErr: errors.New("fsync: EIO")}
	b := batchOf(AssimilatorDoor, wuA)
	if err := Run(t.Context(), j, b); err == nil {
		t.Fatal("a failed sync was not reported")
	}
	if b.Items[0].Fate != Waiting || slices.Contains(j.calls, "create") {
		t.Fatalf("fate %v, calls %q: a work unit not durable may be forgotten", b.Items[0].Fate, j.calls)
	}
}

func TestRunPrepareLeavesItemsForLater(t *testing.T) {
	j := &journal{root: t.TempDir()}
	b := batchOf(AssimilatorDoor, wuA, wuB)
	b.Items[0].Prepare = func(context.Context, *Item) error { return ErrLater }
	b.Items[1].Call = hookargs.HookCall{}
	b.Items[1].Prepare = func(_ context.Context, it *Item) error {
		it.Call.WUName = wuB
		return nil
	}
	if err := Run(t.Context(), j, b); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(fates(b), []Fate{Later, Recorded}) || slices.Contains(j.calls, "record "+wuA) || !slices.Contains(j.calls, "record "+wuB) {
		t.Fatalf("fates %v, calls %q", fates(b), j.calls)
	}
}

// A work unit from BOINC's upload hierarchy (the assimilator's door) that
// rboinc cannot place goes aside in the spool, outputs and all, before
// BOINC forgets it.
func TestRunSetsAsideAWorkUnitItCannotPlace(t *testing.T) {
	root := t.TempDir()
	j := &journal{root: root, unplaced: map[string]bool{wuA: true}}
	b := batchOf(AssimilatorDoor, wuA)
	if err := Run(t.Context(), j, b); err != nil {
		t.Fatal(err)
	}
	if b.Items[0].Fate != SetAside || !slices.Contains(j.calls, "unplaced "+wuA) {
		t.Fatalf("fate %v, calls %q", b.Items[0].Fate, j.calls)
	}
	kept, _ := filepath.Glob(filepath.Join(spool.Dir(root), spool.UnplacedPrefix+"*"))
	if len(kept) != 1 {
		t.Fatalf("entries set aside: %v", kept)
	}
}

func TestIntakeSpoolRemovesRecordedEntriesOnly(t *testing.T) {
	root := t.TempDir()
	var names []string
	for _, w := range []string{wuA, wuB, wuC} {
		n, err := spool.Write(root, hookargs.HookCall{WUName: w})
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	bad := errors.New("database gone")
	j := &journal{root: root, unplaced: map[string]bool{wuA: true}, fail: map[string]error{wuC: bad}}
	n, err := IntakeSpool(t.Context(), j)
	if n != 1 || !errors.Is(err, bad) {
		t.Fatalf("IntakeSpool = %d, %v; want 1, %v", n, err, bad)
	}
	if slices.Contains(j.calls, "begin") || slices.Contains(j.calls, "create") || slices.Contains(j.durable, false) {
		t.Fatalf("calls %q, durable %v: the spool's records commit one by one, take durable outputs and leave creation to the creator", j.calls, j.durable)
	}
	left, err := spool.Entries(root)
	if err != nil || !slices.Equal(left, names[2:]) {
		t.Fatalf("entries left %v (%v), want the failed one %v", left, err, names[2:])
	}
	if _, err := os.Stat(filepath.Join(spool.Dir(root), spool.UnplacedPrefix+names[0])); err != nil {
		t.Fatalf("the unplaced entry was not set aside: %v", err)
	}
}

// Only a malformed entry is set aside; one that fails to read for a
// passing reason (EMFILE here) stays for the next pass, and the others are
// recorded all the same.
func TestIntakeSpoolLeavesAnEntryThatFailsToReadNow(t *testing.T) {
	root := t.TempDir()
	var names []string
	for _, w := range []string{wuA, wuB, wuC} {
		n, err := spool.Write(root, hookargs.HookCall{WUName: w})
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	torn := filepath.Join(spool.Dir(root), "0-torn")
	if err := os.MkdirAll(torn, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(torn, "call"), []byte("rboinc-hook-call 1\nwu_na"), 0o644); err != nil {
		t.Fatal(err)
	}
	read := readEntry
	t.Cleanup(func() { readEntry = read })
	readEntry = func(root, name string) (hookargs.HookCall, error) {
		if name == names[1] {
			return hookargs.HookCall{}, &os.PathError{Op: "open", Path: name, Err: syscall.EMFILE}
		}
		return read(root, name)
	}
	j := &journal{root: root}
	n, err := IntakeSpool(t.Context(), j)
	if n != 2 || !errors.Is(err, syscall.EMFILE) {
		t.Fatalf("IntakeSpool = %d, %v; want 2 and the read error", n, err)
	}
	left, _ := spool.Entries(root)
	if !slices.Equal(left, names[1:2]) {
		t.Fatalf("entries left %v, want %v", left, names[1:2])
	}
	if _, err := os.Stat(filepath.Join(spool.Dir(root), ".bad-"+names[1])); err == nil {
		t.Fatal("an entry that failed to read now was set aside")
	}
	if _, err := os.Stat(filepath.Join(spool.Dir(root), ".bad-0-torn")); err != nil {
		t.Fatalf("the malformed entry was not set aside: %v", err)
	}
	readEntry = read
	if n, err := IntakeSpool(t.Context(), j); n != 1 || err != nil {
		t.Fatalf("next pass: IntakeSpool = %d, %v; want the entry left recorded", n, err)
	}
}
