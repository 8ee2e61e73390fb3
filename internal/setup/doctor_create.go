package setup

import (
	"context"
	"strings"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/internal/engine"
)

// checkCreation says how work units enter BOINC and, for native creation,
// whether BOINC's schema has every column it writes (read from the
// schema, nothing changed).
func checkCreation(ctx context.Context, f *Findings, cfg engine.Config, p *boinc.Project) {
	if cfg.Create != engine.CreateNative {
		f.add(OK, "work units enter BOINC through the project's bin/create_work (\"create\": \"create_work\")")
		return
	}
	missing, err := missingCreateColumns(ctx, p, cfg.Simulated)
	switch {
	case err != nil:
		f.add(Problem, "native creation (\"create\": \"native\") cannot use BOINC's database, so no work unit is created: %v", err)
	case len(missing) > 0:
		f.add(Problem, "BOINC's database lacks columns native creation (\"create\": \"native\") writes: %s; rboinc refuses native creation on it: set \"create\": \"create_work\" in %s (or upgrade BOINC's schema)",
			strings.Join(missing, ", "), engine.ConfigFile)
	default:
		f.add(OK, "work units are inserted into BOINC's database by rboinc (\"create\": \"native\"); its workunit and assignment tables have every column native creation writes")
	}
}

func missingCreateColumns(ctx context.Context, p *boinc.Project, standin bool) ([]string, error) {
	t, err := boincdb.ForProject(p, standin)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	db, err := boincdb.Open(ctx, t)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.MissingCreateColumns(ctx)
}
