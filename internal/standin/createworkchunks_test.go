package standin

import (
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// stdinRun is create_work --stdin still reading its input.
type stdinRun struct {
	tp     *testProject
	cmd    *exec.Cmd
	in     io.WriteCloser
	stderr bytes.Buffer
}

func (tp *testProject) startStdin(args ...string) *stdinRun {
	tp.t.Helper()
	r := &stdinRun{tp: tp, cmd: exec.Command(tp.path("bin/create_work"), append([]string{"--appname", "rbtest", "--stdin"}, args...)...)}
	r.cmd.Dir = tp.dir
	r.cmd.Stderr = &r.stderr
	var err error
	if r.in, err = r.cmd.StdinPipe(); err != nil {
		tp.t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		tp.t.Fatal(err)
	}
	tp.t.Cleanup(func() { r.cmd.Process.Kill(); r.cmd.Wait() })
	return r
}

func (r *stdinRun) write(lines ...string) {
	r.tp.t.Helper()
	if _, err := io.WriteString(r.in, strings.Join(lines, "\n")+"\n"); err != nil {
		r.cmd.Wait()
		r.tp.t.Fatalf("%v; create_work: %s", err, r.stderr.String())
	}
}

// end closes the input and returns the exit status.
func (r *stdinRun) end() int {
	r.in.Close()
	err := r.cmd.Wait()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode()
	} else if err != nil {
		r.tp.t.Fatal(err)
	}
	return 0
}

// waitRows waits (a while) until query counts want rows, the input still open.
func (tp *testProject) waitRows(want int, query string) {
	tp.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := tp.count(query)
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			tp.t.Fatalf("%d rows for %s before the input ended, want %d", n, query, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// BOINC's create_work creates an assigned job as soon as it reads its line,
// one at a time, whether the command line or the line assigns it; a failure
// later leaves it in place.
func TestStdinAssignedJobsInsertedAsRead(t *testing.T) {
	t.Parallel()
	tp := newProject(t)
	tp.stage("b.coor", "b\n")
	tp.stage("a_in1.psf", "psf-content!\n")
	r := tp.startStdin("--target_user", "7")
	r.write("--wu_name as1 b.coor a_in1.psf")
	tp.waitRows(1, `SELECT count(*) FROM workunit WHERE name='as1'`)
	if tp.count(`SELECT count(*) FROM assignment WHERE target_id=7`) != 1 {
		t.Error("assignment row missing")
	}
	r.write("--wu_name as2 b.coor a_in1.psf")
	tp.waitRows(1, `SELECT count(*) FROM workunit WHERE name='as2'`)
	r.write("--wu_name as3 gone.coor a_in1.psf")
	if code := r.end(); code != 1 || !strings.Contains(r.stderr.String(), "create_work: ") {
		t.Fatalf("exit %d, stderr %q", code, r.stderr.String())
	}
	if tp.count(`SELECT count(*) FROM workunit WHERE name IN ('as1', 'as2', 'as3')`) != 2 {
		t.Error("the jobs created before the failure are not all there")
	}

	// Assigned by its line: created at once, while unassigned lines before
	// it wait for the end of the input.
	r = tp.startStdin()
	r.write("--wu_name un1 b.coor a_in1.psf", "--wu_name pl1 --target_host 3 b.coor a_in1.psf")
	tp.waitRows(1, `SELECT count(*) FROM workunit WHERE name='pl1'`)
	if tp.count(`SELECT count(*) FROM workunit WHERE name='un1'`) != 0 {
		t.Error("an unassigned job was inserted before its input ended")
	}
	if code := r.end(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, r.stderr.String())
	}
	if tp.count(`SELECT count(*) FROM workunit WHERE name IN ('un1', 'pl1')`) != 2 {
		t.Error("jobs missing at the end")
	}
}

// Unassigned jobs are inserted in chunks of about 1 MB of row text while
// the input is still read; a failure after a chunk leaves the chunk.
func TestStdinInsertsInChunks(t *testing.T) {
	t.Parallel()
	tp := newProject(t)
	tp.write("templates/rbtest_in", strings.Replace(tmplIn3a, "  <command_line>--steps 10</command_line>\n", "", 1), 0o644)
	tp.stage("b.coor", "b\n")
	tp.stage("a_in1.psf", "psf-content!\n")
	r := tp.startStdin()
	// Each row carries a 3,000-byte command line: a chunk is some 300 rows.
	arg := strings.Repeat("x", 3000)
	n := 0
	for ; n < 2000; n++ {
		r.write(fmt.Sprintf("--wu_name ch_%d --command_line %s b.coor a_in1.psf", n, arg))
		if n%50 == 49 && tp.count(`SELECT count(*) FROM workunit WHERE name LIKE 'ch!_%' ESCAPE '!'`) > 0 {
			break
		}
	}
	if n == 2000 {
		t.Fatal("no row inserted before the input ended, after 6 MB of jobs")
	}
	inserted := tp.count(`SELECT count(*) FROM workunit`)
	if inserted < 200 || inserted > 400 {
		t.Errorf("a chunk of %d rows; about 1 MB is some 300 of these", inserted)
	}
	// A failing line: what was inserted stays, what was gathered since is not inserted.
	r.write("--wu_name ch_bad gone.coor a_in1.psf")
	if code := r.end(); code != 1 {
		t.Fatalf("exit %d, stderr %q", code, r.stderr.String())
	}
	if got := tp.nWU(); got != inserted {
		t.Errorf("%d work units after the failure, want the %d inserted before it", got, inserted)
	}

	// A whole run: every row, in chunks, the last at the end of the input.
	r = tp.startStdin()
	for i := range 1000 {
		r.write(fmt.Sprintf("--wu_name all_%d --command_line %s b.coor a_in1.psf", i, arg))
	}
	if code := r.end(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, r.stderr.String())
	}
	if got := tp.count(`SELECT count(*) FROM workunit WHERE name LIKE 'all!_%' ESCAPE '!'`); got != 1000 {
		t.Errorf("%d of 1000 work units", got)
	}
}
