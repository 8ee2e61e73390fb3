package setup

import (
	"context"
	"io"
	"log/slog"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/words"
)

// checkInputs reports inputs of the work units BOINC holds for running and
// stopped chains that are missing from download/ or not the pool's content: their
// volunteers cannot download them. The creator links them again within a
// minute (when it runs); doctor only looks.
func checkInputs(ctx context.Context, f *Findings, root string) {
	e, err := engine.Open(ctx, root, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		f.add(Note, "cannot check the inputs of waiting work units: %v", err)
		return
	}
	defer e.Close()
	r, err := e.CheckInputs(ctx, false)
	if err != nil {
		f.add(Note, "cannot check the inputs of waiting work units: %v", err)
		return
	}
	if len(r.Relinked) > 0 {
		first := r.Relinked[0]
		f.add(Problem, "%s of work units BOINC holds for running and stopped chains missing from download/ or different from rboinc's content (e.g. %s of work unit %s: %s), so volunteers cannot download them; rboinc's pool has them: the creator (rboinc-server creator, serve or volunteer) links them again within a minute, or run `rboinc-server gc --root %s` now",
			words.Count(len(r.Relinked), "input", "inputs"), first.File, first.WU, first.Problem, root)
	}
	if len(r.Unrestorable) > 0 {
		first := r.Unrestorable[0]
		f.add(Problem, "%s of work units BOINC holds for running and stopped chains missing from download/ or different, and rboinc's pool no longer has their content (e.g. %s of work unit %s: %s): those steps fail when BOINC gives up on their work units",
			words.Count(len(r.Unrestorable), "input", "inputs"), first.File, first.WU, first.Problem)
	}
	if len(r.Relinked) == 0 && len(r.Unrestorable) == 0 && r.WorkUnits > 0 {
		f.add(OK, "the %s of %s BOINC holds for running and stopped chains are in download/", words.Count(r.Files, "input", "inputs"), words.Count(r.WorkUnits, "work unit", "work units"))
	}
}
