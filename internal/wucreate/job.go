package wucreate

import (
	"io"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
)

// Assignment target types (BOINC's ASSIGN_*).
const (
	AssignNone = 0
	AssignHost = 1
	AssignUser = 2
	AssignTeam = 3
)

// Job is one job to create, create_work's JOB_DESC.
type Job struct {
	WU             Row // the job's parameters; Prepare fills in the rest
	WUTemplateFile string
	Files          []InFile // variable inputs, in the template's order
	CommandLine    string
	Assign         bool // targeted (--target_*) or broadcast (--broadcast*) job
	AssignMulti    bool
	AssignType     int
	AssignID       int
	SubApp         string
}

// Env is what create_work's job processing needs besides the job.
type Env struct {
	Project *boinc.Project
	// ProjPrefix is how BOINC's project_path() spells the project dir
	// in messages.
	ProjPrefix string
	App        string
	// Stdout and Stderr get create_work's messages.
	Stdout, Stderr io.Writer
	// Now, when set, gives the creation time (tests); else the clock.
	Now func() int64
	// Sidecars makes inputs' MD5 and size come from their .md5 sidecars
	// (and be remembered by name for the Env's life), as for a project
	// that caches MD5s: native creation, whose inputs rboinc staged.
	Sidecars    bool
	staged      map[string]stagedFile
	resultTmpls map[string]bool // result templates found (with Sidecars)
}

// know records input name's MD5 and size as staged (see Run.Know); only
// an Env with Sidecars uses what it records.
func (e *Env) know(name, md5 string, size int64) {
	if e.staged == nil {
		e.staged = map[string]stagedFile{}
	}
	e.staged[name] = stagedFile{path: boinc.HierPath(e.Project.DownloadDir, name, e.Project.Fanout), md5: md5, nbytes: size}
}

func (e *Env) now() int64 {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now().Unix()
}
