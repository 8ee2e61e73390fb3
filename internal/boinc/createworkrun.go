package boinc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// CreateWorkRun is one `bin/create_work --stdin` run fed a job at a time,
// so that create_work (a process of its own, on another core) reads and
// prepares jobs while the caller is still producing them. create_work
// inserts the jobs only once its standard input ends: Finish closes it and
// waits; Abort kills the process before that, and then no job exists.
type CreateWorkRun struct {
	cmd    *exec.Cmd
	proj   *Project
	stdin  io.WriteCloser
	feed   *lineFeed
	out    lockedBuffer
	seen   map[string]bool // result templates already checked
	jobs   int
	done   bool
	failed error // the first failure to hand a job over
}

// StartCreateWork starts create_work --stdin in the project directory.
func StartCreateWork(ctx context.Context, p *Project, params WorkParams) (*CreateWorkRun, error) {
	args := append(params.Args(), "--stdin")
	r := &CreateWorkRun{proj: p, seen: map[string]bool{}}
	r.cmd = exec.CommandContext(ctx, filepath.Join(p.Dir, "bin", "create_work"), args...)
	r.cmd.Dir = p.Dir
	// Its own process group, killed whole: a wrapper script that does not
	// exec must not leave a create_work behind that would see its input end
	// (and insert the jobs) when this process closes it. Killed as well
	// when this process dies (see createWorkProcAttr).
	r.cmd.SysProcAttr = createWorkProcAttr()
	r.cmd.Cancel = r.kill
	r.cmd.Stdout = &r.out
	r.cmd.Stderr = &r.out
	in, err := r.cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("starting create_work: %w", err)
	}
	if err := r.cmd.Start(); err != nil {
		in.Close()
		return nil, fmt.Errorf("starting create_work: %w", err)
	}
	r.stdin = in
	r.feed = newLineFeed(in)
	return r, nil
}

// Add checks a job and hands it to create_work (buffered: Flush or Finish
// sends what is pending). A job refused here leaves the run usable, but
// the caller normally aborts it.
func (r *CreateWorkRun) Add(j Job) error {
	if r.failed != nil {
		return r.failed
	}
	line, err := checkedLine(r.proj, j, r.seen)
	if err != nil {
		return err
	}
	return r.addLine(line)
}

// addLine hands a checked job line to create_work, whole (see lineFeed).
func (r *CreateWorkRun) addLine(line string) error {
	if r.failed != nil {
		return r.failed
	}
	r.jobs++
	if err := r.feed.add(line); err != nil {
		r.failed = r.exited(err)
		return r.failed
	}
	return nil
}

// Flush sends the jobs buffered so far.
func (r *CreateWorkRun) Flush() error {
	if r.failed != nil {
		return r.failed
	}
	if err := r.feed.flush(); err != nil {
		r.failed = r.exited(err)
		return r.failed
	}
	return nil
}

// Jobs is the number of jobs handed over.
func (r *CreateWorkRun) Jobs() int { return r.jobs }

// Finish ends create_work's input and waits for it: on success every job
// handed over exists. A non-zero exit comes back as an error carrying
// create_work's own messages.
func (r *CreateWorkRun) Finish() error {
	if r.done {
		return errors.New("create_work run already ended")
	}
	if err := r.Flush(); err != nil {
		r.Abort()
		return err
	}
	r.done = true
	if err := r.stdin.Close(); err != nil {
		r.kill()
		r.cmd.Wait()
		return fmt.Errorf("create_work: ending its input: %w", err)
	}
	if err := r.cmd.Wait(); err != nil {
		return fmt.Errorf("create_work failed (%v): %s", err, r.out.excerpt())
	}
	return nil
}

// Abort kills create_work before its input ends, so that it creates none
// of the jobs, and waits for it. It does nothing after Finish.
func (r *CreateWorkRun) Abort() {
	if r.done {
		return
	}
	r.done = true
	r.kill()
	r.stdin.Close()
	r.cmd.Wait()
}

// kill ends create_work and whatever it started.
func (r *CreateWorkRun) kill() error { return killCreateWork(r.cmd.Process) }

// exited turns a failed write to create_work into its own account of why
// it stopped reading (it exits early on a job it refuses).
func (r *CreateWorkRun) exited(werr error) error {
	r.done = true
	r.stdin.Close()
	if err := r.cmd.Wait(); err != nil {
		return fmt.Errorf("create_work failed (%v): %s", err, r.out.excerpt())
	}
	return fmt.Errorf("create_work stopped reading its jobs: %w", werr)
}

// lockedBuffer collects create_work's output; the exec package copies into
// it from its own goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) excerpt() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	msg := strings.TrimSpace(l.b.String())
	if len(msg) > 2000 {
		msg = msg[:2000] + "..."
	}
	return msg
}

// CPU is the processor time create_work used (user and system, its
// children included), once it has ended; 0 before.
func (r *CreateWorkRun) CPU() time.Duration {
	if r.cmd.ProcessState == nil {
		return 0
	}
	return r.cmd.ProcessState.UserTime() + r.cmd.ProcessState.SystemTime()
}
