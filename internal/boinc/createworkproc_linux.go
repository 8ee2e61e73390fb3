package boinc

import "syscall"

// createWorkProcAttr: create_work in a process group of its own (killed
// whole), and killed with the process that feeds it. Its input ends when
// that process dies, and create_work takes an ended input for a finished
// one: it would insert the jobs fed so far, whose chains a crash left
// unrecorded.
func createWorkProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
