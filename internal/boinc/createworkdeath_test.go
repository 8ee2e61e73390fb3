//go:build linux

package boinc

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// callerEnv makes the test binary the process that feeds create_work (see
// TestCreateWorkDiesWithItsCaller): it starts create_work in the project
// directory the variable names, hands it one job, prints create_work's
// process id and waits to be killed.
const callerEnv = "RBOINC_TEST_CREATE_WORK_CALLER"

func init() {
	dir := os.Getenv(callerEnv)
	if dir == "" {
		return
	}
	r, err := StartCreateWork(context.Background(), &Project{Dir: dir}, WorkParams{App: "a"})
	if err == nil {
		if err = r.Add(job("w1")); err == nil {
			err = r.Flush()
		}
	}
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	fmt.Printf("create_work %d\n", r.cmd.Process.Pid)
	time.Sleep(time.Minute)
	os.Exit(0)
}

// startCaller starts a process feeding create_work of project p one job
// (in a process group of its own) and returns it once create_work has read
// that job, with create_work's process id.
func startCaller(t *testing.T, p *Project) (*exec.Cmd, int) {
	t.Helper()
	caller := exec.Command(os.Args[0], "-test.run=^$")
	caller.Env = append(os.Environ(), callerEnv+"="+p.Dir)
	caller.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var errOut strings.Builder
	caller.Stderr = &errOut
	stdout, err := caller.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := caller.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { caller.Process.Kill(); caller.Wait() })
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	pid, err := strconv.Atoi(strings.TrimPrefix(strings.TrimSpace(line), "create_work "))
	if err != nil {
		caller.Process.Kill()
		caller.Wait()
		t.Fatalf("the caller did not start create_work (%q): %s", line, errOut.String())
	}
	got := filepath.Join(p.Dir, "got.txt")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(got); strings.Contains(string(b), "--wu_name w1 ") {
			return caller, pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("create_work never read its job: %s", errOut.String())
		}
	}
}

// liveGroup lists the processes of process group pgid that are not yet
// dead (zombies, which an init that does not reap may keep, are dead).
func liveGroup(t *testing.T, pgid int) []string {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var live []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp ...; comm may hold spaces.
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) >= 3 && f[2] == strconv.Itoa(pgid) && f[0] != "Z" && f[0] != "X" {
			live = append(live, e.Name()+" "+s[:strings.LastIndexByte(s, ')')+1])
		}
	}
	return live
}

// killAndCheck kills the caller (its whole process group when group is
// true) and then waits for create_work's process group to end: it must end
// without having inserted its jobs.
func killAndCheck(t *testing.T, p *Project, caller *exec.Cmd, cw int, group bool) {
	t.Helper()
	if group {
		syscall.Kill(-caller.Process.Pid, syscall.SIGKILL)
	} else {
		caller.Process.Kill()
	}
	caller.Wait()
	inserted := filepath.Join(p.Dir, "inserted.txt")
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(inserted); err == nil {
			t.Fatal("create_work outlived the process feeding it and inserted its jobs")
		}
		live := liveGroup(t, cw)
		if len(live) == 0 {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(-cw, syscall.SIGKILL)
			t.Fatalf("create_work's process group outlived the process feeding it by 10 s: %q", live)
		}
	}
	if _, err := os.Stat(inserted); err == nil {
		t.Fatal("create_work outlived the process feeding it and inserted its jobs")
	}
}

// TestCreateWorkDiesWithItsCaller: a server killed (kill -9) while it feeds
// create_work takes create_work with it. Otherwise create_work sees its
// input end and inserts the jobs fed so far, whose chains the dead server
// never recorded.
func TestCreateWorkDiesWithItsCaller(t *testing.T) {
	p := fakeCreateWork(t)
	caller, cw := startCaller(t, p)
	killAndCheck(t, p, caller, cw, false)
}

// TestCreateWorkWrapperDiesWithItsCaller: the same for a project whose
// bin/create_work is a wrapper that runs the real one as a child (no
// exec), and a server killed with its whole process group. The child is
// not the feeder's child: nothing but the run's guard ends it before its
// input ends.
func TestCreateWorkWrapperDiesWithItsCaller(t *testing.T) {
	p := fakeCreateWork(t)
	wrapper := "#!/bin/sh\nexec 3<&0\n( cat <&3 > got.txt; echo > inserted.txt ) &\nwait\n"
	if err := os.WriteFile(filepath.Join(p.Dir, "bin", "create_work"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	caller, cw := startCaller(t, p)
	killAndCheck(t, p, caller, cw, true)
}
