package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/pool"
	"github.com/rboinc/rboinc/internal/wucreate"
)

// gzipOf caches, by a WU template's path, which of its variable inputs
// BOINC serves compressed (wucreate.GzipInputs). The templates rboinc hands
// create_work have immutable content-derived names (writeTemplates), so an
// answer never goes stale.
var gzipOf sync.Map // string -> []bool

// stageGzips makes the compressed copies BOINC serves for job's inputs
// whose <file_info> in its WU template has <gzip/> (pool.StageGzip), once
// they are staged: without them create_work refuses the work unit
// ("missing gzip file"). A queue without such inputs costs one map look-up.
func (e *Engine) stageGzips(job boinc.Job) error {
	path := job.WUTemplate
	if !filepath.IsAbs(path) {
		path = filepath.Join(e.Proj.Dir, path)
	}
	v, ok := gzipOf.Load(path)
	if !ok {
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("work unit %s: reading its template: %w", job.WUName, err)
		}
		v, _ = gzipOf.LoadOrStore(path, wucreate.GzipInputs(string(b)))
	}
	for i, gz := range v.([]bool) {
		if gz && i < len(job.Files) {
			if err := pool.StageGzip(e.Proj, job.Files[i]); err != nil {
				return fmt.Errorf("work unit %s: %w", job.WUName, err)
			}
		}
	}
	return nil
}
