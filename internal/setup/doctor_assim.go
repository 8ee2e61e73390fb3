package setup

import (
	"context"
	"path/filepath"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/templates"
)

// checkAssimilation says how finished work units reach rboinc and whether
// that way works: for the native assimilator, its daemon line and BOINC's
// database (reachable, with the columns rboinc reads).
func checkAssimilation(ctx context.Context, f *Findings, root string, cfg engine.Config, p *boinc.Project, qs []*templates.Queue) {
	bdbErr := probeBoincDB(ctx, p, cfg.Simulated)
	if cfg.Assimilator != AssimNative {
		if bdbErr == nil {
			f.add(Note, "finished work units reach rboinc through the hook (BOINC's script_assimilator, one process per work unit); "+
				"BOINC's database answers, so the native assimilator could take over: `rboinc-server init --root %s --assimilator native` "+
				"(it reads BOINC's database in batches and advances many more chains per second)", root)
		}
		return
	}
	f.add(OK, "finished work units reach rboinc through the native assimilator (rboinc-server assimilator)")
	if bdbErr != nil {
		f.add(Problem, "the native assimilator cannot use BOINC's database, so no chain advances: %v", bdbErr)
	} else {
		f.add(OK, "BOINC's database answers and has the columns rboinc reads")
	}
	if cfg.Simulated {
		return
	}
	d := NativeDaemonLine(root, p, qs)
	if !d.Present {
		f.add(Problem, "config.xml does not run rboinc's native assimilator for %s, so those chains never advance: add %s to <daemons> in %s and restart the daemons (bin/stop; bin/start)",
			d.App, d.Line, filepath.Join(p.Dir, "config.xml"))
	}
	for _, l := range DaemonLines(p, qs, cfg.HookScript) {
		if l.Present {
			f.add(Note, "config.xml also runs script_assimilator with rboinc's hook for %s: both take that application's work units (harmless, each step is recorded once), but one is enough: remove the script_assimilator line", l.App)
		}
	}
}

// probeBoincDB opens BOINC's database of p and checks its columns.
func probeBoincDB(ctx context.Context, p *boinc.Project, standin bool) error {
	t, err := boincdb.ForProject(p, standin)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	db, err := boincdb.Open(ctx, t)
	if err != nil {
		return err
	}
	defer db.Close()
	return db.Check(ctx)
}
