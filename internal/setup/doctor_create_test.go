package setup

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// TestDoctorChecksNativeCreationSchema: with "create": "native" doctor
// reads BOINC's schema; a column native creation writes that is missing
// is a problem naming it, and the schema is left as it is.
func TestDoctorChecksNativeCreationSchema(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join(t.TempDir(), "root")
	if _, err := Init(ctx, Options{Root: root, Exe: stubExe(t), Create: "native"}); err != nil {
		t.Fatal(err)
	}
	f := Doctor(ctx, root)
	if p := problems(f); p != "" {
		t.Fatalf("problems in a fresh stand-in with native creation:\n%s", p)
	}
	if !strings.Contains(oks(f), `inserted into BOINC's database by rboinc ("create": "native")`) {
		t.Fatalf("doctor did not check native creation:\n%s", oks(f))
	}
	db, err := sql.Open("sqlite", filepath.Join(root, "boinc", "standin.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`ALTER TABLE workunit DROP COLUMN size_class`); err != nil {
		t.Fatal(err)
	}
	p := problems(Doctor(ctx, root))
	if !strings.Contains(p, "lacks columns native creation") || !strings.Contains(p, "workunit.size_class") || !strings.Contains(p, `"create": "create_work"`) {
		t.Fatalf("doctor on a schema without workunit.size_class:\n%s", p)
	}
	var n int
	db.QueryRow(`SELECT count(*) FROM pragma_table_info('workunit') WHERE name = 'size_class'`).Scan(&n)
	if n != 0 {
		t.Fatal("doctor changed BOINC's schema")
	}
}
