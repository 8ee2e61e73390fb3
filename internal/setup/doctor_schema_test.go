package setup

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/store"
)

// TestDoctorReportsSchemaVersion: doctor prints the state database's
// schema version; a database behind this rboinc (one of the release before
// schema versions) or ahead of it is a problem saying what to do, and
// doctor changes neither; init upgrades an older one, and says so.
func TestDoctorReportsSchemaVersion(t *testing.T) {
	ctx := context.Background()
	proj := fakeProject(t, t.TempDir())
	root, _ := initReal(t, proj)
	path := filepath.Join(root, "state.db")
	f := Doctor(ctx, root)
	if want := fmt.Sprintf("state database opens (schema version %d, this rboinc's)", store.SchemaVersion()); !strings.Contains(oks(f), want) {
		t.Fatalf("doctor did not print %q:\n%s", want, oks(f))
	}

	// The previous release's database.
	dump, err := os.ReadFile(filepath.Join("..", "store", "testdata", "state-v0.sql"))
	if err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(path + suffix)
	}
	execSQL(t, path, string(dump))
	p := problems(Doctor(ctx, root))
	if !strings.Contains(p, "made by a release before schema versions (version 0), this rboinc's is "+fmt.Sprint(store.SchemaVersion())) ||
		!strings.Contains(p, "rboinc-server migrate --root "+root) || !strings.Contains(p, "back it up") {
		t.Fatalf("doctor did not report the old database:\n%s", p)
	}
	if st, err := store.Inspect(ctx, path); err != nil || st.Version != 0 {
		t.Fatalf("doctor upgraded the database: %+v %v", st, err)
	}

	// init upgrades it, and says so.
	rep, err := Init(ctx, Options{Root: root, BoincProject: proj, Exe: stubExe(t)})
	if err != nil || !strings.Contains(strings.Join(rep.Notes, "\n"), fmt.Sprintf("the state database was upgraded from schema version 0 to %d", store.SchemaVersion())) {
		t.Fatalf("init on the previous release's database: %v %q", err, rep.Notes)
	}
	if p := problems(Doctor(ctx, root)); strings.Contains(p, "schema version") {
		t.Fatalf("doctor after init:\n%s", p)
	}

	// A newer rboinc's database.
	execSQL(t, path, fmt.Sprintf("PRAGMA user_version = %d", store.SchemaVersion()+1))
	p = problems(Doctor(ctx, root))
	if want := fmt.Sprintf("state.db is at schema version %d, this rboinc knows up to %d: upgrade rboinc", store.SchemaVersion()+1, store.SchemaVersion()); !strings.Contains(p, want) {
		t.Fatalf("doctor did not report the newer database (%q):\n%s", want, p)
	}
}

func execSQL(t *testing.T, path, sqlText string) {
	t.Helper()
	raw, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(sqlText); err != nil {
		t.Fatal(err)
	}
}
