package standin

import (
	"bufio"
	"compress/gzip"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

// gunzipToSlot gives the slot an input served compressed (<gzipped_url>
// in its <file_info>, from <gzip/> in the template), as the client gets
// it: it downloads name.gz and decompresses it (FILE_INFO::gunzip), then
// checks the MD5 of what came out against <md5_cksum>. Like zlib's gzread,
// a file that is not gzip data is read as it is, and a damaged stream
// gives what decompressed before the damage: the checksum tells.
func gunzipToSlot(gz, dst string) (string, error) {
	in, err := os.Open(gz)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := newSlotFile(dst)
	if err != nil {
		return "", err
	}
	h := md5.New()
	w := &slotWriter{w: io.MultiWriter(out, h)}
	br := bufio.NewReader(in)
	var src io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		if zr, zerr := gzip.NewReader(br); zerr == nil {
			src = zr
		}
	}
	io.Copy(w, src) // a read or decompression error ends it: what came out is checked
	err = w.err
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("decompressing %s to %s: %w", gz, dst, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// slotWriter keeps the first write error, which io.Copy does not tell
// apart from a read error.
type slotWriter struct {
	w   io.Writer
	err error
}

func (s *slotWriter) Write(p []byte) (int, error) {
	n, err := s.w.Write(p)
	if err != nil && s.err == nil {
		s.err = err
	}
	return n, err
}
