package standin

import (
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/wucreate"
)

// The template of TestNativeMatchesCreateWork: every job parameter a
// template may give, a constant input, a gzipped variable one.
const tmplAllParams = `<file_info><number>0</number><gzip/></file_info>
<file_info><number>1</number><no_delete/></file_info>
<file_info><physical_name>const.dat</physical_name></file_info>
<workunit>
  <file_ref><open_name>in.coor</open_name><copy_file/></file_ref>
  <file_ref><open_name>in.psf</open_name></file_ref>
  <file_ref><open_name>c.dat</open_name></file_ref>
  <rsc_fpops_est>1e9</rsc_fpops_est>
  <rsc_disk_bound>2e9</rsc_disk_bound>
  <rsc_bandwidth_bound>3e5</rsc_bandwidth_bound>
  <delay_bound>7200</delay_bound>
  <max_success_results>1</max_success_results>
  <hr_class>0</hr_class>
  <size_class>1</size_class>
</workunit>
`

// TestNativeMatchesCreateWork creates the same jobs with the stand-in's
// create_work --stdin (a real child process) and with native creation,
// with every work parameter rboinc passes, and compares the workunit and
// assignment rows column by column (ids, names and times aside) and the
// xml_doc byte for byte.
func TestNativeMatchesCreateWork(t *testing.T) {
	// Waits mostly on its processes (create_work, the hook): beside the
	// others that do.
	t.Parallel()
	tp := newProject(t)
	tp.write("templates/all_in", tmplAllParams, 0o644)
	for _, n := range []string{"a.coor", "b.coor", "a.psf"} {
		path := tp.stage(n, "content of "+n+"\n")
		if err := os.WriteFile(path+".gz", []byte("gz of "+n+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if n == "a.coor" { // one with rboinc's sidecar, the others hashed
			sum := md5Of(t, path)
			boinc.WriteSidecar(path, sum, int64(len("content of "+n+"\n")))
		}
	}
	cpath := tp.stage("const.dat", "constant\n")
	boinc.WriteSidecar(cpath, md5Of(t, cpath), int64(len("constant\n")))
	params := []boinc.WorkParams{
		{App: "rbtest"},
		{App: "rbtest", Batch: 7, FpopsEst: 2.5e12, FpopsBound: 1e14, MemoryBound: 3e8, TargetNResults: 2, MinQuorum: 2,
			MaxErrorResults: 5, MaxTotalResults: 10, TargetUser: 3},
	}
	for pi, par := range params {
		jobs := func(suffix string) []boinc.Job {
			return []boinc.Job{
				{WUName: fmt.Sprintf("j%d_1_%s", pi, suffix), WUTemplate: "templates/all_in", ResultTemplate: "templates/rbtest_out", Priority: 3,
					Files: []string{"a.coor", "a.psf"}, CommandLine: "--steps 10 -x 'q'"},
				{WUName: fmt.Sprintf("j%d_2_%s", pi, suffix), WUTemplate: "templates/all_in", ResultTemplate: "templates/rbtest_out", Priority: -2,
					Files: []string{"b.coor", "a.psf"}},
				{WUName: fmt.Sprintf("j%d_3_%s", pi, suffix), WUTemplate: "templates/rbtest_in", ResultTemplate: "templates/rbtest_out",
					Files: []string{"b.coor", "a.psf"}},
			}
		}
		var stdin strings.Builder
		for _, j := range jobs("cw") {
			stdin.WriteString(j.Line() + "\n")
		}
		if _, errs, code := tp.createWork("", stdin.String(), append(par.Args(), "--stdin")...); code != 0 {
			t.Fatalf("create_work: exit %d: %s", code, errs)
		}
		db := tp.db()
		r, err := wucreate.Start(context.Background(), tp.p, db, par, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs("nat") {
			if err := r.Add(j); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Finish(); err != nil {
			t.Fatal(err)
		}
		for i, cw := range jobs("cw") {
			nat := jobs("nat")[i]
			a, b := tp.wuRow(cw.WUName), tp.wuRow(nat.WUName)
			if !reflect.DeepEqual(a, b) {
				for k := range a {
					if !reflect.DeepEqual(a[k], b[k]) {
						t.Errorf("%s: column %s: create_work %v, native %v", nat.WUName, k, a[k], b[k])
					}
				}
			}
			if len(a) < 30 {
				t.Fatalf("only %d columns compared", len(a))
			}
			if ac, bc := tp.asgRows(cw.WUName), tp.asgRows(nat.WUName); !reflect.DeepEqual(ac, bc) || (par.TargetUser != 0) != (len(ac) == 1) {
				t.Errorf("%s: assignment rows: create_work %v, native %v", nat.WUName, ac, bc)
			}
		}
	}
}

// wuRow is a workunit row by column, without the columns that differ
// between two creations of the same job.
func (tp *testProject) wuRow(name string) map[string]any {
	tp.t.Helper()
	return tp.rowOf(`SELECT * FROM workunit WHERE name = ?`, name, "id", "name", "create_time", "transition_time", "mod_time")
}

func (tp *testProject) asgRows(wu string) []map[string]any {
	tp.t.Helper()
	r := tp.rowOf(`SELECT a.* FROM assignment a JOIN workunit w ON w.id = a.workunitid WHERE w.name = ?`, wu, "id", "workunitid", "create_time")
	if r == nil {
		return nil
	}
	return []map[string]any{r}
}

func (tp *testProject) rowOf(q, arg string, skip ...string) map[string]any {
	tp.t.Helper()
	rows, err := tp.db().Query(q, arg)
	if err != nil {
		tp.t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if !rows.Next() {
		return nil
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		tp.t.Fatal(err)
	}
	out := map[string]any{}
	for i, c := range cols {
		skipped := false
		for _, s := range skip {
			skipped = skipped || c == s
		}
		if !skipped {
			if b, ok := vals[i].([]byte); ok {
				vals[i] = string(b)
			}
			out[c] = vals[i]
		}
	}
	return out
}

// TestNativeTwiceCreatesOnce: a native run repeated (a revived step whose
// work unit exists) leaves the existing rows alone and adds none.
func TestNativeTwiceCreatesOnce(t *testing.T) {
	tp := newProject(t)
	tp.stage("a.coor", "a\n")
	tp.stage("a.psf", "p\n")
	par := boinc.WorkParams{App: "rbtest", TargetUser: 1}
	jobs := []boinc.Job{{WUName: "twice_1", WUTemplate: "templates/rbtest_in", ResultTemplate: "templates/rbtest_out", Files: []string{"a.coor", "a.psf"}},
		{WUName: "twice_2", WUTemplate: "templates/rbtest_in", ResultTemplate: "templates/rbtest_out", Files: []string{"a.coor", "a.psf"}}}
	for round := range 2 {
		r, err := wucreate.Start(context.Background(), tp.p, tp.db(), par, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, j := range jobs[:1+round] {
			if err := r.Add(j); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.Finish(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	if n, a := tp.nWU(), tp.count(`SELECT count(*) FROM assignment`); n != 2 || a != 2 {
		t.Errorf("%d work units and %d assignments, want 2 and 2", n, a)
	}
}

// TestSharedPrepareMatchesStore: every create_work option of a job
// (targets, broadcast, keywords, credit, ...) prepared by the shared job
// processing and inserted many per statement (StoreAll) gives the rows the
// stand-in's create_work inserts one by one.
func TestSharedPrepareMatchesStore(t *testing.T) {
	// Waits mostly on its processes (create_work, the hook): beside the
	// others that do.
	t.Parallel()
	tp := newProject(t)
	tmpl := strings.Replace(tmplIn3a, "  <command_line>--steps 10</command_line>\n", "", 1)
	tp.write("templates/rbtest_in", tmpl, 0o644)
	tp.stage("a.coor", "a\n")
	tp.stage("a.psf", "p\n")
	common := []string{"--appname", "rbtest", "--batch", "4", "--priority", "6", "--keywords", "k1 k2", "--credit", "2.5",
		"--delay_bound", "999", "--hr_class", "2", "--app_version_num", "710", "--rsc_disk_bound", "5e9", "--size_class", "0",
		"--sub_appname", "sub & x", "--command_line", "-v", "--max_success_results", "3", "--max_total_results", "4", "--max_error_results", "2", "--target_nresults", "2", "--min_quorum", "2"}
	for i, target := range [][]string{nil, {"--target_host", "5"}, {"--target_team", "8"}, {"--target_user", "9"},
		{"--broadcast"}, {"--broadcast_user", "2"}, {"--broadcast_team", "3"}} {
		args := append(append([]string{}, common...), target...)
		cwName, natName := fmt.Sprintf("opt%d_cw", i), fmt.Sprintf("opt%d_nat", i)
		if _, errs, code := tp.createWork("", "", append(args, "--wu_name", cwName, "a.coor", "a.psf")...); code != 0 {
			t.Fatalf("create_work %v: %s", target, errs)
		}
		o, err := parseArgs(append(args, "--wu_name", natName, "a.coor", "a.psf"), os.Stderr)
		if err != nil {
			t.Fatal(err)
		}
		o.job.WUTemplateFile = "templates/rbtest_in"
		o.job.WU.ResultTemplateFile = "templates/rbtest_out"
		env := wucreate.Env{Project: tp.p, ProjPrefix: ".", App: "rbtest", Stdout: os.Stdout, Stderr: os.Stderr}
		w, code, skipped := env.Prepare(&o.job, tmpl)
		if code != 0 || skipped {
			t.Fatalf("prepare: %d %v", code, skipped)
		}
		db := tp.db()
		appID, _ := wucreate.AppID(context.Background(), db, tp.dir, "rbtest", true)
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if err := wucreate.StoreAll(context.Background(), tx, appID, []*wucreate.Row{w}); err != nil {
			t.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if a, b := tp.wuRow(cwName), tp.wuRow(natName); !reflect.DeepEqual(a, b) {
			t.Errorf("%v: create_work %v\nnative %v", target, a, b)
		}
		if a, b := tp.asgRows(cwName), tp.asgRows(natName); !reflect.DeepEqual(a, b) || (target != nil) != (len(a) == 1) {
			t.Errorf("%v: assignments: create_work %v, native %v", target, a, b)
		}
	}
}
