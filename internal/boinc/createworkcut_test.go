//go:build linux

package boinc

import (
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
	"unsafe"
)

// feederEnv makes the test binary a process feeding create_work (see
// TestCreateWorkKilledFeederCutsNoLine): "run:DIR" feeds cutJobs jobs to a
// CreateWorkRun in the project directory DIR, "once:DIR" hands them to
// CreateWork; either way more than the pipe holds, so that it stalls inside
// a write until it is killed.
const feederEnv = "RBOINC_TEST_CREATE_WORK_FEEDER"

// cutJobs jobs of cutJob lines: 157 bytes with the newline, which divides
// neither a page nor a 16 KiB buffer, so that writes not made of whole
// lines end inside one.
const cutJobs = 3000

func cutJob(i int) Job {
	return Job{WUName: fmt.Sprintf("cut_%05d", i), WUTemplate: "templates/w_in", ResultTemplate: "templates/r_out",
		Priority: 2, CommandLine: "--steps 1000 --seed " + strconv.Itoa(100000+i), Files: []string{"jf_aaaaaaaaaaaaa"}}
}

func init() {
	mode, dir, ok := strings.Cut(os.Getenv(feederEnv), ":")
	if !ok {
		return
	}
	p := &Project{Dir: dir}
	var err error
	switch mode {
	case "run":
		var r *CreateWorkRun
		if r, err = StartCreateWork(context.Background(), p, WorkParams{App: "a"}); err == nil {
			for i := 0; i < cutJobs && err == nil; i++ {
				err = r.Add(cutJob(i))
			}
			if err == nil {
				err = r.Flush()
			}
		}
	case "once":
		jobs := make([]Job, cutJobs)
		for i := range jobs {
			jobs[i] = cutJob(i)
		}
		err = CreateWork(context.Background(), p, WorkParams{App: "a"}, jobs)
	}
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(1)
	}
	os.Stderr.WriteString("all jobs written: the pipe never filled\n")
	os.Exit(1)
}

// TestCreateWorkKilledFeederCutsNoLine: a process killed (kill -9) in the
// middle of feeding create_work leaves it only whole job lines. create_work
// then sees its input end and takes what it read for the whole input; a
// line cut at the end would be a job with a cut option or command line
// (BOINC's create_work parses the last fgets even without its newline).
//
// The create_work here reads nothing until the feeder is dead, so the pipe
// is full and the feeder killed inside a write; then it copies all it can
// read. It leaves its reader behind when killed with its feeder, as a
// create_work that had read the input before the signal came would.
func TestCreateWorkKilledFeederCutsNoLine(t *testing.T) {
	for _, mode := range []string{"run", "once"} {
		t.Run(mode, func(t *testing.T) { testKilledFeeder(t, mode) })
	}
}

func testKilledFeeder(t *testing.T, mode string) {
	p := fakeCreateWork(t)
	script := "#!/bin/sh\nexec 3<&0\n(while [ ! -e go ]; do sleep 0.05; done; cat <&3 > got.txt; touch done) &\nwait\n"
	if err := os.WriteFile(filepath.Join(p.Dir, "bin", "create_work"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	feeder := exec.Command(os.Args[0], "-test.run=^$")
	feeder.Env = append(os.Environ(), feederEnv+"="+mode+":"+p.Dir)
	var errOut strings.Builder
	feeder.Stderr = &errOut
	if err := feeder.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		feeder.Process.Kill()
		feeder.Wait()
	}()
	if err := waitPipeStalled(p.Dir, 30*time.Second); err != nil {
		t.Fatalf("%v; feeder: %s", err, errOut.String())
	}
	feeder.Process.Kill() // SIGKILL
	feeder.Wait()
	if err := os.WriteFile(filepath.Join(p.Dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(p.Dir, "done")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("create_work's reader never saw its input end")
		}
	}
	got, err := os.ReadFile(filepath.Join(p.Dir, "got.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) == 0 {
		t.Fatal("create_work read nothing")
	}
	lines := strings.SplitAfter(string(got), "\n")
	if last := lines[len(lines)-1]; last != "" {
		t.Fatalf("create_work read %d bytes ending in a cut job line %q: it would create that job", len(got), last)
	}
	lines = lines[:len(lines)-1]
	for i, l := range lines {
		if want := cutJob(i).Line() + "\n"; l != want {
			t.Fatalf("line %d read by create_work is %q, want %q", i+1, l, want)
		}
	}
	if len(lines) >= cutJobs {
		t.Fatalf("create_work read all %d jobs: the feeder was not killed inside a write", len(lines))
	}
	t.Logf("create_work read %d whole job lines (%d bytes) from the killed feeder", len(lines), len(got))
}

// waitPipeStalled waits until the input of create_work (its fd 3, a copy of
// its standard input) holds bytes and has held the same number for 600 ms:
// the pipe is full and its writer blocked.
func waitPipeStalled(dir string, limit time.Duration) error {
	var in *os.File
	defer func() {
		if in != nil {
			in.Close()
		}
	}()
	last, same := -1, 0
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if in == nil {
			for _, pid := range processesIn(dir) {
				if f, err := os.OpenFile(filepath.Join("/proc", pid, "fd", "3"), os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
					in = f
					break
				}
			}
			continue
		}
		n, err := pipeHolds(in)
		if err != nil {
			return fmt.Errorf("reading how much create_work's input holds: %w", err)
		}
		if n > 0 && n == last {
			if same++; same == 3 {
				return nil
			}
		} else {
			same = 0
		}
		last = n
	}
	return fmt.Errorf("create_work's input never filled up (it holds %d bytes)", last)
}

// pipeHolds is the number of unread bytes in the pipe f (FIONREAD).
func pipeHolds(f *os.File) (int, error) {
	var n int32
	rc, err := f.SyscallConn()
	if err != nil {
		return 0, err
	}
	var errno syscall.Errno
	if err := rc.Control(func(fd uintptr) {
		_, _, errno = syscall.Syscall(syscall.SYS_IOCTL, fd, syscall.TIOCINQ, uintptr(unsafe.Pointer(&n)))
	}); err != nil {
		return 0, err
	}
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
