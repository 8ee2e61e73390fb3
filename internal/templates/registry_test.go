package templates

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func writeFile(t *testing.T, path, text string, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	// Explicit times: a rewrite within the file system's clock granularity
	// must still look changed.
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

func TestRegistry(t *testing.T) {
	dir := t.TempDir()
	r := NewRegistry(dir)
	t0 := time.Now().Add(-time.Hour)
	wuP, resP := filepath.Join(dir, "rboinc_t_wu"), filepath.Join(dir, "rboinc_t_result")

	if _, err := r.Get("t"); !errors.Is(err, ErrUnknownQueue) {
		t.Fatalf("Get on empty dir: %v", err)
	}
	writeFile(t, wuP, baseWU, t0)
	if _, err := r.Get("t"); !errors.Is(err, ErrUnknownQueue) {
		t.Fatalf("Get without result template: %v", err)
	}
	if qs, errs := r.List(); len(qs) != 0 || len(errs) != 0 {
		t.Fatalf("List with half a pair = %v, %v", qs, errs)
	}

	// A new queue appears without a restart.
	writeFile(t, resP, baseResult, t0)
	q1, err := r.Get("t")
	if err != nil {
		t.Fatal(err)
	}
	if q1.Description != "d" || q1.WUFile != wuP || q1.ResultFile != resP {
		t.Errorf("queue = %+v", q1)
	}
	if q, _ := r.Get("t"); q != q1 {
		t.Error("unchanged files were parsed again")
	}

	// A modified file is re-parsed.
	writeFile(t, wuP, strings.Replace(baseWU, `description="d"`, `description="new"`, 1), t0.Add(time.Second))
	q2, err := r.Get("t")
	if err != nil {
		t.Fatal(err)
	}
	if q2 == q1 || q2.Description != "new" {
		t.Errorf("after change: description %q, same pointer %v", q2.Description, q2 == q1)
	}

	// Same size, new mtime: still noticed.
	writeFile(t, wuP, strings.Replace(baseWU, `description="d"`, `description="x"`, 1), t0.Add(2*time.Second))
	if q, err := r.Get("t"); err != nil || q.Description != "x" {
		t.Errorf("after same-size change: %v, %v", q, err)
	}

	// A broken template gives its parse error, not "unknown queue", in Get
	// and beside the good queues in List.
	writeFile(t, filepath.Join(dir, "rboinc_a_wu"), baseWU, t0)
	writeFile(t, filepath.Join(dir, "rboinc_a_result"), baseResult, t0)
	writeFile(t, filepath.Join(dir, "rboinc_bad_wu"), "<workunit>", t0)
	writeFile(t, filepath.Join(dir, "rboinc_bad_result"), baseResult, t0)
	writeFile(t, filepath.Join(dir, "rboinc_a-b_wu"), baseWU, t0) // not a queue name: ignored
	writeFile(t, filepath.Join(dir, "notes.txt"), "x", t0)
	if _, err := r.Get("bad"); err == nil || errors.Is(err, ErrUnknownQueue) || !strings.Contains(err.Error(), "rboinc_bad_wu") {
		t.Errorf("Get(bad) = %v", err)
	}
	qs, errs := r.List()
	var names []string
	for _, q := range qs {
		names = append(names, q.Name)
	}
	if strings.Join(names, " ") != "a t" || len(errs) != 1 || !strings.Contains(errs[0].Error(), "rboinc_bad_wu") {
		t.Errorf("List = %v, %v", names, errs)
	}

	// Removing a file removes the queue.
	if err := os.Remove(resP); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get("t"); !errors.Is(err, ErrUnknownQueue) {
		t.Errorf("Get after removal: %v", err)
	}
}

func TestRegistryBadNames(t *testing.T) {
	dir := t.TempDir()
	// A pair outside dir that "../x" would reach.
	writeFile(t, filepath.Join(dir, "rboinc_"), baseWU, time.Now())
	r := NewRegistry(filepath.Join(dir, "sub"))
	for _, n := range []string{"../x", "", "a/b", "a b", "..", strings.Repeat("x", MaxNameLen+1)} {
		if _, err := r.Get(n); !errors.Is(err, ErrUnknownQueue) {
			t.Errorf("Get(%q) = %v, want ErrUnknownQueue", n, err)
		}
	}
	if qs, errs := r.List(); len(qs) != 0 || len(errs) != 1 {
		t.Errorf("List of a missing dir = %v, %v", qs, errs)
	}
}

func TestRegistryConcurrent(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "rboinc_t_wu"), baseWU, time.Now())
	writeFile(t, filepath.Join(dir, "rboinc_t_result"), baseResult, time.Now())
	r := NewRegistry(dir)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if _, err := r.Get("t"); err != nil {
					t.Error(err)
				}
				r.List()
			}
		})
	}
	wg.Wait()
}
