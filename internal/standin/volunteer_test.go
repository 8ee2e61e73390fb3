package standin

import (
	"context"
	"crypto/md5"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

type tlog struct{ t *testing.T }

func (w tlog) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// startVolunteer runs a fast Volunteer until the test ends (or stop is called).
func (tp *testProject) startVolunteer() (stop func()) { return tp.startVolunteerN(2) }

func (tp *testProject) startVolunteerN(parallel int) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	v := &Volunteer{ProjectDir: tp.dir, Parallel: parallel, Poll: 20 * time.Millisecond, HookRetry: 100 * time.Millisecond,
		AppTimeout: time.Minute, Logger: slog.New(slog.NewTextHandler(tlog{tp.t}, nil))}
	done := make(chan error, 1)
	go func() { done <- v.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				tp.t.Error(err)
			}
		})
	}
	tp.t.Cleanup(stop)
	return stop
}

func (tp *testProject) waitFor(what string, cond func() bool) {
	tp.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tp.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (tp *testProject) waitIdle() {
	tp.t.Helper()
	tp.waitFor("the project to be idle", func() bool {
		idle, err := idleIn(tp.db(), tp.dir)
		if err != nil {
			tp.t.Fatal(err)
		}
		return idle
	})
}

func (tp *testProject) read(rel string) string {
	data, _ := os.ReadFile(tp.path(rel))
	return string(data)
}

func (tp *testProject) wuID(name string) int64 {
	tp.t.Helper()
	var id int64
	if err := tp.db().QueryRow(`SELECT id FROM workunit WHERE name = ?`, name).Scan(&id); err != nil {
		tp.t.Fatal(err)
	}
	return id
}

const (
	tmplOut2 = `<output_template>
<file_info>
    <name><OUTFILE_0/></name>
    <url><UPLOAD_URL/></url>
    <max_nbytes>100000</max_nbytes>
</file_info>
<file_info>
    <name><OUTFILE_1/></name>
    <url><UPLOAD_URL/></url>
    <max_nbytes>100000</max_nbytes>
</file_info>
<result>
    <file_ref>
        <file_name><OUTFILE_0/></file_name>
        <open_name>out.coor</open_name>
    </file_ref>
    <file_ref>
        <file_name><OUTFILE_1/></file_name>
        <open_name>out.log</open_name>
    </file_ref>
</result>
</output_template>
`
	// The app: uppercase the coordinates, copy the topology, log its argv.
	appUpper = "#!/bin/sh\necho \"args:$*\" >&2\ntr a-z A-Z < in.coor > out.coor\ncat in.psf > out.log\n"
	// The hook logs its cwd and argv, and reads the first output while it exists.
	hookLog = "#!/bin/sh\necho \"$PWD|$*\" >> ../hook.log\n[ -f \"$2\" ] && cat \"$2\" >> ../hook.out\nexit 0\n"
)

func setupCompute(t *testing.T) *testProject {
	tp := newProject(t)
	tp.write("templates/rbtest_out", tmplOut2, 0o644)
	tp.write("apps/rbtest/run", appUpper, 0o755)
	tp.write("bin/rboinc_hook", hookLog, 0o755)
	return tp
}

func TestVolunteerEndToEnd(t *testing.T) {
	// Waits mostly on its processes (create_work, the hook): beside the
	// others that do.
	t.Parallel()
	tp := setupCompute(t)
	in := tp.stage("a_in1.coor", "coordinates\n")
	psf := tp.stage("a_in1.psf", "topology\n")
	const wu = "run1-TONI_G-0-3-RND0001"
	if _, errs, code := tp.createWork("", "", "--appname", "rbtest", "--wu_name", wu, "a_in1.coor", "a_in1.psf"); code != 0 {
		t.Fatal(errs)
	}
	tp.startVolunteer()
	tp.waitIdle()

	up := regexp.QuoteMeta(tp.p.UploadDir)
	re := regexp.MustCompile(`^` + regexp.QuoteMeta(tp.path("tmp_standin")) + `\|([0-9]+) (` + up + `/[0-9a-f]+/` + wu + `_0_r[0-9]+_0) (` +
		up + `/[0-9a-f]+/` + wu + `_0_r[0-9]+_1)\n$`)
	m := re.FindStringSubmatch(tp.read("hook.log"))
	if m == nil {
		t.Fatalf("hook call %q", tp.read("hook.log"))
	}
	if m[1] != fmt.Sprint(tp.wuID(wu)) || tp.p.UploadPath(m[2][strings.LastIndexByte(m[2], '/')+1:]) != m[2] {
		t.Errorf("hook arguments %q", m[0])
	}
	if got := tp.read("hook.out"); got != "COORDINATES\n" {
		t.Errorf("output seen by the hook: %q", got)
	}
	// file_deleter: inputs, their .md5 and the outputs are gone.
	for _, f := range []string{in, in + ".md5", psf, psf + ".md5", m[2], m[3]} {
		if fileExists(f) {
			t.Errorf("%s not deleted", f)
		}
	}
	if tp.count(`SELECT count(*) FROM workunit WHERE name = ? AND assimilate_state = 2 AND file_delete_state = 2
		AND canonical_resultid > 0 AND error_mask = 0`, wu) != 1 {
		t.Error("work unit state")
	}
	var stderrOut string
	tp.db().QueryRow(`SELECT stderr_out FROM result WHERE name = ?`, wu+"_0").Scan(&stderrOut)
	// As a real client reports it: its version, the app's stderr in
	// <stderr_txt> inside CDATA.
	if want := "\n<core_client_version>7.20.5</core_client_version>\n<![CDATA[\n<stderr_txt>\nargs:--steps 10\n\n</stderr_txt>\n]]>\n"; stderrOut != want {
		t.Errorf("stderr_out %q, want %q", stderrOut, want)
	}
	// The client's report of its uploads, as a real one writes it: each
	// output's physical name, size, MD5 and upload URL, in the result's order.
	var docOut string
	tp.db().QueryRow(`SELECT xml_doc_out FROM result WHERE name = ?`, wu+"_0").Scan(&docOut)
	reOut := regexp.MustCompile(`(?s)^<file_info>\n    <name>` + regexp.QuoteMeta(filepath.Base(m[2])) + `</name>\n    <nbytes>12\.000000</nbytes>\n    <max_nbytes>[0-9]+\.000000</max_nbytes>\n` +
		`    <md5_cksum>` + fmt.Sprintf("%x", md5.Sum([]byte("COORDINATES\n"))) + `</md5_cksum>\n    <upload_url>http[^<]*file_upload_handler</upload_url>\n</file_info>\n` +
		`<file_info>\n    <name>` + regexp.QuoteMeta(filepath.Base(m[3])) + `</name>\n    <nbytes>9\.000000</nbytes>\n.*</file_info>\n$`)
	if !reOut.MatchString(docOut) {
		t.Errorf("result.xml_doc_out:\n%s", docOut)
	}
	if entries, _ := os.ReadDir(tp.path("slots")); len(entries) != 0 {
		t.Errorf("slots left: %v", entries)
	}
}

func TestVolunteerTokensAndNoDelete(t *testing.T) {
	t.Parallel()
	tp := setupCompute(t)
	cfg := tp.read("config.xml")
	cfg = strings.Replace(cfg, "</daemons>", `    <daemon>
            <cmd>script_assimilator -d 3 --app rbtest --script "rboinc_hook wu_name files2 batch_id runtime result_id wu_id files bogus"</cmd>
        </daemon>
    </daemons>`, 1)
	tp.write("config.xml", cfg, 0o644)
	tp.write("templates/rbtest_in", strings.Replace(tmplIn3a, "<file_info><number>0</number>", "<file_info><number>0</number><no_delete/>", 1), 0o644)
	in := tp.stage("keep.coor", "kept\n")
	psf := tp.stage("gone.psf", "topology\n")
	if _, errs, code := tp.createWork("", "", "--appname", "rbtest", "--wu_name", "tok", "--batch", "7", "keep.coor", "gone.psf"); code != 0 {
		t.Fatal(errs)
	}
	tp.startVolunteer()
	tp.waitIdle()
	var wuID, resID int64
	tp.db().QueryRow(`SELECT id, canonical_resultid FROM workunit WHERE name = 'tok'`).Scan(&wuID, &resID)
	p := `(` + regexp.QuoteMeta(tp.p.UploadDir) + `/[0-9a-f]+/tok_0_r[0-9]+_`
	re := regexp.MustCompile(fmt.Sprintf(`^[^|]*\|tok %s0) out.coor %s1) out.log 7 [0-9]+\.[0-9]{6} %d %d %s0) %s1)\n$`,
		p, p, resID, wuID, p, p))
	if !re.MatchString(tp.read("hook.log")) {
		t.Errorf("hook call %q", tp.read("hook.log"))
	}
	if !fileExists(in) || !fileExists(in+".md5") || fileExists(psf) {
		t.Error("no_delete not honoured")
	}
}

func TestVolunteerErrors(t *testing.T) {
	t.Parallel()
	tp := setupCompute(t)
	tp.write("templates/rbtest_in", strings.Replace(tmplIn3a, "  <command_line>--steps 10</command_line>\n", "", 1), 0o644)
	tp.write("apps/rbtest/run", "#!/bin/sh\ncase \"$1\" in fail) echo failing >&2; exit 3;; nooutput) exit 0;; toobig) head -c 100001 /dev/zero > out.coor; cat in.psf > out.log; exit 0;; esac\n"+appUpper[10:], 0o755)
	tp.stage("a_in1.coor", "coordinates\n")
	tp.stage("a_in1.psf", "topology\n")
	tp.stage("b.coor", "b\n")
	stdin := lines("--wu_name e8 --command_line fail b.coor a_in1.psf",
		"--wu_name nodelete_out --command_line nooutput a_in1.coor a_in1.psf",
		"--wu_name nodelete_big --command_line toobig a_in1.coor a_in1.psf")
	if _, errs, code := tp.createWork("", stdin, "--appname", "rbtest", "--stdin", "--batch", "4"); code != 0 {
		t.Fatal(errs)
	}
	if _, errs, code := tp.createWork("", "", "--appname", "rbtest", "--wu_name", "e2", "--command_line", "fail",
		"--max_error_results", "2", "--max_total_results", "3", "b.coor", "a_in1.psf"); code != 0 {
		t.Fatal(errs)
	}
	tp.startVolunteer()
	tp.waitIdle()
	log := tp.read("hook.log")
	for _, want := range []string{
		fmt.Sprintf("|--error 8 e8 %d 4\n", tp.wuID("e8")),
		fmt.Sprintf("|--error 8 nodelete_out %d 4\n", tp.wuID("nodelete_out")),
		fmt.Sprintf("|--error 2 e2 %d 0\n", tp.wuID("e2")),
	} {
		if !strings.Contains(log, want) {
			t.Errorf("hook log %q lacks %q", log, want)
		}
	}
	// Outputs absent or over their max_nbytes after the app exited with 0:
	// each result a compute error with the app's exit status, the client's
	// "upload failure" naming each file in its stderr_out, as BOINC's
	// client reports it (app_finished, report_result_error).
	xferErr := func(k int, code string) string {
		return `<file_xfer_error>\n  <file_name>[a-z_]+_[0-9]+_r[0-9]+_` + strconv.Itoa(k) + `</file_name>\n  <error_code>` + regexp.QuoteMeta(code) + `</error_code>\n</file_xfer_error>\n`
	}
	for wu, want := range map[string]string{
		"nodelete_out": xferErr(0, "-161 (not found)") + xferErr(1, "-161 (not found)"),
		"nodelete_big": xferErr(0, "-131 (file size too big)"),
	} {
		var exit, cs int
		var stderr string
		if err := tp.db().QueryRow(`SELECT r.exit_status, r.client_state, r.stderr_out FROM result r JOIN workunit w ON w.id = r.workunitid
			WHERE w.name = ? AND r.outcome = 3 ORDER BY r.id LIMIT 1`, wu).Scan(&exit, &cs, &stderr); err != nil {
			t.Fatalf("%s: %v", wu, err)
		}
		re := regexp.MustCompile(`(?s)(^|\n)<message>\nupload failure: ` + want + `</message>\n\]\]>\n$`)
		if exit != 0 || cs != clientComputeError || !re.MatchString(stderr) {
			t.Errorf("%s: exit_status %d, client_state %d, stderr_out %q; want 0, %d, ending %s", wu, exit, cs, stderr, clientComputeError, re)
		}
	}
	if n := tp.count(`SELECT count(*) FROM result r JOIN workunit w ON w.id = r.workunitid WHERE w.name = 'e2' AND r.outcome = 3`); n != 3 {
		t.Errorf("e2 ran %d times, want 3 (max_error_results 2)", n)
	}
	// A WU named *nodelete* keeps its inputs; the others lose theirs.
	if !fileExists(tp.p.DownloadPath("a_in1.coor")) || fileExists(tp.p.DownloadPath("b.coor")) {
		t.Error("file deletion after failure")
	}
}

func TestVolunteerHookFailureStalls(t *testing.T) {
	t.Parallel()
	tp := setupCompute(t)
	tp.write("apps/other/run", appUpper, 0o755)
	tp.write("templates/other_in", tmplIn3a, 0o644)
	tp.write("templates/other_out", tmplOut2, 0o644)
	tp.write("bin/rboinc_hook", "#!/bin/sh\ncase \"$*\" in *stall*) if [ -e ../fail ]; then echo \"fail $1\" >> ../hook.log; exit 1; fi;; esac\necho \"ok $1\" >> ../hook.log\n", 0o755)
	tp.write("fail", "", 0o644)
	for _, f := range []string{"a.coor", "b.coor", "c.coor", "x.psf"} {
		tp.stage(f, f+"\n")
	}
	tp.write("templates/rbtest_in", strings.Replace(tmplIn3a, "<file_info><number>1</number>", "<file_info><number>1</number><no_delete/>", 1), 0o644)
	tp.write("templates/other_in", tp.read("templates/rbtest_in"), 0o644)
	if _, errs, code := tp.createWork("", lines("--wu_name stall_a a.coor x.psf", "--wu_name behind_b b.coor x.psf"), "--appname", "rbtest", "--stdin"); code != 0 {
		t.Fatal(errs)
	}
	if _, errs, code := tp.createWork("", "", "--appname", "other", "--wu_name", "other_c", "c.coor", "x.psf"); code != 0 {
		t.Fatal(errs)
	}
	a, b, c := tp.wuID("stall_a"), tp.wuID("behind_b"), tp.wuID("other_c")
	// One at a time, so that stall_a (lowest id) is ready first.
	tp.startVolunteerN(1)
	failA := fmt.Sprintf("fail %d\n", a)
	tp.waitFor("the hook to fail twice on stall_a", func() bool { return strings.Count(tp.read("hook.log"), failA) >= 2 })
	tp.waitFor("the other app to be assimilated", func() bool { return strings.Contains(tp.read("hook.log"), fmt.Sprintf("ok %d\n", c)) })
	if strings.Contains(tp.read("hook.log"), fmt.Sprintf(" %d\n", b)) {
		t.Fatalf("behind_b was assimilated past the blocked stall_a:\n%s", tp.read("hook.log"))
	}
	os.Remove(tp.path("fail"))
	tp.waitIdle()
	log := tp.read("hook.log")
	okA, okB := strings.Index(log, fmt.Sprintf("ok %d\n", a)), strings.Index(log, fmt.Sprintf("ok %d\n", b))
	if okA < 0 || okB < okA {
		t.Errorf("retry order wrong:\n%s", log)
	}
}

func TestVolunteerWaitsWithoutScript(t *testing.T) {
	t.Parallel()
	tp := setupCompute(t)
	tp.write("config.xml", strings.Replace(tp.read("config.xml"), "<rboinc_standin_default_script>rboinc_hook</rboinc_standin_default_script>", "", 1), 0o644)
	tp.stage("a_in1.coor", "coordinates\n")
	tp.stage("a_in1.psf", "topology\n")
	if _, errs, code := tp.createWork("", "", "--appname", "rbtest", "--wu_name", "w1", "a_in1.coor", "a_in1.psf"); code != 0 {
		t.Fatal(errs)
	}
	tp.startVolunteer()
	tp.waitFor("validation", func() bool { return tp.count(`SELECT count(*) FROM workunit WHERE assimilate_state = 1`) == 1 })
	time.Sleep(100 * time.Millisecond)
	if idle, _ := Idle(tp.dir); idle {
		t.Error("idle with a work unit waiting for assimilation")
	}
	// A second volunteer on the same project is refused.
	err := (&Volunteer{ProjectDir: tp.dir}).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("second volunteer: %v", err)
	}
}

func TestVolunteerFlatHierarchy(t *testing.T) {
	t.Parallel()
	tp := setupCompute(t)
	tp.write("config.xml", strings.Replace(tp.read("config.xml"), "<uldl_dir_fanout>1024</uldl_dir_fanout>", "<uldl_dir_fanout>0</uldl_dir_fanout>", 1), 0o644)
	tp.reload()
	tp.write("download/f.coor", "flat\n", 0o644)
	tp.write("download/f.psf", "flat psf\n", 0o644)
	out, errs, code := tp.createWork("", "", "--appname", "rbtest", "--wu_name", "flat", "f.coor", "f.psf")
	if code != 0 || out != "" || errs != "" {
		t.Fatalf("exit %d %q %q", code, out, errs)
	}
	if !strings.Contains(tp.xmlDoc("flat"), "<url>http://127.0.0.1/rbtest/download/f.coor</url>") {
		t.Errorf("flat URL: %s", tp.xmlDoc("flat"))
	}
	tp.startVolunteer()
	tp.waitIdle()
	re := regexp.MustCompile(`\|[0-9]+ ` + regexp.QuoteMeta(tp.p.UploadDir) + `/flat_0_r[0-9]+_0 ` + regexp.QuoteMeta(tp.p.UploadDir) + `/flat_0_r[0-9]+_1\n$`)
	if !re.MatchString(tp.read("hook.log")) || tp.read("hook.out") != "FLAT\n" {
		t.Errorf("hook call %q, output %q", tp.read("hook.log"), tp.read("hook.out"))
	}
}

// TestVolunteerStandby: a second volunteer on a project another holds (a
// second host's server) fails at once unless it is a standby, which waits
// and takes the project over when the first ends.
func TestVolunteerStandby(t *testing.T) {
	tp := newProject(t)
	// The first a standby too: this test's probe of the lock below holds
	// it for a moment, and a plain volunteer starting in that moment
	// would give up.
	firstCtx, stopFirstCtx := context.WithCancel(context.Background())
	t.Cleanup(stopFirstCtx)
	firstDone := make(chan error, 1)
	go func() {
		firstDone <- (&Volunteer{ProjectDir: tp.dir, Standby: true, Poll: 20 * time.Millisecond,
			Logger: slog.New(slog.NewTextHandler(tlog{t}, nil))}).Run(firstCtx)
	}()
	stopFirst := func() {
		stopFirstCtx()
		if err := <-firstDone; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("the first volunteer: %v", err)
		}
	}
	tp.waitFor("the first volunteer to hold the project", func() bool {
		unlock, err := lockProject(tp.dir)
		if err == nil {
			unlock()
		}
		return err != nil
	})
	quiet := slog.New(slog.NewTextHandler(tlog{t}, nil))
	if err := (&Volunteer{ProjectDir: tp.dir, Logger: quiet}).Run(context.Background()); err == nil || !strings.Contains(err.Error(), "another volunteer") {
		t.Fatalf("a second volunteer, not a standby: %v, want \"another volunteer is already running\"", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- (&Volunteer{ProjectDir: tp.dir, Standby: true, Poll: 20 * time.Millisecond, Logger: quiet}).Run(ctx)
	}()
	select {
	case err := <-done:
		t.Fatalf("the standby returned while the first volunteer held the project: %v", err)
	case <-time.After(3 * standbyPoll / 2):
	}
	stopFirst()
	tp.waitFor("the standby to take the project over", func() bool {
		unlock, err := lockProject(tp.dir)
		if err == nil {
			unlock()
		}
		return err != nil
	})
	cancel()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		t.Fatalf("the standby after taking over: %v", err)
	}
}
