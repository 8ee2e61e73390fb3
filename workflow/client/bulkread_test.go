package client

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

// bulkContents are the files a fuzzed stream is read against.
var bulkContents = []string{"first\n", "", "third file\n"}

func bulkFiles() []wire.ResultFile {
	var out []wire.ResultFile
	for k, c := range bulkContents {
		out = append(out, wire.ResultFile{Name: fmt.Sprintf("wu%d_0", k), Size: int64(len(c)), MD5: md5hex([]byte(c))})
	}
	return out
}

// bulkTar builds a stream as the server writes it; edit may change each
// header and content before it is written.
func bulkTar(files []wire.ResultFile, contents []string, edit func(*tar.Header, *string)) []byte {
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for k, rf := range files {
		body := contents[k]
		h := &tar.Header{Typeflag: tar.TypeReg, Name: rf.Name, Size: rf.Size, Mode: 0o644, Format: tar.FormatPAX,
			PAXRecords: map[string]string{wire.BulkMD5Record: rf.MD5}}
		if edit != nil {
			edit(h, &body)
		}
		tw.WriteHeader(h)
		io.WriteString(tw, body)
	}
	tw.Close()
	return b.Bytes()
}

// readInMemory reads stream into memory and returns what it accepted.
func readInMemory(t testing.TB, files []wire.ResultFile, stream []byte) (map[int]string, int, error) {
	r := newBulkReceiver(files)
	tmps := map[string]string{}
	got := map[int]string{}
	n := 0
	r.write = func(i int, content io.Reader) (string, error) {
		n++
		name := fmt.Sprint("tmp", n)
		b, err := io.ReadAll(content)
		tmps[name] = string(b)
		return name, err
	}
	r.drop = func(tmp string) { delete(tmps, tmp) }
	r.accept = func(i int, tmp string) {
		if _, twice := got[i]; twice {
			t.Fatalf("file %d accepted twice", i)
		}
		got[i] = tmps[tmp]
		delete(tmps, tmp)
	}
	err := r.read(bytes.NewReader(stream))
	if len(tmps) != 0 {
		t.Fatalf("temporary files neither accepted nor dropped: %v", tmps)
	}
	return got, n, err
}

func TestBulkReceiver(t *testing.T) {
	files := bulkFiles()
	whole := bulkTar(files, bulkContents, nil)
	got, _, err := readInMemory(t, files, whole)
	if err != nil || len(got) != 3 {
		t.Fatalf("whole stream: %d files, %v", len(got), err)
	}
	for i, c := range got {
		if c != bulkContents[i] {
			t.Fatalf("file %d: %q", i, c)
		}
	}
	// Every cut keeps only whole, verified files. archive/tar does not
	// always tell a cut from the end (inside a PAX header, say): the
	// client does not rely on it, what did not come is asked for alone.
	for cut := range len(whole) {
		got, _, _ := readInMemory(t, files, whole[:cut])
		for i, c := range got {
			if c != bulkContents[i] {
				t.Fatalf("cut at %d: file %d holds %q", cut, i, c)
			}
		}
	}
	// Damaged or unexpected entries are skipped, the others kept.
	for name, edit := range map[string]func(*tar.Header, *string){
		"content":   func(h *tar.Header, b *string) { *b = "firsT\n" },
		"md5":       func(h *tar.Header, b *string) { h.PAXRecords[wire.BulkMD5Record] = md5hex([]byte("x")) },
		"no md5":    func(h *tar.Header, b *string) { delete(h.PAXRecords, wire.BulkMD5Record) },
		"size":      func(h *tar.Header, b *string) { *b += "more"; h.Size += 4 },
		"not asked": func(h *tar.Header, b *string) { h.Name = "other_0" },
		"path":      func(h *tar.Header, b *string) { h.Name = "../" + h.Name },
		"link": func(h *tar.Header, b *string) {
			h.Typeflag, h.Linkname, h.Size, *b = tar.TypeSymlink, "/etc/passwd", 0, ""
		},
	} {
		first := true
		stream := bulkTar(files, bulkContents, func(h *tar.Header, b *string) {
			if first {
				edit(h, b)
				first = false
			}
		})
		got, _, err := readInMemory(t, files, stream)
		if _, ok := got[0]; ok || len(got) != 2 || err != nil {
			t.Errorf("%s: got %d files (first: %v), %v", name, len(got), ok, err)
		}
	}
	// A file sent twice is taken once.
	twice := bulkTar(append(files, files[0]), append(bulkContents, bulkContents[0]), nil)
	if got, _, err := readInMemory(t, files, twice); len(got) != 3 || err != nil {
		t.Fatalf("a file twice: %d files, %v", len(got), err)
	}
}

// FuzzBulkReceiver: whatever the server (or something in its place)
// sends, only files of the size and MD5 listed are accepted, each once.
func FuzzBulkReceiver(f *testing.F) {
	files := bulkFiles()
	whole := bulkTar(files, bulkContents, nil)
	f.Add(whole)
	f.Add(whole[:700])
	f.Add(bulkTar(files, []string{"firsT\n", "", "third file\n"}, nil))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, stream []byte) {
		got, _, _ := readInMemory(t, files, stream)
		for i, c := range got {
			if c != bulkContents[i] {
				t.Fatalf("file %d accepted with %q", i, c)
			}
		}
	})
}

func TestBulkPlan(t *testing.T) {
	var todo []wire.ResultFile
	var idx []int
	for k := range 2*wire.MaxBulkFiles + 10 {
		g := "a"
		if k%2 == 1 {
			g = "b"
		}
		todo = append(todo, wire.ResultFile{Group: g, Name: fmt.Sprintf("w%d_0", k), Size: 100})
		idx = append(idx, k)
	}
	// Files big enough that a request closes on bytes.
	for k := range 40 {
		todo = append(todo, wire.ResultFile{Group: "c", Name: fmt.Sprintf("big%d_0", k), Size: bulkFileMax})
		idx = append(idx, len(todo)-1)
	}
	plans := bulkPlan(todo, idx, "")
	seen := map[int]bool{}
	for _, p := range plans {
		var bytes int64
		for _, i := range p {
			if seen[i] || todo[i].Group != todo[p[0]].Group {
				t.Fatalf("file %d twice or in a request of another group", i)
			}
			seen[i] = true
			bytes += todo[i].Size
		}
		if len(p) > wire.MaxBulkFiles || bytes > bulkRequestBytes {
			t.Fatalf("a request of %d files, %d bytes", len(p), bytes)
		}
	}
	if len(seen) != len(idx) || len(plans) != 2+2+3 {
		t.Fatalf("%d files in %d requests", len(seen), len(plans))
	}
}

// endless gives prefix, then chunk over and over (zeros when chunk is
// nil), counting the bytes, up to max.
type endless struct {
	prefix, chunk []byte
	off           int
	n, max        int64
}

func (e *endless) Read(p []byte) (int, error) {
	if e.n >= e.max {
		return 0, errors.New("the endless stream was read to its test bound")
	}
	var k int
	switch {
	case int64(len(e.prefix)) > e.n:
		k = copy(p, e.prefix[e.n:])
	case e.chunk == nil:
		clear(p)
		k = len(p)
	default:
		k = copy(p, e.chunk[e.off:])
		e.off = (e.off + k) % len(e.chunk)
	}
	e.n += int64(k)
	return k, nil
}

// TestBulkReceiverEndlessStream: an answer that never ends (entries the
// client did not ask for, one after the other, or one entry of a huge
// size) is read no further than the files asked for can fill; the client
// then fetches them alone instead of reading a hostile or broken
// server's stream for ever.
func TestBulkReceiverEndlessStream(t *testing.T) {
	files := bulkFiles()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "other_0", Size: 4096, Mode: 0o644, Format: tar.FormatPAX,
		PAXRecords: map[string]string{wire.BulkMD5Record: md5hex(make([]byte, 4096))}})
	tw.Write(make([]byte, 4096))
	tw.Flush()
	junk := b.Bytes() // one entry, no end marker
	var huge bytes.Buffer
	tw = tar.NewWriter(&huge)
	tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "other_0", Size: 1 << 40, Mode: 0o644})
	for name, stream := range map[string]*endless{
		"entries not asked for": {chunk: junk, max: 256 << 20},
		"one huge entry":        {prefix: huge.Bytes(), max: 256 << 20},
	} {
		r := newBulkReceiver(files)
		r.write = func(int, io.Reader) (string, error) { t.Fatal("an entry not asked for was written"); return "", nil }
		err := r.read(stream)
		if !errors.Is(err, errBulkStream) || stream.n > 1<<20 {
			t.Errorf("%s: %v after %d bytes read", name, err, stream.n)
		}
	}
}
