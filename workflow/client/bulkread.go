package client

import (
	"archive/tar"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rboinc/rboinc/workflow/wire"
)

// bulkReceiver reads the answer of a bulk download (wire.PathFilesBulk), a
// tar stream, and keeps only what it can trust: an entry that is a
// regular file named as one of the files asked for and not yet received,
// announced with that file's size and MD5, whose bytes have that size and
// MD5. Any other entry is skipped (the file is fetched alone afterwards);
// a stream cut or damaged in its framing ends the reading, keeping the
// entries verified before it.
type bulkReceiver struct {
	files []wire.ResultFile
	want  map[string]int // name -> index in files, until received
	// write copies an entry's content (all of it, to EOF) into a
	// temporary file and returns its name ("" when none was made); the
	// content is verified after.
	write func(i int, content io.Reader) (tmp string, err error)
	// accept takes a verified temporary file; drop removes one that is not.
	accept func(i int, tmp string)
	drop   func(tmp string)
}

func newBulkReceiver(files []wire.ResultFile) *bulkReceiver {
	b := &bulkReceiver{files: files, want: make(map[string]int, len(files))}
	for i, rf := range files {
		b.want[rf.Name] = i
	}
	return b
}

// errBulkStream: the bulk answer ended or broke before its end marker.
var errBulkStream = errors.New("the bulk download was cut or is damaged")

// bulkEntryOverhead is what the server's tar stream spends on one entry
// beyond its content: a header block, a PAX header (the MD5, a name of
// up to a few hundred bytes) and the padding to a block, generously.
const bulkEntryOverhead = 8 << 10

// streamBound is how much of a bulk answer the files asked for can fill
// (with the end marker and slack): a server that sends more (entries not
// asked for without end, an entry of a huge size) is cut off there, and
// what did not come is fetched alone.
func (b *bulkReceiver) streamBound() int64 {
	n := int64(64 << 10)
	for _, rf := range b.files {
		n += (rf.Size+511)/512*512 + bulkEntryOverhead
	}
	return n
}

// errBulkTooLong: the answer goes on beyond streamBound.
var errBulkTooLong = errors.New("the answer is longer than the files asked for")

// boundedReader fails with errBulkTooLong after n bytes.
type boundedReader struct {
	r io.Reader
	n int64
}

func (l *boundedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, errBulkTooLong
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	k, err := l.r.Read(p)
	l.n -= int64(k)
	return k, err
}

// read takes the entries of r until its end. Its error says why it
// stopped early (errBulkStream, or write's).
func (b *bulkReceiver) read(r io.Reader) error {
	tr := tar.NewReader(&boundedReader{r: r, n: b.streamBound()})
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%w: %w", errBulkStream, err)
		}
		i, ok := b.want[hdr.Name]
		if !ok || hdr.Typeflag != tar.TypeReg {
			continue
		}
		rf := b.files[i]
		if hdr.Size != rf.Size || !strings.EqualFold(hdr.PAXRecords[wire.BulkMD5Record], rf.MD5) {
			continue // not what the listing said: fetched alone
		}
		h := md5.New()
		content := &countReader{r: io.TeeReader(tr, h)}
		tmp, err := b.write(i, content)
		if err != nil {
			if tmp != "" {
				b.drop(tmp)
			}
			if content.err != nil && content.err != io.EOF {
				return fmt.Errorf("%w: %w", errBulkStream, content.err)
			}
			return err
		}
		if content.n != rf.Size || !strings.EqualFold(hex.EncodeToString(h.Sum(nil)), rf.MD5) {
			b.drop(tmp)
			continue
		}
		delete(b.want, hdr.Name)
		b.accept(i, tmp)
	}
}

// countReader counts the bytes read and keeps the read error.
type countReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil {
		c.err = err
	}
	return n, err
}
