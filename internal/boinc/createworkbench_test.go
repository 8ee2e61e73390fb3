package boinc

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkCreateWorkRunFeed: the cost of handing jobs to create_work
// (a create_work that only reads them), per job.
func BenchmarkCreateWorkRunFeed(b *testing.B) {
	dir := b.TempDir()
	os.MkdirAll(filepath.Join(dir, "bin"), 0o755)
	os.MkdirAll(filepath.Join(dir, "templates"), 0o755)
	os.WriteFile(filepath.Join(dir, "templates", "r_out"), []byte("<file_info/>"), 0o644)
	if err := os.WriteFile(filepath.Join(dir, "bin", "create_work"), []byte("#!/bin/sh\nexec cat >/dev/null\n"), 0o755); err != nil {
		b.Fatal(err)
	}
	p := &Project{Dir: dir}
	const perRun = 20000
	jobs := make([]Job, perRun)
	for i := range jobs {
		jobs[i] = Job{WUName: fmt.Sprintf("f%d-ALICE_g-0-3-RND%05d", i, i), WUTemplate: "templates/w_in", ResultTemplate: "templates/r_out",
			Priority: 2, CommandLine: "--steps 1000", Files: []string{fmt.Sprintf("rb_%032x", i), "rb_0123456789abcdef0123456789abcdef"}}
	}
	b.ResetTimer()
	for b.Loop() {
		r, err := StartCreateWork(context.Background(), p, WorkParams{App: "a"})
		if err != nil {
			b.Fatal(err)
		}
		for _, j := range jobs {
			if err := r.Add(j); err != nil {
				b.Fatal(err)
			}
		}
		if err := r.Finish(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*perRun), "ns/job")
}
