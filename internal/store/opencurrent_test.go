package store

import (
	"context"
	"database/sql"
	"errors"
	"testing"
)

// TestOpenCurrent: a state one version behind is refused and left
// behind (not upgraded), as is one ahead; the current one opens.
func TestOpenCurrent(t *testing.T) {
	ctx := context.Background()
	loc := testLocation(t)
	old, _, err := openWith(ctx, loc, migrations[:len(migrations)-1])
	if err != nil {
		t.Fatal(err)
	}
	old.Close()
	var mis *SchemaMismatchError
	if _, err := OpenCurrent(ctx, loc); !errors.As(err, &mis) || mis.Version != SchemaVersion()-1 || mis.Known != SchemaVersion() {
		t.Fatalf("OpenCurrent on a state one version behind: %v, want a SchemaMismatchError at version %d", err, SchemaVersion()-1)
	}
	if st, err := Inspect(ctx, loc); err != nil || st.Version != SchemaVersion()-1 {
		t.Fatalf("after OpenCurrent refused it, the state is at %+v (%v): upgraded anyway", st, err)
	}
	db, err := Open(ctx, loc)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = OpenCurrent(ctx, loc)
	if err != nil {
		t.Fatalf("OpenCurrent on a current state: %v", err)
	}
	db.Close()

	ahead := append(migrations[:len(migrations):len(migrations)], migration{version: SchemaVersion() + 1, name: "a later one",
		fn: func(context.Context, *sql.Tx) error { return nil }})
	if db, _, err = openWith(ctx, loc, ahead); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := OpenCurrent(ctx, loc); !errors.As(err, &mis) || mis.Version != SchemaVersion()+1 {
		t.Fatalf("OpenCurrent on a state one version ahead: %v, want a SchemaMismatchError at version %d", err, SchemaVersion()+1)
	}
}
