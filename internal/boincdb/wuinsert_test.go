package boincdb

import (
	"context"
	"fmt"
	"reflect"
	"testing"
)

// TestMissingCreateColumns reads the schema on both engines: a complete
// one lacks nothing; without workunit.keywords and the assignment table,
// exactly those are named; nothing is changed by looking.
func TestMissingCreateColumns(t *testing.T) {
	engines(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		if m, err := db.MissingCreateColumns(ctx); err != nil || len(m) != 0 {
			t.Fatalf("complete schema: missing %v, %v", m, err)
		}
		for _, q := range []string{"ALTER TABLE workunit DROP COLUMN keywords", "DROP TABLE assignment"} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		want := []string{"workunit.keywords", "assignment.id", "assignment.create_time", "assignment.target_id", "assignment.target_type",
			"assignment.multi", "assignment.workunitid", "assignment.resultid"}
		m, err := db.MissingCreateColumns(ctx)
		if err != nil || !reflect.DeepEqual(m, want) {
			t.Fatalf("missing %v (%v), want %v", m, err, want)
		}
		if err := db.CheckCreateColumns(ctx); err == nil {
			t.Fatal("CheckCreateColumns accepted the schema")
		}
		if m2, _ := db.MissingCreateColumns(ctx); !reflect.DeepEqual(m2, want) {
			t.Fatalf("the schema changed: %v", m2)
		}
	})
}

// TestInsertWorkunitsChunks inserts more rows than one statement holds and
// reads their IDs back by name.
func TestInsertWorkunitsChunks(t *testing.T) {
	engines(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		n := insertChunk*2 + 7
		var wus []*Workunit
		var names []string
		for i := range n {
			name := fmt.Sprintf("wu_%d", i)
			wus = append(wus, &Workunit{Name: name, AppID: 1, XMLDoc: "<x/>", Priority: i, TransitionTime: 5})
			names = append(names, name)
		}
		if err := InsertWorkunits(ctx, db, wus); err != nil {
			t.Fatal(err)
		}
		ids, err := WorkunitIDs(ctx, db, append(names, "absent"))
		if err != nil || len(ids) != n {
			t.Fatalf("%d ids of %d, %v", len(ids), n, err)
		}
		var as []Assignment
		for _, name := range names[:insertChunk+1] {
			as = append(as, Assignment{CreateTime: 1, TargetID: 3, TargetType: 2, WorkunitID: ids[name]})
		}
		if err := InsertAssignments(ctx, db, as); err != nil {
			t.Fatal(err)
		}
		var na, np int
		db.QueryRow(`SELECT count(*) FROM assignment WHERE resultid = 0 AND multi = 0`).Scan(&na)
		db.QueryRow(`SELECT count(*) FROM workunit w WHERE priority = (SELECT count(*) FROM workunit v WHERE v.id < w.id)`).Scan(&np)
		if na != insertChunk+1 || np != n {
			t.Fatalf("%d assignments, %d rows in order", na, np)
		}
	})
}
