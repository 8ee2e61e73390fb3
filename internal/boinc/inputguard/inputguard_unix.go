//go:build unix

package inputguard

import (
	"io"
	"os"
	"os/signal"
	"strconv"
	"syscall"
)

// run is the guard's main; pgidArg is the process group of create_work.
func run(pgidArg string) int {
	pgid, err := strconv.Atoi(pgidArg)
	if err != nil || pgid <= 1 || syscall.Getpgrp() != pgid {
		// Never kill a group it was not put into for this purpose.
		os.Stderr.WriteString("create_work guard: not in create_work's process group " + strconv.Quote(pgidArg) + "\n")
		return 2
	}
	// Its life is bounded by its feeder's control pipe; a signal meant for
	// a terminal's or a service's processes must not take it away early.
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	in := os.NewFile(InputFD, "create_work input")
	ctl := os.NewFile(ControlFD, "create_work guard control")
	var b [1]byte
	if n, _ := io.ReadFull(ctl, b[:]); n == 1 && b[0] == Release {
		in.Close()
		return 0
	}
	// The feeder died (or stopped the run): one kill puts SIGKILL in every
	// process of the group, this one included, before this process and
	// its copy of the input go: no create_work runs another instruction
	// after its input ends.
	syscall.Kill(0, syscall.SIGKILL)
	return 1
}
