package advance

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/rboinc/rboinc/internal/fsync"
	"github.com/rboinc/rboinc/internal/hookargs"
	"github.com/rboinc/rboinc/internal/spool"
)

// Batch is finished work units from one door.
type Batch struct {
	Door  Door
	Items []*Item
	// Recorded, when set, is called once the records are written (their
	// transaction committed), before they are made durable and the next
	// steps created: a door starts there what can run beside that tail
	// (the native assimilator, the next batch's takes).
	Recorded func()
}

// Item is one finished work unit.
type Item struct {
	// Call is the work unit as the hook would be called for it. With
	// Prepare set, Call.WUName may be set alone beforehand (the batch's
	// steps are read ahead by it).
	Call hookargs.HookCall
	// Entry is the spool entry that holds the call (SpoolDoor only).
	Entry string
	// Prepare, when set, is called just before the item is recorded and
	// completes Call (the native assimilator reads a work unit's outputs
	// while the items before it are recorded). It returns ErrLater to
	// leave the item for a later pass.
	Prepare func(ctx context.Context, it *Item) error
	// Pretaken is the outputs a door took ahead (the native assimilator);
	// nil when the record takes them itself.
	Pretaken Pretaken
	// Fate is what Run did with the item, set when Run returns.
	Fate Fate
}

// Pretaken is outputs taken ahead of their record.
type Pretaken interface {
	// Took is the take of output src into the results file dst, when one
	// was made: missing when src was not there. ok is false when no take
	// was made or it failed otherwise; the record then takes src itself.
	Took(src, dst string) (sum string, size int64, missing, ok bool)
}

// Fate is what became of an item.
type Fate int

const (
	// Waiting: not handled (the batch stopped before it, or what was
	// handled is not durable); the door keeps it for a later pass.
	Waiting Fate = iota
	// Recorded: its chain moved on, durably; the door may forget it.
	Recorded
	// SetAside: rboinc cannot place it; its call and outputs are kept in
	// the spool for the administrator, durably; the door may forget it.
	SetAside
	// Later: Prepare left it for a later pass.
	Later
	// Failed: recording it failed with the error Run returned.
	Failed
)

// ErrLater is returned by Item.Prepare to leave an item for a later pass.
var ErrLater = errors.New("left for a later pass")

// Taken lists the outputs a batch took out of BOINC's upload hierarchy,
// their writes started: Run waits for them all at once.
type Taken struct {
	Paths []string
	// Open holds, by path, the descriptors of taken files kept open since
	// their take (pool.TakeOutputHeld): the wait uses them instead of
	// opening each file again. Run closes them.
	Open map[string]*os.File
}

// Hold adds a taken file's open descriptor (see Open).
func (t *Taken) Hold(path string, f *os.File) {
	if t.Open == nil {
		t.Open = map[string]*os.File{}
	}
	if old := t.Open[path]; old != nil {
		old.Close()
	}
	t.Open[path] = f
}

// close closes the descriptors held.
func (t *Taken) close() {
	if t == nil {
		return
	}
	for _, f := range t.Open {
		f.Close()
	}
	t.Open = nil
}

// Chains is rboinc's state as the advance path sees it: the engine
// provides it (engine.Engine.Chains).
type Chains interface {
	// Root is the server root.
	Root() string
	// Log is where the records are logged.
	Log() *slog.Logger
	// Record moves one finished work unit's chain on: its outputs into
	// the results area, its step done, the next step pending or the chain
	// ended. taken is nil when the outputs are durable where they lie;
	// otherwise Record appends what it takes, its writes started. It
	// returns an *Unplaced when the call names one of rboinc's work units
	// but cannot be placed; any other error means the state database or
	// the disk failed.
	Record(ctx context.Context, it *Item, taken *Taken) error
	// NoteUnplaced marks the chain an unplaced call names as needing
	// attention, saying where its outputs are kept (spool entry entry).
	NoteUnplaced(ctx context.Context, u *Unplaced, entry string) error
	// InTransaction runs fn in one transaction of the state database:
	// every record made with the context fn gets joins it (store.Batch
	// carries the transaction in the context), and it commits when fn
	// returns nil.
	InTransaction(ctx context.Context, fn func(ctx context.Context) error) error
	// ReadAhead reads, with a context from InTransaction, the steps of
	// work units wus at once, for their records to come (an optimisation:
	// a record reads what was not read ahead itself).
	ReadAhead(ctx context.Context, wus []string) error
	// Sync makes the records durable.
	Sync() error
	// CreateNext has the pending steps' work units created: by the process
	// holding the creator lock, or by this one now.
	CreateNext(ctx context.Context) error
}

// Run is the advance path: it records the batch's items in order, sets
// aside those rboinc cannot place, makes what it took and recorded
// durable with one sync, and, as the door wants, has the next steps' work
// units created. Each item's Fate says what became of it. Run is
// idempotent by work unit: a work unit recorded already is not recorded
// twice, so a door that crashed before it forgot its items hands them in
// again. It stops at the first item whose record fails and returns that
// error (the item's Fate is Failed): the state database or the disk
// failed, and BOINC should keep the outputs and retry; what was handled
// before it is durable (Recorded, SetAside) unless the error says the
// batch's durability point failed, when nothing is.
func Run(ctx context.Context, chains Chains, b Batch) error {
	fates := make([]Fate, len(b.Items))
	var taken *Taken
	if !b.Door.outputsDurable() {
		taken = &Taken{}
		defer taken.close()
	}
	var failure error
	handle := func(ctx context.Context) error {
		wus := make([]string, 0, len(b.Items))
		for _, it := range b.Items {
			if it.Call.WUName != "" {
				wus = append(wus, it.Call.WUName)
			}
		}
		if err := chains.ReadAhead(ctx, wus); err != nil {
			chains.Log().Warn("reading the batch's steps ahead failed; each record reads its own", "err", err)
		}
		for i, it := range b.Items {
			if err := ctx.Err(); err != nil {
				failure = err
				return nil
			}
			if it.Prepare != nil {
				err := it.Prepare(ctx, it)
				if errors.Is(err, ErrLater) {
					fates[i] = Later
					continue
				}
				if err != nil {
					fates[i], failure = Failed, b.Door.failure(it, err)
					return nil
				}
			}
			fate, err := recordOne(ctx, chains, b.Door, it, taken)
			if err != nil {
				fates[i], failure = Failed, b.Door.failure(it, err)
				return nil // keep what was recorded before it
			}
			fates[i] = fate
		}
		return nil
	}
	var err error
	if b.Door.oneTransaction() {
		err = chains.InTransaction(ctx, handle)
	} else {
		err = handle(ctx)
	}
	if b.Recorded != nil {
		b.Recorded()
	}
	if err != nil {
		return errors.Join(failure, err)
	}
	handled := false
	for _, f := range fates {
		handled = handled || f == Recorded || f == SetAside
	}
	if !handled {
		setFates(b.Items, fates)
		return failure
	}
	// Nothing is forgotten by the door before what was recorded can
	// survive a power cut: BOINC deletes the outputs, the spool its entry.
	if taken != nil {
		if err := syncTaken(taken); err != nil {
			return errors.Join(failure, fmt.Errorf("making the taken outputs durable: %w", err))
		}
	}
	if err := chains.Sync(); err != nil {
		return errors.Join(failure, fmt.Errorf("making rboinc's records durable: %w", err))
	}
	setFates(b.Items, fates)
	if b.Door.createsNext() {
		if err := chains.CreateNext(ctx); err != nil {
			// The steps are recorded as pending: the creator, or the
			// assimilator's next pass, creates them.
			chains.Log().Error("creating the next steps failed; they stay pending and are retried", "err", err)
		}
	}
	return failure
}

func setFates(items []*Item, fates []Fate) {
	for i, it := range items {
		it.Fate = fates[i]
	}
}

// recordOne records one item; a call rboinc cannot place is set aside in
// the spool with its outputs.
func recordOne(ctx context.Context, chains Chains, door Door, it *Item, taken *Taken) (Fate, error) {
	err := chains.Record(ctx, it, taken)
	var up *Unplaced
	if !errors.As(err, &up) {
		if err != nil {
			return Failed, err
		}
		return Recorded, nil
	}
	root := chains.Root()
	entry := it.Entry
	if door == SpoolDoor {
		err = spool.SetAsideUnplaced(root, entry, up.Error())
	} else {
		// BOINC forgets the work unit once the door lets it go: the
		// outputs go aside for the administrator first.
		entry, err = spool.WriteUnplaced(root, it.Call, up.Error())
	}
	if err != nil {
		return Failed, err
	}
	if err := chains.NoteUnplaced(ctx, up, entry); err != nil {
		return Failed, err
	}
	return SetAside, nil
}

// syncWaiters wait for the taken outputs' data beside each other.
const syncWaiters = 4

// syncTaken waits for the data of the taken files (their writes were
// started as they were taken), then commits their names with one barrier
// per directory.
func syncTaken(taken *Taken) error {
	paths := taken.Paths
	// The waits are for the disk, not the processor: a few at a time
	// overlap their writes' latencies.
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for part := range slices.Chunk(paths, max(64, (len(paths)+syncWaiters-1)/syncWaiters)) {
		wg.Go(func() {
			for _, p := range part {
				var err error
				if f := taken.Open[p]; f != nil {
					err = fsync.Data(f) // closed by Run
				} else {
					err = fsync.DataPath(p)
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, fmt.Errorf("writing %s to disk: %w", p, err))
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	dirs := map[string]bool{}
	for _, p := range paths {
		dirs[filepath.Dir(p)] = true
	}
	for d := range dirs {
		if err := fsync.Barrier(d); err != nil {
			return err
		}
	}
	return nil
}
