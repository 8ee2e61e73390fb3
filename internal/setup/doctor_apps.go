package setup

import (
	"context"
	"path/filepath"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/internal/templates"
	"github.com/rboinc/rboinc/internal/wucreate"
)

// checkQueueApps finds the queues whose BOINC application BOINC does not
// have: the server refuses every submission to them (queue_misconfigured)
// until the application is added or the template fixed. Without BOINC's
// database (checkAssimilation says why) nothing is said.
func checkQueueApps(ctx context.Context, f *Findings, p *boinc.Project, standin bool, qs []*templates.Queue) {
	if len(qs) == 0 {
		return
	}
	t, err := boincdb.ForProject(p, standin)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	db, err := boincdb.Open(ctx, t)
	if err != nil {
		return
	}
	defer db.Close()
	for _, q := range qs {
		known, err := wucreate.AppKnown(ctx, db, p.Dir, q.Application, standin)
		switch {
		case err != nil:
			return
		case known:
		case standin:
			f.add(Problem, "queue %s names BOINC application %s, which the stand-in does not have: every submission to it is refused; add its program %s (executable) or fix application= in %s",
				q.Name, q.Application, filepath.Join(p.Dir, "apps", q.Application, "run"), q.WUFile)
		default:
			f.add(Problem, "queue %s names BOINC application %s, which is not in BOINC's app table: every submission to it is refused; add the application to the project (project.xml and bin/xadd) or fix application= in %s",
				q.Name, q.Application, q.WUFile)
		}
	}
}
