package engine

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/internal/pool"
	"github.com/rboinc/rboinc/internal/store"
)

// The input check: every input of every work unit BOINC holds for a
// running or stopped chain must be in download/ as the pool's content, or its
// volunteers fail to download it. Others remove files there: BOINC's file
// deleter when a batch of BOINC's own job submission ends takes a file of
// the name it gave (rboinc's work units made before rboinc_ names used the
// same jf_ names), and an operator cleaning job files takes any. The
// creator runs the check every input_check_seconds and links what is
// missing or different again from the pool; doctor runs it without
// repairing.

// Input check intervals: the default, and the longest allowed (an input
// taken away is back within a minute).
const (
	defaultInputCheck = 30 * time.Second
	maxInputCheck     = time.Minute
)

// inputCheckEvery is input_check_seconds, bounded.
func (e *Engine) inputCheckEvery() time.Duration {
	d := defaultInputCheck
	if e.Cfg.InputCheckSeconds > 0 {
		d = time.Duration(e.Cfg.InputCheckSeconds * float64(time.Second))
	}
	return min(d, maxInputCheck)
}

// InputProblem is an input of a waiting work unit that was not as BOINC
// serves it.
type InputProblem struct {
	WU, File, MD5 string
	Problem       string // "missing", "different content", or what failed
	// LinkFailed: the pool has the content, but linking it again failed
	// (Problem says why).
	LinkFailed bool
}

// InputCheck is what one check found.
type InputCheck struct {
	WorkUnits int // work units BOINC holds for running and stopped chains, looked at
	Files     int // distinct inputs of rboinc's checked
	// Relinked were missing or different and are the pool's content again
	// (when repairing; otherwise those that need it).
	Relinked []InputProblem
	// Unrestorable are missing or different and the pool no longer has
	// their content (or linking them failed).
	Unrestorable []InputProblem
}

// CheckInputs checks the inputs of the work units BOINC holds for running
// and stopped chains (read from BOINC's database in batches) against the pool, and,
// with repair, links those missing or different again, atomically, and
// logs and counts each one it linked. Those it cannot restore it returns
// for the caller to report: they stay so from one check to the next.
func (e *Engine) CheckInputs(ctx context.Context, repair bool) (InputCheck, error) {
	var r InputCheck
	// A stopped chain's work unit in BOINC still runs to its end.
	wus, err := e.db.InBoinc(ctx)
	if err != nil {
		return r, err
	}
	if len(wus) == 0 {
		return r, nil
	}
	bdb, err := e.boincDB(ctx)
	if err != nil {
		return r, fmt.Errorf("checking the inputs of waiting work units: %w", err)
	}
	inputs, err := bdb.OpenInputs(ctx, wus)
	if err != nil {
		return r, fmt.Errorf("checking the inputs of waiting work units: %w", err)
	}
	r.WorkUnits = len(inputs)
	// Many work units share an input: each file is looked at once, and
	// its problem reported with the first work unit found to need it.
	seen := map[string]bool{}
	var gzipped []gzInput // the inputs served compressed, each with the first work unit found to need it
	seenGz := map[string]bool{}
	slices.Sort(wus)
	for _, wu := range wus {
		for _, f := range inputs[wu] {
			sum, ours := pool.ParsePhysicalName(f.Name)
			if ours && sum == f.MD5 && f.Gzipped && !seenGz[f.Name] {
				seenGz[f.Name] = true
				gzipped = append(gzipped, gzInput{wu, f.Name, sum})
			}
			if !ours || sum != f.MD5 || seen[f.Name] {
				continue // a constant file of the application, or not rboinc's
			}
			seen[f.Name] = true
			r.Files++
			problem, size := e.inputProblem(f.Name, sum, f.Bytes)
			if problem == "" {
				continue
			}
			p := InputProblem{WU: wu, File: f.Name, MD5: sum, Problem: problem}
			if size < 0 {
				r.Unrestorable = append(r.Unrestorable, p) // logged and counted by the caller, once
				continue
			}
			if repair {
				if err := e.Pool.Restage(e.Proj, f.Name, sum, size); err != nil {
					// Logged by the caller, once however many checks
					// find it so.
					p.Problem = fmt.Sprintf("%s; linking it again failed: %v", problem, err)
					p.LinkFailed = true
					r.Unrestorable = append(r.Unrestorable, p)
					continue
				}
				e.digests.forget(e.Proj.DownloadPath(f.Name))
				e.Log.Warn("input of a waiting work unit linked again from the pool", "wu", wu, "file", f.Name, "problem", problem)
			}
			r.Relinked = append(r.Relinked, p)
		}
	}
	// After the inputs themselves: a compressed copy is made from its
	// input.
	for _, g := range gzipped {
		e.checkGzip(g, repair, &r)
	}
	if repair {
		if err := e.db.AddCount(ctx, store.CountInputsRelinked, len(r.Relinked)); err != nil {
			e.Log.Warn("counting relinked inputs", "err", err)
		}
	}
	return r, nil
}

// inputProblem says what is wrong with download name of content sum (""
// when it is the pool's content), and the content's size in the pool (-1
// when the pool does not have it). A hard link of the pool's file is
// recognised by one stat each; a copy (a download hierarchy on another
// file system) by its size, then its MD5, read once per version of it.
//
// nbytes is the content's size as BOINC was told it (0: not known). A pool
// file of another size was written over in place (say by copying onto its
// download link, which is the same file): the pool no longer has the
// content, and linking it again would not help.
func (e *Engine) inputProblem(name, sum string, nbytes int64) (string, int64) {
	dst := e.Proj.DownloadPath(name)
	fi, err := os.Stat(dst)
	// A pool file never changes (a new content is a new file): a link of
	// the one seen before holds the content, even if the pool has lost its
	// own name for it since, and needs no second stat.
	if pf := e.digests.poolFile(sum); err == nil && pf != nil && os.SameFile(fi, pf) {
		if nbytes > 0 && fi.Size() != nbytes {
			return damagedPoolFile(fi.Size(), nbytes), -1
		}
		return "", pf.Size()
	}
	pf, perr := os.Stat(e.Pool.Path(sum))
	size := int64(-1)
	damaged := ""
	if perr == nil && pf.Mode().IsRegular() {
		size = pf.Size()
		if nbytes > 0 && size != nbytes {
			damaged, size = damagedPoolFile(size, nbytes), -1
		} else {
			e.digests.notePoolFile(sum, pf)
		}
	}
	switch {
	case err != nil:
		return withDamage("missing", damaged), size
	case !fi.Mode().IsRegular():
		return withDamage("not a regular file", damaged), size
	case damaged != "" && os.SameFile(fi, pf):
		return damaged, size
	case size >= 0 && os.SameFile(fi, pf):
		return "", size
	case size >= 0 && fi.Size() != size:
		return "different content", size
	}
	got, err := e.digests.sum(dst, fi)
	switch {
	case err != nil:
		return withDamage(fmt.Sprintf("unreadable: %v", err), damaged), size
	case got != sum:
		return withDamage("different content", damaged), size
	}
	// A copy of the content of its own: volunteers download it whole,
	// whatever became of the pool's file.
	return "", max(size, fi.Size())
}

// withDamage adds to problem that the pool's file is damaged too.
func withDamage(problem, damaged string) string {
	if damaged == "" {
		return problem
	}
	return problem + "; " + damaged
}

// damagedPoolFile is the problem of a pool file whose size is not its
// content's.
func damagedPoolFile(size, nbytes int64) string {
	return fmt.Sprintf("the pool's file of this content was written over (%d bytes, the content has %d)", size, nbytes)
}

// restoreInputs links the inputs of work unit wu (read from BOINC's
// database) that are missing from download/ or different again from the
// pool. It returns what it could not restore.
func (e *Engine) restoreInputs(ctx context.Context, bdb *boincdb.DB, wu string) ([]InputProblem, error) {
	files, found, err := bdb.Inputs(ctx, wu)
	if err != nil || !found {
		return nil, err
	}
	var bad []InputProblem
	for _, f := range files {
		sum, ours := pool.ParsePhysicalName(f.Name)
		if !ours || sum != f.MD5 {
			continue
		}
		problem, size := e.inputProblem(f.Name, sum, f.Bytes)
		switch {
		case problem == "":
		case size < 0:
			bad = append(bad, InputProblem{WU: wu, File: f.Name, MD5: sum, Problem: problem})
		default:
			if err := e.Pool.Restage(e.Proj, f.Name, sum, size); err != nil {
				bad = append(bad, InputProblem{WU: wu, File: f.Name, MD5: sum, Problem: err.Error()})
				continue
			}
			e.digests.forget(e.Proj.DownloadPath(f.Name))
			e.Log.Warn("input of a work unit whose download failed linked again from the pool", "wu", wu, "file", f.Name, "problem", problem)
			if err := e.db.AddCount(ctx, store.CountInputsRelinked, 1); err != nil {
				e.Log.Warn("counting relinked inputs", "err", err)
			}
		}
	}
	return bad, nil
}

// inputCheckState is what the creator's input checks remember from one to
// the next: the last failure, and the inputs already reported as beyond
// repair (each is logged and counted once, not every check).
type inputCheckState struct {
	lastErr      string
	unrestorable map[string]bool
}

// runInputCheck is the creator's input check; a failure (BOINC's database
// unavailable) is logged when it first happens or changes, not every pass.
func (e *Engine) runInputCheck(ctx context.Context, st *inputCheckState) {
	t0 := time.Now()
	r, err := e.CheckInputs(ctx, true)
	if err != nil {
		if ctx.Err() == nil && err.Error() != st.lastErr {
			e.Log.Warn("checking the inputs of waiting work units", "err", err)
		}
		st.lastErr = err.Error()
		return
	}
	st.lastErr = ""
	now := map[string]bool{}
	fresh := 0
	for _, p := range r.Unrestorable {
		key := p.WU + "/" + p.File
		now[key] = true
		if st.unrestorable[key] {
			continue
		}
		fresh++
		if p.LinkFailed {
			e.Log.Error("an input of a waiting work unit is not in download/ as its content and linking it again from the pool failed: its volunteers cannot download it until it is there",
				"wu", p.WU, "file", p.File, "problem", p.Problem)
			continue
		}
		e.Log.Error("an input of a waiting work unit is not in download/ as its content and the pool no longer has that content: its volunteers cannot download it, and its step fails when BOINC gives up on it",
			"wu", p.WU, "file", p.File, "problem", p.Problem)
	}
	st.unrestorable = now
	if err := e.db.AddCount(ctx, store.CountInputsUnrestorable, fresh); err != nil {
		e.Log.Warn("counting unrestorable inputs", "err", err)
	}
	e.Log.Debug("inputs of waiting work units checked", "work_units", r.WorkUnits, "files", r.Files,
		"relinked", len(r.Relinked), "unrestorable", len(r.Unrestorable), "ms", ms(time.Since(t0)))
}

// gzInput is an input a work unit has served compressed.
type gzInput struct{ wu, name, sum string }

// checkGzip looks for the compressed copy volunteers download of an input
// served compressed (pool.StageGzip), and, with repair, makes it again
// when it is missing: without it every download of the input fails (404).
func (e *Engine) checkGzip(g gzInput, repair bool, r *InputCheck) {
	gz := e.Proj.DownloadPath(g.name) + ".gz"
	if _, err := os.Stat(gz); err == nil {
		return
	}
	p := InputProblem{WU: g.wu, File: g.name + ".gz", MD5: g.sum, Problem: "missing"}
	if repair {
		if err := pool.StageGzip(e.Proj, g.name); err != nil {
			p.Problem = fmt.Sprintf("missing; making it again failed: %v", err)
			p.LinkFailed = true
			r.Unrestorable = append(r.Unrestorable, p)
			return
		}
		e.Log.Warn("compressed copy of an input of a waiting work unit made again", "wu", g.wu, "file", p.File)
	}
	r.Relinked = append(r.Relinked, p)
}
