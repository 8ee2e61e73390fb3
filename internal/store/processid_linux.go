package store

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// hostKey names this machine's boot and pid namespace: two processes with
// the same key see each other's pids (another container on the same
// kernel has another pid namespace, another machine another boot id).
func hostKey() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(boot)) + "/" + ns
}

// processStart is process pid's start time in clock ticks since boot
// (field 22 of /proc/<pid>/stat), -1 when no such process runs, or
// startUnknown when it runs but its start cannot be read: /proc mounted
// with hidepid hides another user's processes (the web server's and the
// creator's accounts may differ), and only a signal check still sees them.
func processStart(pid int) int64 {
	if pid <= 0 {
		return -1 // kill(0) and kill(-1) would name groups of processes
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
			return startUnknown
		}
		return -1
	}
	// The command name (field 2) may hold spaces and parentheses: the
	// fields after it start after its last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return -1
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (the state); field 22 is f[19].
	if len(f) < 20 || f[0] == "Z" {
		return -1 // a zombie runs no more
	}
	t, err := strconv.ParseInt(f[19], 10, 64)
	if err != nil {
		return -1
	}
	return t
}
