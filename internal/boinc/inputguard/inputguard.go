// Package inputguard is the guard process of a create_work run (see
// boinc.StartCreateWork): the running program started again, which holds a
// second copy of the write end of create_work's input while the process
// that feeds create_work lives, and kills create_work's process group when
// that process dies without finishing.
//
// It is a package of its own, with no dependencies beyond the standard
// library's basics, so that its init, which turns the program into the
// guard, runs before the inits of the rest of a large program: the guard
// starts within a few milliseconds.
package inputguard

import "os"

// Env, in the guard's environment, makes the program the guard; its value
// is the process group (create_work's) the guard must be in.
const Env = "RBOINC_CREATE_WORK_GUARD"

// Release, written on the control pipe, tells the guard that the feeder
// finishes on purpose: it drops its copy of the input and exits 0.
const Release = 'F'

// The guard's files: its copy of create_work's input and the read end of
// the control pipe.
const (
	InputFD   = 3
	ControlFD = 4
)

func init() {
	if v, ok := os.LookupEnv(Env); ok {
		os.Exit(run(v))
	}
}
