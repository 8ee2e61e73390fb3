package wucreate

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
)

// JobFor is the job create_work --stdin makes of the options params gives
// on its command line (boinc.WorkParams.Args) and of j's stdin line
// (boinc.Job.Line).
func JobFor(params boinc.WorkParams, j boinc.Job) Job {
	w := DefaultRow()
	w.Batch = int(params.Batch)
	setF := func(dst *float64, v float64) {
		if v != 0 {
			*dst = v
		}
	}
	setI := func(dst *int, v int) {
		if v != 0 {
			*dst = v
		}
	}
	setF(&w.RscFpopsEst, params.FpopsEst)
	setF(&w.RscFpopsBound, params.FpopsBound)
	setF(&w.RscMemoryBound, params.MemoryBound)
	setI(&w.TargetNResults, params.TargetNResults)
	setI(&w.MinQuorum, params.MinQuorum)
	setI(&w.MaxErrorResults, params.MaxErrorResults)
	setI(&w.MaxTotalResults, params.MaxTotalResults)
	w.Name, w.ResultTemplateFile, w.Priority = j.WUName, j.ResultTemplate, j.Priority
	job := Job{WU: w, WUTemplateFile: j.WUTemplate, CommandLine: j.CommandLine}
	if params.TargetUser != 0 {
		job.Assign, job.AssignType, job.AssignID = true, AssignUser, int(params.TargetUser)
	}
	for _, f := range j.Files {
		job.Files = append(job.Files, InFile{Name: f})
	}
	return job
}

// Run is one native creation: the jobs of one set of work parameters are
// prepared as they are added (templates processed, inputs' sidecars read,
// xml_doc made) and inserted by Finish, all in one transaction of
// multi-row statements, so that, as with create_work --stdin, either every
// job exists afterwards or none does. A job whose work unit exists already
// (by name: a run before a crash made it) is left as it is.
type Run struct {
	ctx    context.Context
	db     *boincdb.DB
	params boinc.WorkParams
	env    Env
	appID  int64
	msgs   bytes.Buffer
	tmpls  map[string]string
	rows   []*Row
	done   bool
	cpu    time.Duration
	ahead  aheadTx
}

// Start begins a native creation for params in project p, whose BOINC
// database is db (standin: the stand-in, which declares apps by their
// program).
func Start(ctx context.Context, p *boinc.Project, db *boincdb.DB, params boinc.WorkParams, standin bool) (*Run, error) {
	appID, err := AppID(ctx, db, p.Dir, params.App, standin)
	if err != nil {
		return nil, fmt.Errorf("looking up BOINC application %s: %w", params.App, err)
	}
	if appID == 0 {
		return nil, fmt.Errorf("BOINC application %s is not in the project's app table", params.App)
	}
	r := &Run{ctx: ctx, db: db, params: params, appID: appID, tmpls: map[string]string{}}
	r.env = Env{Project: p, ProjPrefix: p.Dir, App: params.App, Stdout: io.Discard, Stderr: &r.msgs, Sidecars: true}
	return r, nil
}

// Add prepares a job. A job refused leaves the run usable; the caller
// normally aborts it.
func (r *Run) Add(bj boinc.Job) error {
	if r.done {
		return errors.New("native creation already ended")
	}
	t0 := time.Now()
	defer func() { r.cpu += time.Since(t0) }()
	if bj.WUName == "" || len(bj.WUName) > maxNameLen {
		return fmt.Errorf("work unit name %q is empty or longer than %d bytes", bj.WUName, maxNameLen)
	}
	j := JobFor(r.params, bj)
	tmpl, ok := r.tmpls[j.WUTemplateFile]
	if !ok {
		var err error
		if tmpl, err = ReadTemplate(filepath.Join(r.env.Project.Dir, j.WUTemplateFile)); err != nil {
			return fmt.Errorf("work unit %s: reading input template %s: %w", bj.WUName, j.WUTemplateFile, err)
		}
		r.tmpls[j.WUTemplateFile] = tmpl
	}
	r.msgs.Reset()
	w, code, skipped := r.env.Prepare(&j, tmpl)
	switch {
	case code != 0:
		return fmt.Errorf("work unit %s: %s", bj.WUName, strings.TrimSpace(r.msgs.String()))
	case skipped:
		return fmt.Errorf("work unit %s: result template %s is missing", bj.WUName, j.WU.ResultTemplateFile)
	}
	r.rows = append(r.rows, w)
	r.ahead.insertDue(r)
	return nil
}

// Know gives the MD5 and size of variable input name, a file the caller
// has just staged in the download hierarchy with a sidecar saying the same
// (rboinc stages its contents so): the run takes them as it would from the
// sidecar, without reading it again (five system calls an input).
func (r *Run) Know(name, md5 string, size int64) { r.env.know(name, md5, size) }

// Jobs is the number of jobs added.
func (r *Run) Jobs() int { return len(r.rows) }

// Finish inserts the jobs: on success every one exists.
func (r *Run) Finish() error {
	if r.done {
		return errors.New("native creation already ended")
	}
	r.done = true
	t0 := time.Now()
	defer func() { r.cpu += time.Since(t0) }()
	if len(r.rows) == 0 {
		r.ahead.rollback()
		return nil
	}
	if r.ahead.commit(r) {
		return nil
	}
	err := r.db.Tx(r.ctx, func(tx *sql.Tx) error { return StoreAll(r.ctx, tx, r.appID, r.rows) })
	if err != nil {
		return fmt.Errorf("inserting %d work units into BOINC's database: %w", len(r.rows), err)
	}
	return nil
}

// Flush does nothing: jobs are prepared as they are added. It is there so
// that a Run is used as a create_work run is.
func (r *Run) Flush() error { return nil }

// Abort drops the jobs: none is created.
func (r *Run) Abort() {
	r.done, r.rows = true, nil
	r.ahead.rollback()
}

// CPU is the time the run spent preparing and inserting (in this
// process: the counterpart of create_work's processor time).
func (r *Run) CPU() time.Duration { return r.cpu }

// StoreAll inserts rows for app appID, many per statement, with the
// assignment rows of targeted ones; rows whose name exists already are
// skipped (their work unit is the one a run before a crash created:
// names are made by rboinc alone). It is safe to repeat.
func StoreAll(ctx context.Context, tx *sql.Tx, appID int64, rows []*Row) error {
	names := make([]string, len(rows))
	for i, w := range rows {
		names[i] = w.Name
	}
	have, err := boincdb.WorkunitIDs(ctx, tx, names)
	if err != nil {
		return err
	}
	wus := make([]*boincdb.Workunit, 0, len(rows))
	var targeted []*Row
	for _, w := range rows {
		if _, ok := have[w.Name]; ok {
			continue
		}
		have[w.Name] = 0 // a name twice in rows is inserted once
		wus = append(wus, w.row(appID))
		if w.Assign != nil {
			targeted = append(targeted, w)
		}
	}
	if err := boincdb.InsertWorkunits(ctx, tx, wus); err != nil {
		return err
	}
	if len(targeted) == 0 {
		return nil
	}
	tn := make([]string, len(targeted))
	for i, w := range targeted {
		tn[i] = w.Name
	}
	ids, err := boincdb.WorkunitIDs(ctx, tx, tn)
	if err != nil {
		return err
	}
	as := make([]boincdb.Assignment, len(targeted))
	for i, w := range targeted {
		a := *w
		a.ID = ids[w.Name]
		as[i] = a.assignment()
	}
	return boincdb.InsertAssignments(ctx, tx, as)
}
