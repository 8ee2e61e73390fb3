package standin

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/internal/longtest"
	"github.com/rboinc/rboinc/internal/mariadbtest"
)

// TestMain lets the test binary be the rboinc-server that bin/create_work
// re-enters, so create_work runs in a real child process.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "standin" && os.Args[2] == "create_work" {
		os.Exit(CreateWorkMain(os.Args[3:], os.Stdin, os.Stdout, os.Stderr))
	}
	if len(os.Args) > 2 && os.Args[1] == "standin" && os.Args[2] == "cancel_jobs" {
		os.Exit(CancelJobsMain(os.Args[3:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 2 && os.Args[1] == "standin" && os.Args[2] == "holdlock" {
		holdLockMain(os.Args[3])
		return
	}
	// An inherited BOINC_PROJECT_DIR would steer every test's
	// create_work to another project (the tests run side by side, so
	// once for all, not with t.Setenv).
	os.Unsetenv("BOINC_PROJECT_DIR")
	// The parallel tests mostly wait on their processes (create_work, the
	// app, the hook): 14 s of processor time in a 92 s run two at a time.
	flag.Parse()
	longtest.AtLeastAtOnce(testsAtOnce)
	code := m.Run()
	mariadbtest.StopShared()
	os.Exit(code)
}

// testsAtOnce is how many parallel tests run at once unless go test's
// -parallel says otherwise.
const testsAtOnce = 4

// testDBEnv names the engine the tests' projects keep BOINC's database
// in: "mariadb" runs every test of the package on a private MariaDB
// server (CI runs the package both ways); anything else, SQLite.
const testDBEnv = "RBOINC_TEST_BOINC_DB"

// testDBURL is a new project's database for InitOptions.DBURL.
func testDBURL(t *testing.T) string {
	if os.Getenv(testDBEnv) != "mariadb" {
		return ""
	}
	return "mysql://" + mariadbtest.NewDB(t)
}

// The RBoinc-annotated template pair of boinc-real-observations.md 3a.
const (
	tmplIn3a = `<rboinc application="rbtest" description="x"/>
<file_info><number>0</number></file_info>
<file_info><number>1</number></file_info>
<workunit>
  <file_ref><file_number>0</file_number><open_name>in.coor</open_name><copy_file/>
     <rboinc parameter_name="coor_file" parameter_description="Coordinates" optional="true"/></file_ref>
  <file_ref><file_number>1</file_number><open_name>in.psf</open_name>
     <rboinc parameter_name="psf_file" parameter_description="Topology"/></file_ref>
  <command_line>--steps 10</command_line>
  <rsc_fpops_est>1e9</rsc_fpops_est>
  <rsc_fpops_bound>1e12</rsc_fpops_bound>
</workunit>
`
	tmplOut = `<file_info>
    <name><OUTFILE_0/></name>
    <generated_locally/>
    <upload_when_present/>
    <max_nbytes>5000000</max_nbytes>
    <url><UPLOAD_URL/></url>
    <rboinc aliases=".coor .coor.gz" chain="0"/>
</file_info>
<result>
    <file_ref>
        <file_name><OUTFILE_0/></file_name>
        <open_name>out.coor</open_name>
        <copy_file/>
    </file_ref>
</result>
`
)

type testProject struct {
	t   *testing.T
	dir string
	p   *boinc.Project

	mu     sync.Mutex
	opened *boincdb.DB // see db
}

// newProject makes a stand-in project with app rbtest (a no-op run script)
// and the 3a templates as templates/rbtest_in and templates/rbtest_out.
func newProject(t *testing.T) *testProject {
	t.Helper()
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if err := InitProject(dir, InitOptions{ServerExe: exe, URLBase: "http://127.0.0.1/rbtest", DBURL: testDBURL(t)}); err != nil {
		t.Fatal(err)
	}
	tp := &testProject{t: t, dir: dir}
	tp.reload()
	tp.write("apps/rbtest/run", "#!/bin/sh\nexit 0\n", 0o755)
	tp.write("templates/rbtest_in", tmplIn3a, 0o644)
	tp.write("templates/rbtest_out", tmplOut, 0o644)
	return tp
}

func (tp *testProject) reload() {
	p, err := boinc.LoadProject(tp.dir)
	if err != nil {
		tp.t.Fatal(err)
	}
	tp.p = p
}

func (tp *testProject) path(rel string) string { return filepath.Join(tp.dir, rel) }

func (tp *testProject) write(rel, content string, mode os.FileMode) {
	tp.t.Helper()
	path := tp.path(rel)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		tp.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		tp.t.Fatal(err)
	}
}

// stage puts an input file into the download hierarchy, as dir_hier_path would.
func (tp *testProject) stage(name, content string) string {
	tp.t.Helper()
	path := tp.p.DownloadPath(name)
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		tp.t.Fatal(err)
	}
	return path
}

// createWork runs bin/create_work in the project dir (or in cwd, relative to it).
func (tp *testProject) createWork(cwd, stdin string, args ...string) (stdout, stderr string, code int) {
	tp.t.Helper()
	cmd := exec.Command(tp.path("bin/create_work"), args...)
	cmd.Dir = tp.path(cwd)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		tp.t.Fatal(err)
	}
	return o.String(), e.String(), code
}

// db is the project's database, opened on first use and kept until the
// test ends: the waits that count rows every 20 ms opened it (its schema
// checked, its tables created if missing) for each look, and kept every
// handle open until the test ended.
func (tp *testProject) db() *boincdb.DB {
	tp.t.Helper()
	tp.mu.Lock()
	defer tp.mu.Unlock()
	if tp.opened != nil {
		return tp.opened
	}
	db, err := openDB(tp.dir)
	if err != nil {
		tp.t.Fatal(err)
	}
	tp.t.Cleanup(func() { db.Close() })
	tp.opened = db
	return db
}

func (tp *testProject) count(query string, args ...any) int {
	tp.t.Helper()
	var n int
	if err := tp.db().QueryRow(query, args...).Scan(&n); err != nil {
		tp.t.Fatal(err)
	}
	return n
}

func (tp *testProject) nWU() int { return tp.count(`SELECT count(*) FROM workunit`) }

func (tp *testProject) xmlDoc(name string) string {
	tp.t.Helper()
	var doc string
	if err := tp.db().QueryRow(`SELECT xml_doc FROM workunit WHERE name = ?`, name).Scan(&doc); err != nil {
		tp.t.Fatalf("work unit %s: %v", name, err)
	}
	return doc
}

func lines(s ...string) string { return strings.Join(s, "\n") + "\n" }
