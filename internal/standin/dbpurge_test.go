package standin

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boincdb"
)

// TestPurgeDB: db_purge takes the work units whose files are deleted (not
// those still waiting for it, not a "nodelete" one, not one younger than
// --min_age_days), archives them and their results as BOINC does, and
// deletes them; a second pass finds nothing and writes nothing.
func TestPurgeDB(t *testing.T) {
	t.Parallel()
	tp := newProject(t)
	ctx := context.Background()
	purgeTestWUs(t, tp, "p1", "p2", "p3_nodelete")
	s := tp.newSim()
	if err := s.transitionDue(ctx, tp.p); err != nil {
		t.Fatal(err)
	}
	db := tp.db()
	if _, err := db.Exec(`UPDATE workunit SET file_delete_state = ? WHERE name IN ('p1', 'p3_nodelete')`, boincdb.FileDeleteDone); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE workunit SET file_delete_state = ? WHERE name = 'p2'`, boincdb.FileDeleteReady); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE result SET stderr_out = ? WHERE name = 'p1_0'`, "a<b & c]]>\x01\té\n"); err != nil {
		t.Fatal(err)
	}
	results := tp.count(`SELECT count(*) FROM result`)
	p1Results := tp.count(`SELECT count(*) FROM result r JOIN workunit w ON w.id = r.workunitid WHERE w.name = 'p1'`)
	if p1Results == 0 {
		t.Fatal("the transitioner made no result for p1")
	}

	// Younger than --min_age_days: kept.
	got, err := PurgeDB(ctx, tp.dir, PurgeOptions{MinAge: time.Hour})
	if err != nil || got.Workunits != 0 || len(got.Files) != 0 {
		t.Fatalf("PurgeDB with an hour's minimum age: %+v, %v; want nothing", got, err)
	}

	got, err = PurgeDB(ctx, tp.dir, PurgeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Workunits != 1 || got.Results != p1Results || len(got.Files) != 4 {
		t.Fatalf("PurgeDB: %+v; want p1 and its %d results, in four files", got, p1Results)
	}
	if n := tp.count(`SELECT count(*) FROM workunit WHERE name = 'p1'`); n != 0 {
		t.Error("p1 still in the database")
	}
	if n := tp.count(`SELECT count(*) FROM workunit`); n != 2 {
		t.Errorf("%d work units left, want p2 (files not deleted yet) and p3_nodelete", n)
	}
	if n := tp.count(`SELECT count(*) FROM result`); n != results-p1Results {
		t.Errorf("%d results left, want %d", n, results-p1Results)
	}

	files := map[string]string{}
	for _, f := range got.Files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Dir(f) != tp.path("archives") {
			t.Errorf("archive %s not in the project's archives/", f)
		}
		files[regexp.MustCompile(`_[0-9]+\.xml$`).ReplaceAllString(filepath.Base(f), "")] = string(b)
	}
	wu := files["wu_archive"]
	for _, want := range []string{"<archive>\n<workunit_archive>\n  <id>", "  <name>p1</name>\n", "  <file_delete_state>2</file_delete_state>\n",
		"  <rsc_fpops_est>1.000000000000000e+09</rsc_fpops_est>\n", "  <opaque>0.000000</opaque>\n", "</workunit_archive>\n</archive>\n"} {
		if !strings.Contains(wu, want) {
			t.Errorf("wu_archive lacks %q:\n%s", want, wu)
		}
	}
	if strings.Contains(wu, "p3_nodelete") || strings.Contains(wu, "<name>p2</name>") {
		t.Error("wu_archive holds a work unit not purged")
	}
	res := files["result_archive"]
	if n := strings.Count(res, "<result_archive>"); n != p1Results {
		t.Errorf("result_archive holds %d results, want %d", n, p1Results)
	}
	if !strings.Contains(res, "<stderr_out>a&lt;b &amp; c]]&gt;&#9;&#195;&#169;&#10;</stderr_out>") {
		t.Errorf("stderr_out not escaped as BOINC's xml_escape does:\n%s", res)
	}
	if !regexp.MustCompile(`^[0-9]+     [0-9]+    p1\n$`).MatchString(files["wu_index"]) {
		t.Errorf("wu_index %q", files["wu_index"])
	}
	if n := strings.Count(files["result_index"], "\n"); n != p1Results {
		t.Errorf("result_index has %d lines, want %d", n, p1Results)
	}

	again, err := PurgeDB(ctx, tp.dir, PurgeOptions{})
	if err != nil || again.Workunits != 0 || len(again.Files) != 0 {
		t.Errorf("a second pass: %+v, %v; want nothing purged, no file written", again, err)
	}
	if ents, _ := os.ReadDir(tp.path("archives")); len(ents) != 4 {
		t.Errorf("%d files in archives/, want the first pass's 4", len(ents))
	}
}

// TestPurgeDBMax: --max N purges at most N work units a pass, whole ones,
// and the next pass goes on where it stopped, until none is left.
func TestPurgeDBMax(t *testing.T) {
	t.Parallel()
	tp := newProject(t)
	ctx := context.Background()
	purgeTestWUs(t, tp, "m1", "m2", "m3")
	if _, err := tp.db().Exec(`UPDATE workunit SET file_delete_state = ?`, boincdb.FileDeleteDone); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{2, 1, 0} {
		got, err := PurgeDB(ctx, tp.dir, PurgeOptions{Max: 2, NoArchive: true})
		if err != nil || got.Workunits != want {
			t.Fatalf("pass %d with --max 2: %d work units purged, %v; want %d", i+1, got.Workunits, err, want)
		}
	}
	if n := tp.count(`SELECT count(*) FROM workunit`); n != 0 {
		t.Fatalf("%d work units left after the passes", n)
	}
}

// purgeTestWUs makes work units of the given names, two inputs each.
func purgeTestWUs(t *testing.T, tp *testProject, names ...string) {
	t.Helper()
	for _, wu := range names {
		tp.stage(wu+".coor", wu+"\n")
		tp.stage(wu+".psf", "topology\n")
		if _, errs, code := tp.createWork("", "", "--appname", "rbtest", "--wu_name", wu, wu+".coor", wu+".psf"); code != 0 {
			t.Fatalf("%s: %s", wu, errs)
		}
	}
}
