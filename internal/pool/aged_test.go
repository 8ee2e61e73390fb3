package pool

import (
	"crypto/md5"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A content found in the pool and about to be used is touched: it is no
// longer among the aged contents collection looks at.
func TestTouchTakesContentOutOfAged(t *testing.T) {
	p := &Pool{Dir: t.TempDir()}
	sum, _, err := p.WriteContent(strings.NewReader("content\n"))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	mid := time.Now()
	time.Sleep(20 * time.Millisecond)
	if aged, err := p.Aged(mid); err != nil || !slices.Equal(aged, []string{sum}) {
		t.Fatalf("aged before the touch: %v %v", aged, err)
	}
	if !p.Touch(sum) {
		t.Fatal("Touch: content not found")
	}
	if aged, err := p.Aged(mid); err != nil || len(aged) != 0 || p.AgedSince(sum, mid) {
		t.Fatalf("aged after the touch: %v %v", aged, err)
	}
	if p.Touch("0123456789abcdef0123456789abcdef") {
		t.Fatal("Touch found a content the pool does not hold")
	}
}

// A content brought again while its file is already in the pool (an
// upload, a server-side file, a result adopted) is kept from collection
// like one found by an inline request: the caller records it next, and a
// collection in between must not take the file it keeps.
func TestFoundAgainTakesContentOutOfAged(t *testing.T) {
	const data = "content\n"
	for _, tc := range []struct {
		name  string
		bring func(p *Pool, sum, src string) error
	}{
		{"Ingest", func(p *Pool, sum, src string) error { _, err := p.Ingest(src, sum); return err }},
		{"IngestAny", func(p *Pool, sum, src string) error { _, _, err := p.IngestAny(src); return err }},
		{"WriteContent", func(p *Pool, sum, src string) error {
			_, _, err := p.WriteContent(strings.NewReader(data))
			return err
		}},
		{"Adopt", func(p *Pool, sum, src string) error { return p.Adopt(src, sum) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &Pool{Dir: filepath.Join(t.TempDir(), "pool")}
			sum, _, err := p.WriteContent(strings.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			src := filepath.Join(t.TempDir(), sum)
			if err := os.WriteFile(src, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond)
			mid := time.Now()
			time.Sleep(20 * time.Millisecond)
			if !p.AgedSince(sum, mid) {
				t.Fatal("content not aged before it is brought again")
			}
			if err := tc.bring(p, sum, src); err != nil {
				t.Fatal(err)
			}
			if p.AgedSince(sum, mid) {
				t.Fatalf("%s kept the pool's file of a content already there untouched: collection may remove it before the caller records it", tc.name)
			}
		})
	}
}

// An upload moved into the pool keeps the modification time its sender
// gave it (days old, say); the pool file must look just changed by its
// own modification time, which is all lastChange reads off Linux, or
// collection of files no row names may take it before its row is written.
func TestIngestedUploadLooksNew(t *testing.T) {
	p := &Pool{Dir: filepath.Join(t.TempDir(), "pool")}
	const data = "uploaded long ago\n"
	for _, ingest := range []func(src, sum string) error{
		func(src, sum string) error { _, err := p.Ingest(src, sum); return err },
		func(src, sum string) error { _, _, err := p.IngestAny(src); return err },
	} {
		src := filepath.Join(t.TempDir(), "up")
		if err := os.WriteFile(src, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-48 * time.Hour)
		if err := os.Chtimes(src, old, old); err != nil {
			t.Fatal(err)
		}
		h, _ := os.ReadFile(src)
		sum := md5hex(h)
		if err := ingest(src, sum); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(p.Path(sum))
		if err != nil {
			t.Fatal(err)
		}
		if fi.ModTime().Before(time.Now().Add(-time.Minute)) {
			t.Fatalf("the pool file of an upload kept its sender's modification time %v", fi.ModTime())
		}
		if err := p.Remove(sum); err != nil {
			t.Fatal(err)
		}
	}
}

func md5hex(b []byte) string {
	h := md5.Sum(b)
	return hex.EncodeToString(h[:])
}
