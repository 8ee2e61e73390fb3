package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// The state database's per-request work at the sizes of BENCHMARKS.md.

func benchDB(b *testing.B) (*DB, User) {
	ctx := context.Background()
	db, err := Open(ctx, filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	id, err := db.AddUser(ctx, "bench", "hash-bench")
	if err != nil {
		b.Fatal(err)
	}
	return db, User{ID: id, Name: "bench"}
}

func benchChains(group string, n int) []NewChain {
	out := make([]NewChain, n)
	for i := range out {
		out[i] = NewChain{Chain: Chain{Group: group, Name: fmt.Sprint("c", i), Queue: "q", App: "a", NSteps: 3, Params: "{}", Layout: "{}"},
			Inputs: []string{fmt.Sprintf("%032x", 1), fmt.Sprintf("%032x", i+2), fmt.Sprintf("%032x", 0), fmt.Sprintf("%032x", 3)}}
	}
	return out
}

func benchN(full, short int) int {
	if testing.Short() {
		return short
	}
	return full
}

// BenchmarkCreateChains: the records of one submission of many chains.
func BenchmarkCreateChains(b *testing.B) {
	sizes := []int{1000, 10000}
	if testing.Short() {
		sizes = []int{100}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprint("chains=", n), func(b *testing.B) {
			db, u := benchDB(b)
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := db.CreateChains(ctx, u, benchChains(fmt.Sprint("g", i), n)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// withResults makes a group of chains with three pending results each.
func withResults(b *testing.B, db *DB, u User, chains int) []string {
	ctx := context.Background()
	cs, err := db.CreateChains(ctx, u, benchChains("g", chains))
	if err != nil {
		b.Fatal(err)
	}
	var files []string
	for _, c := range cs {
		var rs []Result
		for k := 0; k < 3; k++ {
			f := fmt.Sprintf("%s_%d", c.WU(0), k)
			rs = append(rs, Result{ChainID: c.ID, Step: 0, Index: k, File: f, MD5: fmt.Sprintf("%032x", k), Size: 100000})
			files = append(files, f)
		}
		if _, _, _, err := db.CompleteStep(ctx, c, 0, rs, nil); err != nil {
			b.Fatal(err)
		}
	}
	return files
}

// BenchmarkPendingResult: the lookup behind each file download, in a
// group of many chains.
func BenchmarkPendingResult(b *testing.B) {
	db, u := benchDB(b)
	files := withResults(b, db, u, benchN(3334, 300))
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := db.PendingResult(ctx, u.ID, "", "g", files[i%len(files)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAck: acknowledging all files of a group of many chains in one
// request.
func BenchmarkAck(b *testing.B) {
	db, u := benchDB(b)
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db.sql.Exec(`DELETE FROM results`)
		db.sql.Exec(`DELETE FROM step_inputs`)
		db.sql.Exec(`DELETE FROM steps`)
		db.sql.Exec(`DELETE FROM chain_inputs`)
		db.sql.Exec(`DELETE FROM chains`)
		files := withResults(b, db, u, benchN(3334, 300))
		b.StartTimer()
		gone, err := db.Ack(ctx, u.ID, "", "g", files)
		if err != nil || len(gone) != len(files) {
			b.Fatalf("acknowledged %d of %d: %v", len(gone), len(files), err)
		}
	}
}

// BenchmarkDropBatch: the records of a retired batch of 20,000 jobs
// dropped, its name and job names remembered (the retirement's own work
// in the state database, without the purge of its chains).
func BenchmarkDropBatch(b *testing.B) {
	ctx := context.Background()
	db, u := benchDB(b)
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		jobs := make([]BatchJob, 20000)
		for k := range jobs {
			jobs[k] = BatchJob{Name: fmt.Sprintf("b%d#%d.0", i, k), Chain: fmt.Sprint("c", k)}
		}
		bt := Batch{UserID: u.ID, Name: fmt.Sprint("b", i), Group: fmt.Sprint("g", i), Queue: "q"}
		id, err := db.CreateBatch(ctx, bt, jobs)
		if err != nil {
			b.Fatal(err)
		}
		bt.ID = id
		b.StartTimer()
		if err := db.DropBatch(ctx, bt); err != nil {
			b.Fatal(err)
		}
	}
}
