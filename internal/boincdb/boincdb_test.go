package boincdb

import (
	"context"
	"database/sql"
	"slices"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/sqldb"
)

func TestForProject(t *testing.T) {
	p := &boinc.Project{Dir: "/p", DB: boinc.DBConfig{Host: "db.example:3307", Name: "proj", User: "u", Passwd: "pw"},
		Replica: boinc.DBConfig{Host: "replica"}}
	got, err := ForProject(p, false)
	if err != nil || got.Engine != sqldb.MySQL || got.DSN != "u:pw@tcp(db.example:3307)/proj" {
		t.Errorf("ForProject = %+v, %v", got, err)
	}
	r, err := ReplicaForProject(p, false)
	if err != nil || r.DSN != "u:pw@tcp(replica:3306)/proj" {
		t.Errorf("ReplicaForProject = %+v, %v", r, err)
	}
	p.DB.Host = "localhost"
	if got, _ := ForProject(p, false); !strings.HasPrefix(got.DSN, "u:pw@unix(") {
		t.Errorf("db_host localhost: %s, want the local socket", got.DSN)
	}
	if _, err := ForProject(&boinc.Project{Dir: "/p"}, false); err == nil {
		t.Error("a real project without db_name: no error")
	}
	if got, _ := ForProject(&boinc.Project{Dir: "/p"}, true); got.Engine != sqldb.SQLite || got.DSN != "/p/standin.db" {
		t.Errorf("stand-in default: %+v", got)
	}
	if got, _ := ForProject(&boinc.Project{Dir: "/p", DBURL: "rel.db", DB: p.DB}, true); got.DSN != "/p/rel.db" {
		t.Errorf("rboinc_db_url relative: %+v", got)
	}
}

func TestOpenUnreachable(t *testing.T) {
	_, err := Open(context.Background(), sqldb.Target{Engine: sqldb.MySQL, DSN: "u:secret@tcp(127.0.0.1:1)/d"})
	if err == nil || !strings.Contains(err.Error(), "cannot reach BOINC database") || strings.Contains(err.Error(), "secret") {
		t.Errorf("unreachable server: %v", err)
	}
}

func TestCheckNamesMissingColumn(t *testing.T) {
	engines(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		if err := db.Check(ctx); err != nil {
			t.Fatalf("full schema: %v", err)
		}
		if _, err := db.ExecContext(ctx, "ALTER TABLE workunit DROP COLUMN delay_bound"); err != nil {
			t.Fatal(err)
		}
		err := db.Check(ctx)
		if err == nil || !strings.Contains(err.Error(), "table workunit lacks column delay_bound") {
			t.Errorf("Check = %v", err)
		}
	})
	engines(t, func(t *testing.T, db *DB) {
		if _, err := db.ExecContext(context.Background(), "DROP TABLE result"); err != nil {
			t.Fatal(err)
		}
		if err := db.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "no usable table result") {
			t.Errorf("Check = %v", err)
		}
	})
}

// TestRowsAndAssimilation writes rows as the stand-in does and reads them
// back as the assimilator does, on both engines.
func TestRowsAndAssimilation(t *testing.T) {
	engines(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		app, err := AddApp(ctx, db, "rbtest")
		if err != nil {
			t.Fatal(err)
		}
		if again, _ := AddApp(ctx, db, "rbtest"); again != app {
			t.Errorf("AddApp twice: %d then %d", app, again)
		}
		var ids []int64
		for i, name := range []string{"a", "b", "c", "d"} {
			w := &Workunit{CreateTime: 1, AppID: app, Name: name, XMLDoc: "<x/>", Batch: 7, TransitionTime: Never,
				MinQuorum: 1, TargetNResults: 1, MaxErrorResults: 1, MaxTotalResults: 1, MaxSuccessResults: 1,
				ResultTemplateFile: "templates/r", SizeClass: -1, AssimilateState: AssimilateReady}
			if i == 3 {
				w.AssimilateState = AssimilateInit
			}
			if err := w.Insert(ctx, db); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, w.ID)
		}
		dup := &Workunit{AppID: app, Name: "a", SizeClass: -1}
		if err := dup.Insert(ctx, db); !sqldb.IsDuplicate(err) {
			t.Errorf("duplicate name: %v, want a duplicate error", err)
		}
		r := &Result{WorkunitID: ids[0], Name: "a_0", ServerState: ServerOver, Outcome: OutcomeSuccess, AppID: app,
			XMLDocIn:    `<file_info><name>a_0_r1_0</name></file_info><result><file_ref><file_name>a_0_r1_0</file_name><open_name>out</open_name></file_ref></result>`,
			ElapsedTime: 2.5, SizeClass: -1}
		if err := r.Insert(ctx, db); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `UPDATE workunit SET canonical_resultid = ? WHERE id = ?`, r.ID, ids[0]); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `UPDATE workunit SET error_mask = ? WHERE id = ?`, ErrTooManyErrors, ids[1]); err != nil {
			t.Fatal(err)
		}
		apps, err := db.AppIDs(ctx, []string{"rbtest"})
		if err != nil || apps["rbtest"] != app {
			t.Fatalf("AppIDs = %v, %v", apps, err)
		}
		if _, err := db.AppIDs(ctx, []string{"rbtest", "nope"}); err == nil || !strings.Contains(err.Error(), `no app "nope"`) {
			t.Errorf("AppIDs of an unknown app: %v", err)
		}
		got, err := db.ReadyWUs(ctx, []int64{app}, 0, 2)
		if err != nil || len(got) != 2 {
			t.Fatalf("ReadyWUs = %+v, %v", got, err)
		}
		if got[0].Name != "a" || got[0].Canonical == nil || got[0].Canonical.Name != "a_0" || got[0].Canonical.ElapsedTime != 2.5 || got[0].Batch != 7 {
			t.Errorf("first ready WU: %+v %+v", got[0], got[0].Canonical)
		}
		if got[1].Name != "b" || got[1].ErrorMask != ErrTooManyErrors || got[1].Canonical != nil {
			t.Errorf("second ready WU: %+v", got[1])
		}
		outs, err := OutputFiles(got[0].Canonical.XMLDocIn)
		if err != nil || len(outs) != 1 || outs[0].Name != "a_0_r1_0" || outs[0].OpenName != "out" {
			t.Errorf("OutputFiles = %+v, %v", outs, err)
		}
		rest, err := db.ReadyWUs(ctx, []int64{app}, got[1].ID, 10)
		if err != nil || len(rest) != 1 || rest[0].Name != "c" {
			t.Errorf("next page = %+v, %v", rest, err)
		}
		if err := db.MarkAssimilated(ctx, []int64{ids[0], ids[1], ids[3]}); err != nil {
			t.Fatal(err)
		}
		var state int
		var tt int64
		db.QueryRowContext(ctx, `SELECT assimilate_state, transition_time FROM workunit WHERE id = ?`, ids[0]).Scan(&state, &tt)
		if state != AssimilateDone || tt >= Never {
			t.Errorf("marked WU: assimilate_state %d transition_time %d", state, tt)
		}
		db.QueryRowContext(ctx, `SELECT assimilate_state FROM workunit WHERE id = ?`, ids[3]).Scan(&state)
		if state != AssimilateInit {
			t.Errorf("a WU not ready was marked: state %d", state)
		}
		left, _ := db.ReadyWUs(ctx, []int64{app}, 0, 10)
		if len(left) != 1 || left[0].Name != "c" {
			t.Errorf("after marking: %+v", left)
		}
	})
}

func TestTxRetriesAndRollsBack(t *testing.T) {
	engines(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		err := db.Tx(ctx, func(tx *sql.Tx) error {
			if _, err := AddApp(ctx, tx, "gone"); err != nil {
				return err
			}
			return sql.ErrConnDone
		})
		if err != sql.ErrConnDone {
			t.Fatalf("Tx = %v", err)
		}
		if _, found, _ := AppID(ctx, db, "gone"); found {
			t.Error("a failed transaction left its row")
		}
	})
}

func TestOutputFilesOptional(t *testing.T) {
	outs, err := OutputFiles(`<file_info><name>f1</name><optional/></file_info><file_info><name>f2</name></file_info>
<result><file_ref><file_name>f1</file_name><open_name>a</open_name></file_ref>
<file_ref><file_name>f2</file_name><open_name>b</open_name><optional/></file_ref>
<file_ref><file_name>f3</file_name><open_name>c</open_name></file_ref></result>`)
	if err != nil || len(outs) != 3 || !outs[0].Optional || !outs[1].Optional || outs[2].Optional {
		t.Errorf("OutputFiles = %+v, %v", outs, err)
	}
	if _, err := OutputFiles(`<result><file_ref><open_name>x</open_name></file_ref></result>`); err == nil {
		t.Error("a file_ref without file_name: no error")
	}
}

// TestOutputFilesScansBOINCsShape: a result's xml_doc_in as BOINC writes
// it (its result template filled in) is read by the scan, not handed to
// the XML parser; a document the scan does not know is.
func TestOutputFilesScansBOINCsShape(t *testing.T) {
	doc := "<file_info>\n    <name>w_0_r1_0</name>\n    <generated_locally/>\n    <upload_when_present/>\n    <max_nbytes>5000000</max_nbytes>\n" +
		"    <rboinc aliases=\".coor\" chain=\"1\"/>\n    <rboinc aliases='.log .log.gz' />\n" +
		"    <url>http://h/p_cgi/file_upload_handler</url>\n</file_info>\n<file_info>\n    <name>w_0_r1_1</name>\n    <optional/>\n</file_info>\n" +
		"<result>\n    <name>w_0_r1</name>\n    <file_ref>\n        <file_name>w_0_r1_0</file_name>\n        <open_name>output.coor</open_name>\n" +
		"        <copy_file/>\n    </file_ref>\n    <file_ref>\n        <file_name>w_0_r1_1</file_name>\n        <open_name>log</open_name>\n    </file_ref>\n</result>\n"
	outs, err, ok := scanOutputFiles(doc)
	want := []OutputFile{{Name: "w_0_r1_0", OpenName: "output.coor"}, {Name: "w_0_r1_1", OpenName: "log", Optional: true}}
	if !ok || err != nil || !slices.Equal(outs, want) {
		t.Errorf("scanOutputFiles = %+v, %v, %v; want %+v", outs, err, ok, want)
	}
	for _, odd := range []string{`<!-- c --><file_ref><file_name>a</file_name></file_ref>`, `<file_ref><file_name>a&amp;b</file_name></file_ref>`,
		`<file_ref x=1><file_name>a</file_name></file_ref>`, `<file_ref x="1"y="2"><file_name>a</file_name></file_ref>`,
		`<file_ref x="<"><file_name>a</file_name></file_ref>`, `<file_ref><file_name>a</file_ref>`} {
		if _, _, ok := scanOutputFiles(odd); ok {
			t.Errorf("scanOutputFiles(%q) answered; the XML parser should", odd)
		}
	}
}

func FuzzOutputFiles(f *testing.F) {
	f.Add(`<result><file_ref><file_name>a</file_name><open_name>b</open_name></file_ref></result>`)
	f.Add(`<file_info><name>x</name><optional/></file_info>`)
	f.Add(`</doc><doc>`)
	f.Add("<file_info>\n  <name>w_0_r1_0</name>\n  <generated_locally/>\n  <max_nbytes>1e9</max_nbytes>\n</file_info>\n" +
		"<result>\n  <name>w_0_r1</name>\n  <file_ref>\n    <file_name>w_0_r1_0</file_name>\n    <open_name>out</open_name>\n    <optional/>\n  </file_ref>\n</result>\n")
	f.Add(`<file_ref><file_name> a </file_name><file_name>b</file_name><open_name/></file_ref><file_ref ></file_ref >`)
	f.Add(`<file_info><name>a</name><rboinc aliases=".coor" chain='1'/></file_info><file_ref a = "x>/" ><file_name>a</file_name></file_ref>`)
	// Attribute values the parser refuses: the scan must not answer.
	f.Add("<file_ref a=\"&#0;\"><file_name>x</file_name></file_ref>")
	f.Add("<file_ref a=\"\x01\"><file_name>x</file_name></file_ref>")
	f.Add("<file_ref a=\"\xff\"><file_name>x</file_name></file_ref>")
	f.Fuzz(func(t *testing.T, doc string) {
		outs, err := OutputFiles(doc)
		for _, o := range outs {
			if err == nil && o.Name == "" {
				t.Errorf("an output without a name: %+v", outs)
			}
		}
		// The scan of BOINC's usual documents answers as the parser.
		want, werr := parseOutputFiles(doc)
		if (err == nil) != (werr == nil) || !slices.Equal(outs, want) {
			t.Errorf("OutputFiles(%q) = %+v, %v; the XML parser: %+v, %v", doc, outs, err, want, werr)
		}
	})
}

// TestReport reads back, on both engines, what BOINC did with work units:
// results by state, turnaround, priorities, per-result detail.
func TestReport(t *testing.T) {
	engines(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		app, _ := AddApp(ctx, db, "rbtest")
		mk := func(name string, created int64, prio int, assim int) int64 {
			w := &Workunit{CreateTime: created, AppID: app, Name: name, SizeClass: -1, Priority: prio, AssimilateState: assim, TransitionTime: Never}
			if err := w.Insert(ctx, db); err != nil {
				t.Fatal(err)
			}
			return w.ID
		}
		res := func(wu int64, name string, state, outcome int, received int64, exit int) int64 {
			r := &Result{WorkunitID: wu, Name: name, ServerState: state, Outcome: outcome, ReceivedTime: received, ExitStatus: exit, HostID: 3, SizeClass: -1}
			if err := r.Insert(ctx, db); err != nil {
				t.Fatal(err)
			}
			return r.ID
		}
		a := mk("a", 1000, 5, AssimilateDone)
		ca := res(a, "a_0", ServerOver, OutcomeSuccess, 4600, 0)
		res(a, "a_1", ServerOver, OutcomeClientError, 2000, -177)
		db.ExecContext(ctx, `UPDATE workunit SET canonical_resultid = ? WHERE id = ?`, ca, a)
		b := mk("b", 2000, 9, AssimilateInit)
		res(b, "b_0", ServerInProgress, OutcomeInit, 0, 0)
		res(b, "b_1", ServerUnsent, OutcomeInit, 0, 0)
		mk("c", 3000, 2, AssimilateInit)
		r, err := db.Report(ctx, []string{"a", "b", "c", "not-in-boinc"})
		if err != nil {
			t.Fatal(err)
		}
		if r.WorkUnits != 3 || r.Unsent != 1 || r.InProgress != 1 || r.Success != 1 || r.Error != 1 || r.Decided != 1 ||
			r.TurnaroundAvg != 3600 || r.TurnaroundMax != 3600 || *r.PriorityMin != 2 || *r.PriorityMax != 9 {
			t.Errorf("Report = %+v", r)
		}
		got, err := db.Results(ctx, []string{"a", "c"})
		if err != nil || len(got["a"]) != 2 || len(got["c"]) != 0 {
			t.Fatalf("Results = %+v, %v", got, err)
		}
		if e := got["a"][1]; e.State != "error" || e.ExitStatus != -177 || e.HostID != 3 {
			t.Errorf("error result: %+v", e)
		}
	})
}

func TestAppStderr(t *testing.T) {
	stored := "<core_client_version>7.20.5</core_client_version>\n<![CDATA[\n<message>\nprocess exited with code 1 (0x1, -255)</message>\n" +
		"<stderr_txt>\nrbstep: step 2 fails on purpose (fail-at)\n2026-12-04 07:01:28 (9987): called boinc_finish(1)\n\n</stderr_txt>\n]]>\n"
	if got := lastLines(appStderr(stored), 3, 300); got != "rbstep: step 2 fails on purpose (fail-at)" {
		t.Errorf("from a real client's stderr_out: %q", got)
	}
	// The client writes each byte over 127 as &#N; (non_ascii_escape).
	if got := lastLines(appStderr("<![CDATA[\n<stderr_txt>\ncaf&#195;&#169; &#65; &#300; &#\n</stderr_txt>\n]]>\n"), 3, 300); got != "café &#65; &#300; &#" {
		t.Errorf("escaped non-ASCII: %q", got)
	}
	if got := lastLines(appStderr("configured to fail\n"), 3, 300); got != "configured to fail" {
		t.Errorf("plain stderr: %q", got)
	}
}
