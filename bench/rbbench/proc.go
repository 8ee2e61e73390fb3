package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// runResult is what one child process cost.
type runResult struct {
	Wall   time.Duration
	CPU    time.Duration // user + system, its waited-for children included
	MaxRSS int64         // bytes, the largest of the process and its children
	Stdout []byte
	Stderr []byte
}

// cmdSpec is one command to run: no shell, arguments as they are.
type cmdSpec struct {
	Dir   string
	Env   []string // added to the environment
	Stdin io.Reader
	Name  string
	Args  []string
}

// run starts a command, waits for it and measures it. Its stderr goes to
// the error on failure.
func run(ctx context.Context, c cmdSpec) (runResult, error) {
	cmd := exec.CommandContext(ctx, c.Name, c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.Stdin = c.Stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	err := cmd.Run()
	r := runResult{Wall: time.Since(t0), Stdout: out.Bytes(), Stderr: errb.Bytes()}
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			r.CPU = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			r.MaxRSS = ru.Maxrss * 1024
		}
	}
	if err != nil {
		msg := strings.TrimSpace(errb.String())
		if len(msg) > 2000 {
			msg = msg[:2000] + "..."
		}
		return r, fmt.Errorf("%s %s: %v: %s", filepath.Base(c.Name), strings.Join(c.Args, " "), err, msg)
	}
	return r, nil
}

// best runs fn n times and returns the fastest wall time and the median.
func best(n int, fn func() (time.Duration, error)) (fastest, median time.Duration, err error) {
	var ds []time.Duration
	for i := 0; i < n; i++ {
		d, err := fn()
		if err != nil {
			return 0, 0, err
		}
		ds = append(ds, d)
	}
	slices.Sort(ds)
	return ds[0], ds[len(ds)/2], nil
}

// median of some durations (not modified).
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// procMem reads a process's resident set size and its peak (VmHWM) since
// start or the last resetPeak.
func procMem(pid int) (rss, peak int64, err error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (k != "VmRSS" && k != "VmHWM") {
			continue
		}
		fs := strings.Fields(v)
		if len(fs) != 2 || fs[1] != "kB" {
			continue
		}
		n, err := strconv.ParseInt(fs[0], 10, 64)
		if err != nil {
			continue
		}
		if k == "VmRSS" {
			rss = n * 1024
		} else {
			peak = n * 1024
		}
	}
	if rss == 0 || peak == 0 {
		return rss, peak, errors.New("no VmRSS/VmHWM in /proc status")
	}
	return rss, peak, sc.Err()
}

// resetPeak makes VmHWM start again from the current RSS (Linux >= 4.0).
func resetPeak(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// loadAvg is the 1-minute load average, to show how busy the machine was.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// appendLog adds b to the file at path; a failure only loses the log.
func appendLog(path string, b []byte) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return
	}
	f.Write(b)
	f.Close()
}
