package boinc

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A create_work that stops reading its jobs is noticed when a job cannot
// be written to it, at that Add, not only at the end of the run.
func TestCreateWorkRunAddReportsFailedWrite(t *testing.T) {
	p := fakeCreateWork(t)
	if err := os.WriteFile(filepath.Join(p.Dir, "bin", "create_work"), []byte("#!/bin/sh\necho 'create_work: no database' >&2\nexit 3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r, err := StartCreateWork(context.Background(), p, WorkParams{App: "a"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Abort()
	time.Sleep(200 * time.Millisecond) // it has exited: its input is a broken pipe
	// Far more than one write (4 KiB), so writes reach the pipe.
	for i := range 5000 {
		if err = r.Add(job("w" + strings.Repeat("x", 40) + string(rune('a'+i%26)))); err != nil {
			break
		}
	}
	if err == nil {
		t.Fatal("5000 jobs handed to a create_work that had exited, and no Add failed")
	}
	if !strings.Contains(err.Error(), "no database") {
		t.Fatalf("Add failed with %q, want create_work's own message", err)
	}
	if err2 := r.Add(job("later")); err2 == nil {
		t.Fatal("an Add after the failure succeeded")
	}
}
