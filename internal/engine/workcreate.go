package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/internal/wucreate"
)

// The ways work units enter BOINC (rboinc.json "create").
const (
	CreateWithCreateWork = "create_work" // the project's bin/create_work --stdin (the default)
	CreateNative         = "native"      // rboinc inserts the rows itself (package wucreate)
)

// CheckCreate refuses an unknown "create" value.
func CheckCreate(v string) error {
	switch v {
	case "", CreateWithCreateWork, CreateNative:
		return nil
	}
	return fmt.Errorf(`"create": %q is not a way to create work units: use %q (BOINC's create_work, the default) or %q (rboinc inserts them into BOINC's database)`, v, CreateWithCreateWork, CreateNative)
}

// workCreator makes BOINC work units, all or nothing per run; the rest of
// the engine does not know which kind it uses. Both kinds leave the
// chains' records to the caller: work units are made only after the
// steps that own them are recorded (state "creating" or "pending"), and
// the steps are marked queued only after the work units exist, so a
// process that dies in between leaves steps that revival creates, never
// a work unit without its step.
type workCreator interface {
	// start begins a run for jobs sharing params; its jobs exist once
	// Finish returns nil. An aborted or failed run may have made some
	// when insertsAsItReads, none otherwise.
	start(ctx context.Context, params boinc.WorkParams) (workRun, error)
	// createAll creates jobs in one run; staged are inputs the caller
	// has just staged, by physical name (see inputKnower).
	createAll(ctx context.Context, params boinc.WorkParams, jobs []boinc.Job, staged map[string]stagedInput) error
	// insertsAsItReads tells whether a run may commit jobs before Finish
	// (BOINC's create_work: an assigned job at once, others in ~1 MB
	// chunks), and so must be handed none before their steps commit.
	// Native creation may insert them ahead, but commits only at Finish.
	insertsAsItReads() bool
}

// stagedInput is an input the engine has just staged in BOINC's download
// hierarchy, with its .md5 sidecar saying the same (when the pool writes
// sidecars: not for native creation, see pool.Pool.NoSidecars).
type stagedInput struct {
	md5  string
	size int64
}

// inputKnower is a run that takes the MD5 and size of inputs the engine
// has just staged instead of reading their sidecars again (native
// creation; create_work reads them itself).
type inputKnower interface {
	Know(name, md5 string, size int64)
}

// workRun is one run of a workCreator, fed a job at a time.
type workRun interface {
	Add(boinc.Job) error
	Flush() error // hands over what is buffered
	Finish() error
	Abort()
	CPU() time.Duration
}

// creator returns the engine's workCreator, opening BOINC's database for
// native creation at the first use. A failure is not kept: the next call
// tries again (BOINC's database may come back, its schema be upgraded).
func (e *Engine) creator(ctx context.Context) (workCreator, error) {
	e.creationMu.Lock()
	defer e.creationMu.Unlock()
	if e.creation != nil {
		return e.creation, nil
	}
	if e.Cfg.Create != CreateNative {
		e.creation = createWorkCreator{p: e.Proj}
		return e.creation, nil
	}
	db, err := e.openNativeDB(ctx)
	if err != nil {
		return nil, err
	}
	// The stand-in (also served as if real, its config.xml naming its
	// default script) declares apps by their program, as its create_work
	// does.
	e.creation = &nativeCreator{p: e.Proj, db: db, standin: e.Cfg.Simulated || e.Proj.StandinScript != ""}
	return e.creation, nil
}

// openNativeDB opens BOINC's database for native creation and makes sure
// its schema has every column native creation writes. Nothing is created
// or altered in it.
func (e *Engine) openNativeDB(ctx context.Context) (*boincdb.DB, error) {
	db, err := e.OpenBoincDB(ctx)
	if err != nil {
		return nil, fmt.Errorf("native creation needs BOINC's database: %w", err)
	}
	if err := db.CheckCreateColumns(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// CheckCreation makes sure work units can be created the configured way:
// for native creation, that BOINC's database is reachable and has every
// column it writes. Servers and daemons call it before they start.
func (e *Engine) CheckCreation(ctx context.Context) error {
	_, err := e.creator(ctx)
	return err
}

// createWorkCreator runs the project's bin/create_work --stdin.
type createWorkCreator struct{ p *boinc.Project }

func (c createWorkCreator) start(ctx context.Context, params boinc.WorkParams) (workRun, error) {
	r, err := boinc.StartCreateWork(ctx, c.p, params)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (createWorkCreator) insertsAsItReads() bool { return true }

func (c createWorkCreator) createAll(ctx context.Context, params boinc.WorkParams, jobs []boinc.Job, _ map[string]stagedInput) error {
	return boinc.CreateWork(ctx, c.p, params, jobs)
}

// nativeCreator inserts the work units into BOINC's database itself.
type nativeCreator struct {
	p       *boinc.Project
	db      *boincdb.DB
	standin bool
}

func (c *nativeCreator) start(ctx context.Context, params boinc.WorkParams) (workRun, error) {
	r, err := wucreate.Start(ctx, c.p, c.db, params, c.standin)
	if err != nil {
		return nil, err
	}
	// A submission's run is fed while its chains are recorded, and
	// finished after their commit: its inserts run beside the recording,
	// its commit stays after it (see recordAndCreate).
	r.InsertAhead()
	return r, nil
}

func (*nativeCreator) insertsAsItReads() bool { return false }

func (c *nativeCreator) createAll(ctx context.Context, params boinc.WorkParams, jobs []boinc.Job, staged map[string]stagedInput) error {
	if len(jobs) == 0 {
		return nil
	}
	r, err := wucreate.Start(ctx, c.p, c.db, params, c.standin)
	if err != nil {
		return err
	}
	for name, in := range staged {
		r.Know(name, in.md5, in.size)
	}
	for _, j := range jobs {
		if err := r.Add(j); err != nil {
			r.Abort()
			return err
		}
	}
	return r.Finish()
}
