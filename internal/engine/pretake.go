package engine

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/pool"
)

// pretakeWorkers take a batch's outputs out of the upload hierarchy while
// the assimilator records the batch's steps one after the other: a take is
// a few system calls and a read, work for the second core.
const pretakeWorkers = 2

// pretakes are the outputs of a batch of work units, taken ahead of their
// records (see Assimilator.pretake). A take that no record used is not
// undone: with two hosts' assimilators on one results area (one state in
// MariaDB), the file a take made may be another assimilator's recorded
// result by now (its take of the same output replaced the file with the
// same content, and its record committed, outside this pass's knowing),
// and no removal by name can tell. What no record uses is taken again by
// the next pass, or removed by the orphan sweeper once no waiting step
// nor result refers to it (removeOrphanResults).
type pretakes struct {
	byWU     map[int64]*wuOutputs
	wg       sync.WaitGroup
	finished bool
	held     atomic.Int64 // descriptors of takes kept open (heldPerBatch)
}

// heldPerBatch bounds the taken outputs' descriptors a batch keeps open
// from their take to the wait for their data, which then opens no file
// again (two batches' takes are alive at once). Beyond it a take closes
// its file, and the wait opens it by name.
var heldPerBatch = func() int64 {
	var rl syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl) != nil {
		return 0
	}
	return int64(min(rl.Cur/8, 2048))
}()

// wuOutputs is one work unit's canonical outputs, read from its result's
// XML, and the takes of those its step waits for; ready once done is
// closed.
type wuOutputs struct {
	done     chan struct{}
	outs     []boincdb.OutputFile
	parseErr error
	takes    map[string]*pretaken // by upload path
}

type pretaken struct {
	dst  string
	sum  string
	size int64
	err  error
	used bool     // a record refers to it
	f    *os.File // dst, open, until handed to the record (hand) or closed by finish
}

// pretake starts taking the outputs of the work units of wus that the
// batch will record: those with a canonical result whose step waits for
// its outputs. Their results files are the ones the records would make
// (results/USER_GROUP/<work unit>_<k>), so a record finds its take done.
func (a *Assimilator) pretake(ctx context.Context, wus []boincdb.ReadyWU) *pretakes {
	p := &pretakes{byWU: map[int64]*wuOutputs{}}
	now := time.Now()
	var todo []boincdb.ReadyWU
	var names []string
	for _, w := range wus {
		if d, ok := a.deferred[w.ID]; (ok && now.Before(d.next)) || w.ErrorMask != 0 || w.Canonical == nil {
			continue
		}
		todo = append(todo, w)
		names = append(names, w.Name)
	}
	if len(todo) == 0 {
		return p
	}
	states, err := a.E.db.StepStates(ctx, names)
	if err != nil {
		a.Log.Debug("outputs are taken one work unit at a time", "err", err)
		states = nil
	}
	dirs := map[string]bool{}
	jobs := make([]pretakeJob, len(todo))
	for i, w := range todo {
		wo := &wuOutputs{done: make(chan struct{})}
		p.byWU[w.ID] = wo
		jobs[i] = pretakeJob{w: w, out: wo}
		st, ok := states[w.Name]
		if !ok || st.Step == "done" || st.Step == "failed" || st.Chain == "purged" {
			continue // the record takes nothing, or looks at it alone
		}
		pw, err := naming.ParseWU(w.Name)
		if err != nil {
			continue
		}
		dir := a.E.resultsDir(pw.User, pw.Group)
		if ok, seen := dirs[dir]; !seen {
			ok = os.MkdirAll(dir, 0o755) == nil
			dirs[dir] = ok
		}
		if dirs[dir] {
			jobs[i].dir = dir
		}
	}
	var next atomic.Int64
	for range min(pretakeWorkers, len(jobs)) {
		p.wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(jobs) {
					return
				}
				jobs[i].run(ctx, a.E, p)
			}
		})
	}
	return p
}

// errResultsDirGone is a take ahead that found no results directory: not
// an output missing from the upload hierarchy.
var errResultsDirGone = errors.New("the results directory was removed during the take")

type pretakeJob struct {
	w   boincdb.ReadyWU
	dir string // results directory; "" when nothing is to be taken
	out *wuOutputs
}

func (j pretakeJob) run(ctx context.Context, e *Engine, p *pretakes) {
	defer close(j.out.done)
	j.out.outs, j.out.parseErr = boincdb.OutputFiles(j.w.Canonical.XMLDocIn)
	if j.out.parseErr != nil || j.dir == "" || ctx.Err() != nil {
		return
	}
	j.out.takes = make(map[string]*pretaken, len(j.out.outs))
	for _, o := range j.out.outs {
		po, err := naming.ParseOutput(filepath.Base(o.Name))
		if err != nil || po.WU != j.w.Name {
			continue // not its own output: the record sets the work unit aside
		}
		src := e.Proj.UploadPath(o.Name)
		t := &pretaken{dst: filepath.Join(j.dir, naming.ResultFile(j.w.Name, po.Index))}
		if p.held.Add(1) <= heldPerBatch {
			t.sum, t.size, _, t.f, t.err = pool.TakeOutputHeld(src, t.dst)
		} else {
			t.sum, t.size, _, t.err = pool.TakeOutputStarted(src, t.dst)
		}
		if errors.Is(t.err, fs.ErrNotExist) {
			if _, err := os.Lstat(src); err == nil {
				// The results directory went (a purge of another chain of
				// the group removes it when empty), not the output: the
				// record takes it itself.
				t.err = errResultsDirGone
			}
		}
		j.out.takes[src] = t
	}
}

// outputs waits for work unit id's outputs; nil when it was not among
// those taken ahead (the record reads and takes them itself).
func (p *pretakes) outputs(id int64) *wuOutputs {
	if p == nil {
		return nil
	}
	wo := p.byWU[id]
	if wo != nil {
		<-wo.done
	}
	return wo
}

// take is the take of upload path src into dst, when one was made ahead.
func (wo *wuOutputs) take(src, dst string) *pretaken {
	if wo == nil {
		return nil
	}
	if t := wo.takes[src]; t != nil && t.dst == dst {
		return t
	}
	return nil
}

// Took is advance.Pretaken's: the take of src into dst made ahead, marked
// used by the record that asks.
func (wo *wuOutputs) Took(src, dst string) (sum string, size int64, missing, ok bool) {
	t := wo.take(src, dst)
	if t == nil {
		return "", 0, false, false
	}
	switch {
	case t.err == nil:
		t.used = true
		return t.sum, t.size, false, true
	case errors.Is(t.err, fs.ErrNotExist):
		return "", 0, true, true
	}
	return "", 0, false, false
}

// hand gives the record that used the take of src into dst its open
// descriptor, for the wait for its data; nil when none is held.
func (wo *wuOutputs) hand(src, dst string) *os.File {
	t := wo.take(src, dst)
	if t == nil || !t.used {
		return nil
	}
	f := t.f
	t.f = nil
	return f
}

// missing tells whether the upload path src was found missing by its
// take; known is false when no take tried it.
func (wo *wuOutputs) missing(src string) (missing, known bool) {
	if wo == nil {
		return false, false
	}
	t := wo.takes[src]
	if t == nil {
		return false, false
	}
	if t.err == nil {
		return false, true
	}
	if errors.Is(t.err, fs.ErrNotExist) {
		return true, true
	}
	return false, false
}

// finish waits for the workers and closes the descriptors no record was
// handed; again, or on nil, it does nothing. It removes no file, not even
// one its own take made that no record used (a work unit deferred, a batch
// stopped by an error): see pretakes.
func (p *pretakes) finish() {
	if p == nil || p.finished {
		return
	}
	p.finished = true
	p.wg.Wait()
	for _, wo := range p.byWU {
		for _, t := range wo.takes {
			if t.f != nil {
				t.f.Close()
				t.f = nil
			}
		}
	}
}
