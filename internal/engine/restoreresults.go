package engine

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rboinc/rboinc/internal/advance"
	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/pool"
	"github.com/rboinc/rboinc/internal/store"
)

// restoreResults takes again, from BOINC's upload hierarchy, the outputs of
// a step recorded done whose results files are missing, while BOINC still
// holds them (the work unit is not marked assimilated yet): a record
// committed without its files (the long soak lost 500 work units' results
// so, another host's pass having removed the files between the take and
// the commit; its sync failed after the commit) is whole again before
// BOINC deletes the outputs. With taken set, what it puts back is made
// durable with the batch.
func (e *Engine) restoreResults(ctx context.Context, c store.Chain, step int, call boinc.HookCall, taken *advance.Taken) error {
	dir := e.resultsDir(c.User, c.Group)
	gone := map[int]string{} // upload path by output index
	for _, path := range call.Files {
		o, err := naming.ParseOutput(filepath.Base(path))
		if err != nil {
			continue
		}
		if _, err := os.Lstat(filepath.Join(dir, naming.ResultFile(call.WUName, o.Index))); errors.Is(err, fs.ErrNotExist) {
			gone[o.Index] = path
		}
	}
	if len(gone) == 0 {
		return nil
	}
	recorded, err := e.db.StepResults(ctx, c.ID, step)
	if err != nil {
		return err
	}
	for _, r := range recorded {
		src, ok := gone[r.Index]
		if !ok || r.File != naming.ResultFile(call.WUName, r.Index) {
			continue
		}
		if _, err := os.Stat(src); err != nil {
			continue // BOINC has it no more: nothing to take
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		dst := filepath.Join(dir, r.File)
		var sum string
		if taken != nil {
			sum, _, _, err = pool.TakeOutputStarted(src, dst)
		} else {
			sum, _, err = pool.TakeOutput(src, dst, false)
		}
		if err != nil {
			return err
		}
		if sum != r.MD5 {
			// Not removed again: no removal by name is safe beside another
			// host's takes (see pretakes).
			e.Log.Error("a recorded result's file was missing; BOINC's output put back differs from what was recorded", "file", dst, "recorded_md5", r.MD5, "output_md5", sum)
		}
		if taken != nil {
			taken.Paths = append(taken.Paths, dst)
		}
		e.Log.Warn("a recorded result's file was missing; taken again from BOINC's upload hierarchy", "file", dst)
	}
	return nil
}
