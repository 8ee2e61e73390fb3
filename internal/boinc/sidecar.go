package boinc

import (
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/rboinc/rboinc/internal/atomicfile"
	"github.com/rboinc/rboinc/internal/fsync"
)

// SidecarText is the content of a .md5 file as BOINC's C code writes it:
// "<md5> <size as %.15e>\n".
func SidecarText(sum string, size int64) string {
	return sum + " " + strconv.FormatFloat(float64(size), 'e', 15, 64) + "\n"
}

// ReadSidecar parses path+".md5" the way BOINC's reader does: md5, space,
// a number, exactly one newline, end of file. ok is false when the sidecar
// is missing, malformed or older than the data file (BOINC recomputes then).
func ReadSidecar(path string) (sum string, size int64, ok bool) {
	data, err := os.ReadFile(path + ".md5")
	if err != nil {
		return "", 0, false
	}
	s := string(data)
	if !strings.HasSuffix(s, "\n") || strings.Count(s, "\n") != 1 {
		return "", 0, false
	}
	f := strings.Fields(s)
	if len(f) != 2 || len(f[0]) != 32 {
		return "", 0, false
	}
	if _, err := hex.DecodeString(f[0]); err != nil {
		return "", 0, false
	}
	v, err := strconv.ParseFloat(f[1], 64)
	if err != nil || v < 0 {
		return "", 0, false
	}
	sfi, err1 := os.Stat(path + ".md5")
	dfi, err2 := os.Stat(path)
	if err1 != nil || err2 != nil || sfi.ModTime().Unix() < dfi.ModTime().Unix() {
		return "", 0, false
	}
	return f[0], int64(v), true
}

// CreateSidecar writes path+".md5" where there is none, in place: one new
// file, no temporary name and rename (a submission writes thousands). It
// fails with an error matching fs.ErrExist when a sidecar is there. Only
// for a sidecar nothing reads before CreateSidecar returns: one a crash
// cut short is malformed, which ReadSidecar tells (and BOINC recomputes).
func CreateSidecar(path, sum string, size int64) error {
	f, err := fsync.CreateExcl(path+".md5", 0o644)
	if err != nil {
		return err
	}
	_, werr := f.Write([]byte(SidecarText(sum, size)))
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path + ".md5")
		return fmt.Errorf("writing %s.md5: %w", path, werr)
	}
	return nil
}

// WriteSidecar writes path+".md5" atomically.
func WriteSidecar(path, sum string, size int64) error {
	return atomicfile.Write(path+".md5", []byte(SidecarText(sum, size)), 0o644)
}
