package standin

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/md5sum"
)

func md5Of(t *testing.T, path string) string {
	t.Helper()
	sum, _, err := md5sum.File(path)
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// The xml_doc of observations 3a, byte for byte (md5s differ: other content).
func TestXMLDoc3a(t *testing.T) {
	tp := newProject(t)
	a := tp.stage("a_in1.coor", "0123456789ab\n")
	b := tp.stage("a_in1.psf", "psf-content!\n")
	out, errs, code := tp.createWork("", "", "--appname", "rbtest", "--wu_name", "rb_a1",
		"--wu_template", "templates/rbtest_in", "--result_template", "templates/rbtest_out", "a_in1.coor", "a_in1.psf")
	if code != 0 || out != "" || errs != "" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	want := `<file_info>
    <name>a_in1.coor</name>
    <url>http://127.0.0.1/rbtest/download/17f/a_in1.coor</url>
    <md5_cksum>MD5A</md5_cksum>
    <nbytes>13</nbytes>
</file_info>
<file_info>
    <name>a_in1.psf</name>
    <url>http://127.0.0.1/rbtest/download/39c/a_in1.psf</url>
    <md5_cksum>MD5B</md5_cksum>
    <nbytes>13</nbytes>
</file_info>
<workunit>
<command_line>

</command_line>
<file_ref>
    <file_name>a_in1.coor</file_name>
    <open_name>in.coor</open_name>
    <copy_file/>
<rboinc/>
</file_ref>
<file_ref>
    <file_name>a_in1.psf</file_name>
    <open_name>in.psf</open_name>
<rboinc/>
</file_ref>
<command_line>
--steps 10
</command_line>
</workunit>`
	want = strings.NewReplacer("MD5A", md5Of(t, a), "MD5B", md5Of(t, b)).Replace(want)
	if got := tp.xmlDoc("rb_a1"); got != want {
		t.Errorf("xml_doc:\n%s\nwant:\n%s", got, want)
	}
	var fpops, bound, mem, disk float64
	var delay, mq, tn, me, mt, ms, sc, batch int
	var rt string
	err := tp.db().QueryRow(`SELECT rsc_fpops_est, rsc_fpops_bound, rsc_memory_bound, rsc_disk_bound, delay_bound,
		min_quorum, target_nresults, max_error_results, max_total_results, max_success_results, size_class, batch,
		result_template_file FROM workunit WHERE name = 'rb_a1'`).
		Scan(&fpops, &bound, &mem, &disk, &delay, &mq, &tn, &me, &mt, &ms, &sc, &batch, &rt)
	if err != nil {
		t.Fatal(err)
	}
	if fpops != 1e9 || bound != 1e12 || mem != 5e8 || disk != 1e9 || delay != 604800 ||
		mq != 1 || tn != 1 || me != 1 || mt != 1 || ms != 1 || sc != -1 || batch != 0 || rt != "templates/rbtest_out" {
		t.Errorf("row fields %v %v %v %v %v %v %v %v %v %v %v %v %q", fpops, bound, mem, disk, delay, mq, tn, me, mt, ms, sc, batch, rt)
	}
	// Sidecars were written in BOINC's format.
	if data, _ := os.ReadFile(a + ".md5"); string(data) != boinc.SidecarText(md5Of(t, a), 13) {
		t.Errorf("sidecar %q", data)
	}
}

// The sample pair from boinc-samples: what the real server accepted.
func TestXMLDocSample(t *testing.T) {
	tp := newProject(t)
	for _, f := range []string{"rboinc-annotated_in", "rboinc-annotated_out"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		tp.write("templates/"+f, string(data), 0o644)
	}
	p := tp.stage("p1_in.coor", "first job input\n")
	_, errs, code := tp.createWork("", "", "-appname", "rbtest", "-wu_name", "p1", "-wu_template",
		"templates/rboinc-annotated_in", "-result_template", "templates/rboinc-annotated_out", "p1_in.coor")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	want := "<file_info>\n    <name>p1_in.coor</name>\n    <url>http://127.0.0.1/rbtest/download/" +
		boinc.FilenameHash("p1_in.coor", 1024) + "/p1_in.coor</url>\n    <md5_cksum>" + md5Of(t, p) +
		"</md5_cksum>\n    <nbytes>16</nbytes>\n</file_info>\n<workunit>\n<command_line>\n\n</command_line>\n" +
		"<file_ref>\n    <file_name>p1_in.coor</file_name>\n    <open_name>in</open_name>\n    <copy_file/>\n<rboinc/>\n</file_ref>\n" +
		"<command_line>\n--cpu_time 3\n</command_line>\n</workunit>"
	if got := tp.xmlDoc("p1"); got != want {
		t.Errorf("xml_doc:\n%s\nwant:\n%s", got, want)
	}
	if n := tp.count(`SELECT count(*) FROM workunit WHERE name='p1' AND rsc_fpops_est=1e10 AND rsc_fpops_bound=1e14
		AND rsc_memory_bound=1e8 AND rsc_disk_bound=1e8 AND delay_bound=3600`); n != 1 {
		t.Error("template job parameters not stored")
	}
}

// Every case of the table in observations 3c.
func TestCreateWorkErrors(t *testing.T) {
	// Waits mostly on its processes (create_work, the hook): beside the
	// others that do.
	t.Parallel()
	tp := newProject(t)
	tp.stage("a_in1.coor", "0123456789ab\n")
	tp.stage("a_in1.psf", "psf-content!\n")
	tp.stage("x3", "x")
	dl := tp.p.DownloadDir
	os.Remove(filepath.Join(dl, "3b6"))
	tp.createWork("", "", "--appname", "rbtest", "--wu_name", "rb_a1", "a_in1.coor", "a_in1.psf")
	tmplErr := "process_input_template(): unexpected XML tag or syntax\ncreate_work: unexpected XML tag or syntax\n"
	cases := []struct {
		name   string
		args   []string
		stdout string
		stderr string
		exit   int
	}{
		{"missing input", []string{"--appname", "rbtest", "--wu_name", "m1", "nonexistent.coor", "a_in1.psf"},
			lines("copy " + dl + "/nonexistent.coor to " + dl + "/3b6/nonexistent.coor"),
			lines("md5_file: can't open "+dl+"/3b6/nonexistent.coor", "md5_file: No such file or directory",
				"process_input_template: md5_file fopen() failed", "process_input_template(): fopen() failed",
				"create_work: fopen() failed"), 1},
		{"too few inputs", []string{"--appname", "rbtest", "--wu_name", "m2", "a_in1.coor"},
			"", "Too few var input files given; need at least 2\n" + tmplErr, 1},
		{"too many inputs", []string{"--appname", "rbtest", "--wu_name", "m3", "a_in1.coor", "a_in1.psf", "x3"},
			"", "process_input_template: 3 input files given, but template has 2\n" + tmplErr, 1},
		{"unknown app", []string{"--appname", "nosuchapp", "a_in1.coor", "a_in1.psf"}, "", "create_work: app not found\n", 1},
		{"no appname", []string{"a_in1.coor"}, "", usageText, 1},
		{"help", []string{"--appname", "rbtest", "--help"}, "", usageText, 1},
		{"duplicate", []string{"--appname", "rbtest", "--wu_name", "rb_a1", "a_in1.coor", "a_in1.psf"}, "",
			lines("Database error: Duplicate entry 'rb_a1' for key 'name'", "query=insert into workunit set name='rb_a1', ...",
				"create_work: workunit.insert() Error 1", "create_work: Error 1"), 1},
		{"missing result template", []string{"--appname", "rbtest", "--wu_name", "m4", "--result_template", "templates/does_not_exist",
			"a_in1.coor", "a_in1.psf"}, "", "create_work: result template file ./templates/does_not_exist doesn't exist\n", 0},
		{"unknown option", []string{"--appname", "rbtest", "--frobnicate"}, "", "create_work: bad argument '--frobnicate'\n", 1},
		{"unknown option with value", []string{"--frobnicate", "7", "--appname", "rbtest"}, "", "create_work: bad argument '--frobnicate'\n", 1},
		{"missing value", []string{"--appname", "rbtest", "--wu_name"}, "", "create_work: option '--wu_name' needs a value\n", 1},
		{"missing template", []string{"--appname", "rbtest", "--wu_template", "rbtest_in"}, "",
			"create_work: input template file rbtest_in doesn't exist\n", 1},
		{"zero assign id", []string{"--appname", "rbtest", "--target_host", "0"}, "",
			"you must specify a nonzero database ID for assigning jobs to users, teams, or hosts.\n", 1},
		{"command line twice", []string{"--appname", "rbtest", "--wu_name", "m5", "--command_line", "--foo 1", "a_in1.coor", "a_in1.psf"}, "",
			"Can't specify command line --steps 10; already specified as --foo 1\n" + tmplErr, 1},
		{"sanity", []string{"--appname", "rbtest", "--wu_name", "m6", "--max_error_results", "0", "a_in1.coor", "a_in1.psf"}, "",
			"no max_error_results given; can't create job\ncreate_work: no option\n", 1},
		{"sanity order", []string{"--appname", "rbtest", "--wu_name", "m7", "--max_error_results", "3", "a_in1.coor", "a_in1.psf"}, "",
			"max_error_results > max_total_results; can't create job\ncreate_work: invalid parameter\n", 1},
		{"remote file", []string{"--appname", "rbtest", "--wu_name", "m8", "--remote_file", "http://x/y", "5", "0123", "a_in1.psf"}, "",
			"process_input_template: remote input files (<nbytes> in the template, or --remote_file) are not supported by the BOINC stand-in\n" + tmplErr, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := tp.nWU()
			out, errs, code := tp.createWork("", "", c.args...)
			if out != c.stdout || errs != c.stderr || code != c.exit {
				t.Errorf("got exit %d\nstdout %q\nstderr %q\nwant exit %d\nstdout %q\nstderr %q", code, out, errs, c.exit, c.stdout, c.stderr)
			}
			if n := tp.nWU(); n != before {
				t.Errorf("%d work units created", n-before)
			}
		})
	}
	// The missing input still made its hash directory.
	if !fileExists(filepath.Join(dl, "3b6")) {
		t.Error("hash directory not created")
	}
}

func TestCreateWorkSingle(t *testing.T) {
	tp := newProject(t)
	tp.stage("a_in1.coor", "0123456789ab\n")
	tp.stage("a_in1.psf", "psf-content!\n")
	out, errs, code := tp.createWork("", "", "--appname", "rbtest", "--batch", "77", "--priority", "5", "a_in1.coor", "a_in1.psf")
	m := regexp.MustCompile(`^workunit name: (rbtest_[0-9]+_[0-9]+\.[0-9]{6})\n$`).FindStringSubmatch(out)
	if code != 0 || errs != "" || m == nil {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if tp.count(`SELECT count(*) FROM workunit WHERE name = ? AND batch = 77 AND priority = 5`, m[1]) != 1 {
		t.Error("batch/priority not stored")
	}
	// --verbose; the missing-result-template quirk still names the job.
	out, errs, code = tp.createWork("", "", "--appname", "rbtest", "--verbose", "--result_template", "templates/nope", "a_in1.coor", "a_in1.psf")
	if code != 0 || !strings.HasPrefix(out, "workunit name: rbtest_") || !strings.Contains(errs, "created workunit; name rbtest_") {
		t.Errorf("quirk: exit %d %q %q", code, out, errs)
	}
	// The WU template is relative to the cwd, the result template to the project.
	_, errs, code = tp.createWork("templates", "", "--appname", "rbtest", "--wu_name", "from_tmpl", "--wu_template", "rbtest_in",
		"a_in1.coor", "a_in1.psf")
	if code != 0 || tp.count(`SELECT count(*) FROM workunit WHERE name='from_tmpl'`) != 1 {
		t.Errorf("from templates/: exit %d %s", code, errs)
	}
	// Template parameters override the command line; max_* are raised to target_nresults.
	tp.write("templates/rep_in", strings.Replace(tmplIn3a, "<workunit>", "<workunit>\n<target_nresults>3</target_nresults><min_quorum>2</min_quorum>", 1), 0o644)
	_, errs, code = tp.createWork("", "", "--appname", "rbtest", "--wu_name", "rep", "--wu_template", "templates/rep_in",
		"--target_nresults", "1", "--min_quorum", "1", "--max_total_results", "3", "a_in1.coor", "a_in1.psf")
	if code != 0 || tp.count(`SELECT count(*) FROM workunit WHERE name='rep' AND target_nresults=3 AND min_quorum=2
		AND max_success_results=3 AND max_total_results=3`) != 1 {
		t.Errorf("template parameters: exit %d %s", code, errs)
	}
	// Result template name too long.
	long := "templates/" + strings.Repeat("r", 60)
	tp.write(long, tmplOut, 0o644)
	_, errs, code = tp.createWork("", "", "--appname", "rbtest", "--wu_name", "long", "--result_template", long, "a_in1.coor", "a_in1.psf")
	if code != 1 || errs != "result template filename is too big: 70 bytes, max is 63\ncreate_work: buffer overflow\n" {
		t.Errorf("long result template name: exit %d %q", code, errs)
	}
	// Outside a project.
	cwd := t.TempDir()
	cmd := tp.path("bin/create_work")
	tp2 := &testProject{t: t, dir: cwd}
	os.MkdirAll(filepath.Join(cwd, "bin"), 0o755)
	data, _ := os.ReadFile(cmd)
	tp2.write("bin/create_work", string(data), 0o755)
	_, errs, code = tp2.createWork("", "", "--appname", "rbtest")
	if code != 1 || errs != "Not in a project directory or subdirectory\n" {
		t.Errorf("outside a project: exit %d %q", code, errs)
	}
	// BOINC_PROJECT_DIR with an absolute template, from elsewhere.
	t.Setenv("BOINC_PROJECT_DIR", tp.dir)
	_, errs, code = tp2.createWork("", "", "--appname", "rbtest", "--wu_name", "env1", "--wu_template", tp.path("templates/rbtest_in"),
		"a_in1.coor", "a_in1.psf")
	if code != 0 || tp.count(`SELECT count(*) FROM workunit WHERE name='env1'`) != 1 {
		t.Errorf("BOINC_PROJECT_DIR: exit %d %s", code, errs)
	}
}

func TestCopyFromFlatAndSidecars(t *testing.T) {
	// Waits mostly on its processes (create_work, the hook): beside the
	// others that do.
	t.Parallel()
	tp := newProject(t)
	dl := tp.p.DownloadDir
	tp.write("download/flat_1.coor", "flat content\n", 0o644)
	psf := tp.stage("a_in1.psf", "psf-content!\n")
	// A valid sidecar is trusted even when it lies (same second as the file).
	lie := strings.Repeat("ab", 16)
	os.WriteFile(psf+".md5", []byte(lie+" 3\n"), 0o644)
	out, errs, code := tp.createWork("", "", "--appname", "rbtest", "--wu_name", "flat", "flat_1.coor", "a_in1.psf")
	if code != 0 || errs != "" || out != "copy "+dl+"/flat_1.coor to "+dl+"/a6/flat_1.coor\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if !fileExists(filepath.Join(dl, "flat_1.coor")) || !fileExists(filepath.Join(dl, "a6", "flat_1.coor.md5")) {
		t.Error("flat copy not kept or sidecar not written")
	}
	doc := tp.xmlDoc("flat")
	if !strings.Contains(doc, "<md5_cksum>"+lie+"</md5_cksum>\n    <nbytes>3</nbytes>") {
		t.Errorf("sidecar not used:\n%s", doc)
	}
	// An existing sidecar is never overwritten; an older one is replaced.
	old := time.Now().Add(-time.Hour)
	os.Chtimes(psf+".md5", old, old)
	if _, errs, code := tp.createWork("", "", "--appname", "rbtest", "--wu_name", "flat2", "flat_1.coor", "a_in1.psf"); code != 0 {
		t.Fatal(errs)
	}
	if !strings.Contains(tp.xmlDoc("flat2"), "<md5_cksum>"+md5Of(t, psf)+"</md5_cksum>") {
		t.Error("stale sidecar used")
	}
	if data, _ := os.ReadFile(psf + ".md5"); string(data) != boinc.SidecarText(md5Of(t, psf), 13) {
		t.Errorf("stale sidecar not replaced: %q", data)
	}
	// A malformed sidecar is reported and left alone.
	os.WriteFile(psf+".md5", []byte("junk\n\n"), 0o644)
	_, errs, code = tp.createWork("", "", "--appname", "rbtest", "--wu_name", "flat3", "flat_1.coor", "a_in1.psf")
	if code != 0 || !strings.Contains(errs, "bad MD5 cache file "+psf+".md5") {
		t.Errorf("malformed sidecar: exit %d %q", code, errs)
	}
}

func TestConstantFileAndAnnotations(t *testing.T) {
	tp := newProject(t)
	tp.write("templates/const_in", `<input_template>
<rboinc application="x"><note>dropped</note></rboinc>
<file_info><rboinc a="b"/><number>0</number><no_delete/></file_info>
<file_info><physical_name>const_nomd5.psf</physical_name></file_info>
<workunit>
  <file_ref><open_name>in</open_name><rboinc parameter_name="psf_file">inner text</rboinc></file_ref>
  <file_ref><copy_file/><file_number>1</file_number><rboinc p="nm/ps"/></file_ref>
  <rboinc x="y"/>
  <credit>5</credit>
</workunit>
</input_template>
`, 0o644)
	tp.stage("v.coor", "variable\n")
	c := tp.stage("const_nomd5.psf", "constant\n")
	args := []string{"--appname", "rbtest", "--wu_name", "c1", "--wu_template", "templates/const_in", "v.coor"}
	_, errs, code := tp.createWork("", "", args...)
	if code != 1 || errs != "missing MD5 info file for const_nomd5.psf\nprocess_input_template(): file missing\ncreate_work: file missing\n" {
		t.Fatalf("exit %d %q", code, errs)
	}
	sum := md5Of(t, c)
	boinc.WriteSidecar(c, sum, 9)
	_, errs, code = tp.createWork("", "", args...)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d %q", code, errs)
	}
	want := "<file_info>\n<rboinc/>\n<no_delete/>\n    <name>v.coor</name>\n    <url>http://127.0.0.1/rbtest/download/" +
		boinc.FilenameHash("v.coor", 1024) + "/v.coor</url>\n    <md5_cksum>" + md5Of(t, tp.p.DownloadPath("v.coor")) +
		"</md5_cksum>\n    <nbytes>9</nbytes>\n</file_info>\n" +
		"<file_info>\n    <name>const_nomd5.psf</name>\n    <url>http://127.0.0.1/rbtest/download/3d0/const_nomd5.psf</url>\n" +
		"    <md5_cksum>" + sum + "</md5_cksum>\n    <nbytes>9</nbytes>\n</file_info>\n" +
		"<workunit>\n<command_line>\n\n</command_line>\n" +
		"<file_ref>\n    <file_name>v.coor</file_name>\n    <open_name>in</open_name>\n<rboinc>inner text</rboinc>\n</file_ref>\n" +
		"<file_ref>\n    <file_name>const_nomd5.psf</file_name>\n    <copy_file/>\n<rboinc//>\n    <open_name>const_nomd5.psf</open_name>\n</file_ref>\n" +
		"<rboinc/>\n<credit>5</credit>\n</workunit>"
	if got := tp.xmlDoc("c1"); got != want {
		t.Errorf("xml_doc:\n%s\nwant:\n%s", got, want)
	}
}

func TestStdin(t *testing.T) {
	// Waits mostly on its processes (create_work, the hook): beside the
	// others that do.
	t.Parallel()
	tp := newProject(t)
	tp.write("templates/rbtest_in", strings.Replace(tmplIn3a, "  <command_line>--steps 10</command_line>\n", "", 1), 0o644)
	tp.stage("a_in1.coor", "0123456789ab\n")
	tp.stage("a_in1.psf", "psf-content!\n")
	tp.stage("b.coor", "b\n")
	run := func(stdin string, args ...string) (string, string, int) {
		return tp.createWork("", stdin, append([]string{"--appname", "rbtest", "--stdin"}, args...)...)
	}
	// Silent success; names <base>_<j>; quotes; per-line options.
	out, errs, code := run("a_in1.coor a_in1.psf\n--wu_name 'named one' --command_line \"x  y\" b.coor a_in1.psf\n-priority 9 b.coor a_in1.psf",
		"--wu_name", "base", "--command_line", "--g")
	if out != "" || errs != "" || code != 0 {
		t.Fatalf("exit %d %q %q", code, out, errs)
	}
	if tp.count(`SELECT count(*) FROM workunit WHERE name IN ('base_0', 'named one', 'base_2')`) != 3 {
		t.Error("names")
	}
	if doc := tp.xmlDoc("named one"); !strings.Contains(doc, "<command_line>\n--g x  y\n</command_line>") {
		t.Errorf("command line: %s", doc)
	}
	if tp.count(`SELECT count(*) FROM workunit WHERE name='base_2' AND priority=9`) != 1 {
		t.Error("per-line priority")
	}
	// Generated base name.
	before := tp.nWU()
	if _, errs, code := run("a_in1.coor a_in1.psf\n"); code != 0 {
		t.Fatal(errs)
	}
	if tp.count(`SELECT count(*) FROM workunit WHERE name LIKE 'rbtest%.%' AND name LIKE '%0'`) != 1 {
		t.Error("generated base name")
	}
	gone := "copy " + tp.p.DownloadDir + "/gone.coor to " + tp.p.DownloadPath("gone.coor") + "\n"
	cases := []struct {
		name, stdin string
		args        []string
		stderr      string
		exit, rows  int
	}{
		{"duplicate inside", "--wu_name dupS_1 b.coor a_in1.psf\n--wu_name dupS_1 b.coor a_in1.psf\n", nil,
			lines("Database error: Duplicate entry 'dupS_1' for key 'name'", "query=insert into workunit values ('dupS_1',...),('dupS_1',...)",
				"wu.insert_batch() failed: 1", "MySQL error: Duplicate entry 'dupS_1' for key 'name'"), 1, 0},
		{"duplicate existing", "--wu_name fresh b.coor a_in1.psf\n--wu_name base_0 b.coor a_in1.psf\n", nil,
			lines("Database error: Duplicate entry 'base_0' for key 'name'", "query=insert into workunit values ('fresh',...),('base_0',...)",
				"wu.insert_batch() failed: 1", "MySQL error: Duplicate entry 'base_0' for key 'name'"), 1, 0},
		{"missing input", "--wu_name l1 b.coor a_in1.psf\n--wu_name l2 gone.coor a_in1.psf\n--wu_name l3 b.coor a_in1.psf\n", nil,
			lines("md5_file: can't open "+tp.p.DownloadPath("gone.coor"), "md5_file: No such file or directory",
				"process_input_template: md5_file fopen() failed", "process_input_template(): fopen() failed", "create_work() failed: -108"), 1, 0},
		{"continue on error", "--wu_name l1 b.coor a_in1.psf\n--wu_name l2 gone.coor a_in1.psf\n--wu_name l3 b.coor a_in1.psf\n",
			[]string{"--continue_on_error"},
			lines("md5_file: can't open "+tp.p.DownloadPath("gone.coor"), "md5_file: No such file or directory",
				"process_input_template: md5_file fopen() failed", "process_input_template(): fopen() failed", "create_work() failed: -108"), 0, 2},
		{"wrong count", "--wu_name w1 b.coor a_in1.psf\n--wu_name w2 b.coor\n", nil,
			lines("Too few var input files given; need at least 2", "process_input_template(): unexpected XML tag or syntax", "create_work() failed: -112"), 1, 0},
		{"bad option", "--wu_name o1 b.coor a_in1.psf\n--frob b.coor\n", nil, "create_work: bad stdin argument '--frob'\n", 1, 0},
		{"missing value", "--wu_name o1 b.coor a_in1.psf\nb.coor --wu_name\n", nil, "create_work: stdin option '--wu_name' needs a value\n", 1, 0},
		{"result template first", "--wu_name rt0 --result_template templates/none b.coor a_in1.psf\n--wu_name rt1 b.coor a_in1.psf\n", nil,
			"create_work: result template file ./templates/none doesn't exist\n", 0, 1},
		{"result template later", "--wu_name rtm_1 b.coor a_in1.psf\n--wu_name rtm_2 --result_template templates/none b.coor a_in1.psf\n", nil,
			lines("create_work: result template file ./templates/none doesn't exist", "Database error: Duplicate entry 'rtm_1' for key 'name'",
				"query=insert into workunit values ('rtm_1',...),('rtm_1',...)", "wu.insert_batch() failed: 1",
				"MySQL error: Duplicate entry 'rtm_1' for key 'name'"), 1, 0},
		{"line too long", "--wu_name long b.coor a_in1.psf " + strings.Repeat("x", stdinLineMax) + "\n", nil, "fgets() buffer was too small\n", 1, 0},
		{"per-line template missing", "--wu_template nope_in b.coor\n", nil, "Can't read WU template nope_in\n", 1, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := tp.nWU()
			out, errs, code := run(c.stdin, c.args...)
			wantOut := ""
			if strings.Contains(c.stdin, "gone.coor") {
				wantOut = gone
			}
			if out != wantOut || errs != c.stderr || code != c.exit {
				t.Errorf("got exit %d\nstdout %q\nstderr %q\nwant exit %d\nstderr %q", code, out, errs, c.exit, c.stderr)
			}
			if n := tp.nWU() - before; n != c.rows {
				t.Errorf("%d work units created, want %d", n, c.rows)
			}
		})
	}
	_ = before
}

func TestStdinLineLimit(t *testing.T) {
	t.Parallel()
	tp := newProject(t)
	tp.stage("b.coor", "b\n")
	tp.stage("a_in1.psf", "psf-content!\n")
	// 4094 bytes with the newline is the longest line accepted.
	line := "--wu_name ok b.coor a_in1.psf "
	line += strings.Repeat(" ", stdinLineMax-1-len(line)-1) + "\n"
	if len(line) != stdinLineMax-1 {
		t.Fatal(len(line))
	}
	if _, errs, code := tp.createWork("", line, "--appname", "rbtest", "--stdin"); code != 0 {
		t.Fatalf("exit %d %s", code, errs)
	}
	_, errs, code := tp.createWork("", " "+line, "--appname", "rbtest", "--stdin")
	if code != 1 || errs != "fgets() buffer was too small\n" {
		t.Errorf("exit %d %q", code, errs)
	}
}
