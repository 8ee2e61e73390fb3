package store

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestCopyTo copies an SQLite state into an empty database of the engine
// under test (MariaDB with RBOINC_TEST_STATE_DB=mariadb): every row
// arrives, the checksums agree, and the copy reads like the source.
func TestCopyTo(t *testing.T) {
	ctx := context.Background()
	src, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	id, err := src.AddUser(ctx, "Alice", "h-alice")
	if err != nil {
		t.Fatal(err)
	}
	u := User{ID: id, Name: "Alice"}
	var ncs []NewChain
	for i := range 450 { // more than one INSERT's rows
		ncs = append(ncs, batchChain("g", "c"+strconv.Itoa(i), md5n(i), md5n(i+1)))
	}
	if _, err := src.CreateChainsWithin(ctx, u, ncs, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := src.AddUser(ctx, "bob", "h-bob"); err != nil {
		t.Fatal(err)
	}

	dst, err := Open(ctx, testLocation(t))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	verified := false
	got, err := src.CopyTo(ctx, dst, func([]TableCopy) error { verified = true; return nil })
	if err != nil || !verified {
		t.Fatalf("copy: %v (verify called: %v)", err, verified)
	}
	counts := map[string]int64{}
	for _, tc := range got {
		counts[tc.Table] = tc.Rows
		if len(tc.Sum) != 64 {
			t.Errorf("table %s: checksum %q", tc.Table, tc.Sum)
		}
	}
	if counts["users"] != 2 || counts["chains"] != 450 || counts["steps"] != 450 || counts["chain_inputs"] != 900 {
		t.Errorf("counts %v", counts)
	}
	// The copy is usable: the same user, case-insensitively, and chains.
	cu, err := dst.UserByName(ctx, "ALICE")
	if err != nil || cu.ID != id {
		t.Fatalf("user in the copy: %+v %v", cu, err)
	}
	if _, err := dst.AddUser(ctx, "alice", "h-other"); !errors.Is(err, ErrExists) {
		t.Errorf("a second alice in the copy: %v", err)
	}
	if _, err := dst.CreateChainsWithin(ctx, u, []NewChain{batchChain("g", ncs[0].Name)}, 0); !errors.Is(err, ErrExists) {
		t.Errorf("a live chain's name taken again in the copy: %v", err)
	}
	if _, err := dst.CreateChainsWithin(ctx, u, []NewChain{batchChain("g", "new")}, 0); err != nil {
		t.Errorf("a new chain in the copy: %v", err)
	}

	// A target with rows is refused, and left as it was.
	if _, err := src.CopyTo(ctx, dst, nil); err == nil || !strings.Contains(err.Error(), "empty database") {
		t.Errorf("copy into a full database: %v", err)
	}
	if cu, err := dst.UserByName(ctx, "bob"); err != nil || cu.Name != "bob" {
		t.Errorf("after the refused copy: %+v %v", cu, err)
	}
}

// TestCopyFailureLeavesTargetEmpty: when verify refuses, the target is
// emptied again, and a second copy succeeds.
func TestCopyFailureLeavesTargetEmpty(t *testing.T) {
	ctx := context.Background()
	src, err := Open(ctx, filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	if _, err := src.AddUser(ctx, "alice", "h"); err != nil {
		t.Fatal(err)
	}
	dst, err := Open(ctx, testLocation(t))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	no := errors.New("no")
	if _, err := src.CopyTo(ctx, dst, func([]TableCopy) error { return no }); !errors.Is(err, no) {
		t.Fatalf("copy: %v", err)
	}
	if _, err := dst.UserByName(ctx, "alice"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after the failed copy: %v", err)
	}
	if _, err := src.CopyTo(ctx, dst, nil); err != nil {
		t.Fatalf("second copy: %v", err)
	}
}
