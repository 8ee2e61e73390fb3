package query_test

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/query"
	"github.com/rboinc/rboinc/internal/store"
)

// The Reader answers what the store holds, on a real database.
func TestReaderReads(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.AddUser(ctx, "alice", "hash-a"); err != nil {
		t.Fatal(err)
	}
	q := query.New(db)
	u, err := q.UserByToken(ctx, "hash-a")
	if err != nil || u.Name != "alice" {
		t.Fatalf("UserByToken = %+v, %v", u, err)
	}
	if _, err := q.UserByToken(ctx, "hash-b"); err == nil {
		t.Error("an unknown token found a user")
	}
	users, err := q.Users(ctx)
	if err != nil || len(users) != 1 {
		t.Fatalf("Users = %+v, %v", users, err)
	}
	cs, err := q.Chains(ctx, u.ID, "", "")
	if err != nil || len(cs) != 0 {
		t.Fatalf("Chains of a new user = %+v, %v", cs, err)
	}
	if _, err := q.ServerTotals(ctx); err != nil {
		t.Fatal(err)
	}
}

// The Reader only reads: none of its methods has a name of the store's
// writes.
func TestReaderOnlyReads(t *testing.T) {
	rt := reflect.TypeFor[*query.Reader]()
	if rt.NumMethod() < 10 {
		t.Fatalf("the Reader has %d methods", rt.NumMethod())
	}
	for i := range rt.NumMethod() {
		name := rt.Method(i).Name
		for _, w := range []string{"Add", "Set", "Create", "Delete", "Drop", "Take", "Release", "FailChain", "Stop", "Purge", "Abort", "Ack", "Forget", "Rotate", "Queue", "SQL"} {
			if strings.HasPrefix(name, w) {
				t.Errorf("Reader.%s looks like a write", name)
			}
		}
	}
}
