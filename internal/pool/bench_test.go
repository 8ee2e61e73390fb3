package pool

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/md5sum"
)

// The pool's data paths; bench/run.sh measures them end to end next to
// md5sum and cp.

func randomFile(tb testing.TB, path string, size int) []byte {
	tb.Helper()
	data := make([]byte, size)
	r := rand.NewChaCha8([32]byte{byte(size), byte(size >> 8), byte(size >> 16)})
	r.Read(data)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return data
}

func benchBig() int {
	if testing.Short() {
		return 4 << 20
	}
	return 64 << 20
}

// BenchmarkFileMD5: hashing, as the server checks uploads and the client
// hashes inputs (compare md5sum on the same file).
func BenchmarkFileMD5(b *testing.B) {
	p := filepath.Join(b.TempDir(), "f")
	randomFile(b, p, benchBig())
	b.SetBytes(int64(benchBig()))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := md5sum.File(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCopyAtomic: the hook's copy of an output out of BOINC's upload
// hierarchy: streamed, hashed, synced, renamed (1 MB).
func BenchmarkCopyAtomic(b *testing.B) {
	dir := b.TempDir()
	src := filepath.Join(dir, "src")
	randomFile(b, src, 1<<20)
	b.SetBytes(1 << 20)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := CopyAtomic(src, filepath.Join(dir, fmt.Sprint("dst", i%16)), 0o444); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIngest: an uploaded small file taken into the pool (checked
// against its MD5, renamed).
func BenchmarkIngest(b *testing.B) {
	dir := b.TempDir()
	p := &Pool{Dir: filepath.Join(dir, "pool")}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		up := filepath.Join(dir, "up")
		content := []byte(fmt.Sprintf("content %d\n", i))
		os.WriteFile(up, content, 0o644)
		sum, _, _ := md5sum.File(up)
		b.StartTimer()
		if _, err := p.Ingest(up, sum); err != nil {
			b.Fatal(err)
		}
	}
}

// stageSetup writes n distinct small contents into a fresh pool.
func stageSetup(b *testing.B, n int) (*Pool, *boinc.Project, []string, []int64) {
	dir := b.TempDir()
	p := &Pool{Dir: filepath.Join(dir, "pool")}
	proj := &boinc.Project{DownloadDir: filepath.Join(dir, "download"), Fanout: 1024}
	sums := make([]string, n)
	sizes := make([]int64, n)
	for i := range sums {
		s, size, err := p.WriteContent(strings.NewReader(fmt.Sprintf("content %d\n", i)))
		if err != nil {
			b.Fatal(err)
		}
		sums[i], sizes[i] = s, size
	}
	return p, proj, sums, sizes
}

// BenchmarkStageNew: a content hard-linked into the download hierarchy
// with its .md5 sidecar for the first time.
func BenchmarkStageNew(b *testing.B) {
	p, proj, sums, sizes := stageSetup(b, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.Stage(proj, sums[i], sizes[i]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStageAgain: staging a content that is already staged (every
// next step re-stages its unchanged inputs).
func BenchmarkStageAgain(b *testing.B) {
	p, proj, sums, sizes := stageSetup(b, 1)
	if _, err := p.Stage(proj, sums[0], sizes[0]); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := p.Stage(proj, sums[0], sizes[0]); err != nil {
			b.Fatal(err)
		}
	}
}
