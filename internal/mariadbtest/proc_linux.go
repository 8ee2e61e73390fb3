package mariadbtest

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

// sysProcAttr puts the server in a process group of its own, so that a ^C
// meant for the test binary does not reach it directly, and asks the kernel
// to kill it if the test binary dies first. (Pdeathsig fires when the OS
// thread that started the child exits; Go keeps its threads unless a
// goroutine locks one and returns, which Start does not.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// serverRunning reports whether process pid is alive and is a server
// started on datadir (a pid file can outlive its server, and its number be
// reused by an unrelated process).
func serverRunning(pid int, datadir string) bool {
	cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return false
	}
	return bytes.Contains(cmdline, []byte("--datadir="+datadir+"\x00"))
}

// killGroup kills the process group p leads (started with sysProcAttr): a
// script and the programs it runs.
func killGroup(p *os.Process) error {
	return syscall.Kill(-p.Pid, syscall.SIGKILL)
}
