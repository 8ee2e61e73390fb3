package spool

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rboinc/rboinc/internal/fsync"
	"github.com/rboinc/rboinc/internal/hookargs"
)

// The hook program links this package and starts once per work unit, so it
// imports little: no JSON, no crypto, no BOINC package (each would add to
// every start).

// DirName is the spool's directory in the server root.
const DirName = "spool"

// callFile describes the call in each entry, one "key value" line each:
//
//	rboinc-hook-call 1
//	wu_name NAME
//	wu_id N        (when BOINC gave it)
//	batch N        (when BOINC gave it)
//	error MASK     (the --error form only)
//	file BASE      (each output, in the call's order; present ones are linked beside)
const callFile = "call"

const callHeader = "rboinc-hook-call 1"

// Dir is the spool of a server root.
func Dir(root string) string { return filepath.Join(root, DirName) }

// Write spools one call: the outputs hard-linked (copied across file
// systems), the call, all made durable, then renamed into place at once.
// It returns the entry's name.
func Write(root string, call hookargs.HookCall) (string, error) {
	return write(root, call, "", "")
}

// WriteUnplaced spools a call straight into an entry set aside for the
// administrator (UnplacedPrefix), never seen by the creator, with the
// reason in the entry's file ReasonFile. It returns the entry's name
// (without the prefix).
func WriteUnplaced(root string, call hookargs.HookCall, reason string) (string, error) {
	return write(root, call, UnplacedPrefix, reason)
}

// ReasonFile, in an entry set aside, says why. Output names never start
// with '.', so it cannot clash with one.
const ReasonFile = ".reason"

func write(root string, call hookargs.HookCall, prefix, reason string) (string, error) {
	dir := Dir(root)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating the hook spool: %w", err)
	}
	data, err := encodeCall(call)
	if err != nil {
		return "", fmt.Errorf("spooling the outputs of %s: %w", call.WUName, err)
	}
	name, tmp, err := newEntry(dir)
	if err != nil {
		return "", err
	}
	// The data of every file is on disk (fill, without a journal commit
	// each); the entry's directory, then the spool's after the rename, make
	// the names durable: no ordering between them is assumed, since a file
	// system without a journal gives none.
	err = fill(tmp, call, data)
	if err == nil && reason != "" {
		err = writeFlushed(filepath.Join(tmp, ReasonFile), 0o644, func(f *os.File) error {
			_, err := f.WriteString(reason + "\n")
			return err
		})
	}
	if err == nil {
		err = fsync.Dir(tmp)
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, prefix+name))
	}
	if err == nil {
		err = fsync.Dir(dir)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("spooling the outputs of %s: %w", call.WUName, err)
	}
	return name, nil
}

// newEntry makes the hidden directory of a new entry. Names start with the
// time in nanoseconds, so that they sort in the order the calls came; the
// process id and a counter keep concurrent hooks apart, and mkdir refuses
// a name taken all the same.
func newEntry(dir string) (name, tmp string, err error) {
	for k := 0; ; k++ {
		name = strconv.FormatInt(time.Now().UnixNano(), 10) + "-" + strconv.FormatInt(int64(os.Getpid()), 16) + "-" + strconv.Itoa(k)
		tmp = filepath.Join(dir, ".new-"+name)
		err = os.Mkdir(tmp, 0o755)
		if err == nil || !errors.Is(err, os.ErrExist) || k >= 100 {
			break
		}
	}
	if err != nil {
		return "", "", fmt.Errorf("creating a hook spool entry: %w", err)
	}
	return name, tmp, nil
}

// encodeCall writes the call file's contents; it refuses what could not be
// read back as written.
func encodeCall(call hookargs.HookCall) ([]byte, error) {
	if !okValue(call.WUName) {
		return nil, fmt.Errorf("unexpected work-unit name %q", call.WUName)
	}
	b := []byte(callHeader + "\nwu_name " + call.WUName + "\n")
	if call.WUID != 0 {
		b = append(strconv.AppendInt(append(b, "wu_id "...), call.WUID, 10), '\n')
	}
	if call.Batch != 0 {
		b = append(strconv.AppendInt(append(b, "batch "...), call.Batch, 10), '\n')
	}
	if call.Error {
		b = append(strconv.AppendInt(append(b, "error "...), int64(call.ErrorMask), 10), '\n')
	}
	for _, p := range call.Files {
		base := filepath.Base(p)
		if !okName(base) || !okValue(base) {
			return nil, fmt.Errorf("unexpected output file name %q", base)
		}
		b = append(append(append(b, "file "...), base...), '\n')
	}
	return b, nil
}

// decodeCall reads a call file; outputs are named by their base names.
func decodeCall(data []byte) (hookargs.HookCall, error) {
	var c hookargs.HookCall
	lines := strings.Split(string(data), "\n")
	if len(lines) < 3 || lines[0] != callHeader || lines[len(lines)-1] != "" {
		return c, errors.New("not a complete hook call")
	}
	for _, line := range lines[1 : len(lines)-1] {
		key, val, _ := strings.Cut(line, " ")
		var err error
		switch key {
		case "wu_name":
			c.WUName = val
		case "wu_id":
			c.WUID, err = strconv.ParseInt(val, 10, 64)
		case "batch":
			c.Batch, err = strconv.ParseInt(val, 10, 64)
		case "error":
			c.Error = true
			c.ErrorMask, err = strconv.Atoi(val)
		case "file":
			if val != filepath.Base(val) || !okName(val) {
				return c, fmt.Errorf("bad file name %q", val)
			}
			c.Files = append(c.Files, val)
		default:
			return c, fmt.Errorf("unknown line %q", line)
		}
		if err != nil {
			return c, fmt.Errorf("line %q: %w", line, err)
		}
	}
	if !okValue(c.WUName) {
		return c, errors.New("no work-unit name")
	}
	return c, nil
}

// okValue: a value fits on its line.
func okValue(s string) bool { return s != "" && !strings.ContainsAny(s, "\n\r") }

func fill(dir string, call hookargs.HookCall, data []byte) error {
	for _, p := range call.Files {
		if err := keep(p, filepath.Join(dir, filepath.Base(p))); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // an optional output BOINC did not get; judged at intake
			}
			return err
		}
	}
	// The entry is not visible until it is renamed: no temporary name needed.
	return writeFlushed(filepath.Join(dir, callFile), 0o644, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// writeFlushed creates path, fills it and puts its data on disk.
func writeFlushed(path string, perm os.FileMode, write func(*os.File) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	err = write(f)
	if err == nil {
		err = fsync.Data(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func okName(base string) bool {
	return base != callFile && base != "." && base != ".." && base != "/" && !strings.HasPrefix(base, ".")
}

// keep links src to dst, or copies it where a link cannot be made, and
// makes sure its content is on disk: BOINC deletes src once we return.
func keep(src, dst string) error {
	if err := os.Link(src, dst); err != nil {
		if !errors.Is(err, syscall.EXDEV) && !errors.Is(err, syscall.EPERM) {
			return err
		}
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		defer in.Close()
		return writeFlushed(dst, 0o444, func(f *os.File) error {
			_, err := io.Copy(f, in)
			return err
		})
	}
	return fsync.DataPath(dst)
}

// Entries lists the entries waiting, oldest first.
func Entries(root string) ([]string, error) {
	ents, err := os.ReadDir(Dir(root))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the hook spool: %w", err)
	}
	var names []string
	for _, d := range ents {
		if d.IsDir() && !strings.HasPrefix(d.Name(), ".") {
			names = append(names, d.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}

// ErrMalformed marks an entry that will never read as a hook call: its
// call file is missing or not one the hook wrote. Any other error of Read
// (EMFILE, EIO) may pass.
var ErrMalformed = errors.New("malformed hook spool entry")

// Read returns an entry's call, with the paths of its kept outputs.
func Read(root, name string) (hookargs.HookCall, error) {
	dir := filepath.Join(Dir(root), name)
	data, err := os.ReadFile(filepath.Join(dir, callFile))
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.EISDIR) {
		// Entries appear by a rename, call file and all: one without it
		// is foreign (or its entry went, which only the creator does).
		return hookargs.HookCall{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if err != nil {
		return hookargs.HookCall{}, err
	}
	call, err := decodeCall(data)
	if err != nil {
		return call, fmt.Errorf("%w: %s: %w", ErrMalformed, callFile, err)
	}
	for k, f := range call.Files {
		call.Files[k] = filepath.Join(dir, f)
	}
	return call, nil
}

// Remove forgets an entry once its call is recorded.
func Remove(root, name string) error {
	if err := os.RemoveAll(filepath.Join(Dir(root), name)); err != nil {
		return fmt.Errorf("removing hook spool entry %s: %w", name, err)
	}
	return nil
}

// SetAside renames an entry that cannot be read out of the way (.bad-*),
// for the administrator: it must not block every chain behind it.
func SetAside(root, name string) error {
	return os.Rename(filepath.Join(Dir(root), name), filepath.Join(Dir(root), ".bad-"+name))
}

// UnplacedPrefix marks entries of hook calls for work units that look like
// rboinc's but that no chain step matches: kept with their outputs (BOINC
// deletes its copies once the hook returned) until an administrator looks.
// Renamed back without the prefix, an entry is taken in again.
const UnplacedPrefix = ".unplaced-"

// SetAsideUnplaced keeps an entry, outputs and all, out of the creator's
// way, durably, with the reason in its ReasonFile.
func SetAsideUnplaced(root, name, reason string) error {
	rf := filepath.Join(Dir(root), name, ReasonFile)
	os.Remove(rf) // of an earlier time it was set aside
	err := writeFlushed(rf, 0o644, func(f *os.File) error {
		_, err := f.WriteString(reason + "\n")
		return err
	})
	if err != nil {
		return fmt.Errorf("setting hook spool entry %s aside: %w", name, err)
	}
	if err := os.Rename(filepath.Join(Dir(root), name), filepath.Join(Dir(root), UnplacedPrefix+name)); err != nil {
		return err
	}
	return fsync.Dir(Dir(root))
}

// Exists tells whether an entry still waits.
func Exists(root, name string) bool {
	_, err := os.Stat(filepath.Join(Dir(root), name))
	return err == nil
}

// SweepUnfinished removes the entries that hooks began and never finished
// (a process killed while it wrote one) once they are older than age: no
// running hook takes that long, and BOINC runs the hook again for their work
// units, since those hooks never returned. It returns how many it removed.
func SweepUnfinished(root string, age time.Duration) (int, error) {
	ents, err := os.ReadDir(Dir(root))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading the hook spool: %w", err)
	}
	n := 0
	for _, d := range ents {
		if !strings.HasPrefix(d.Name(), ".new-") {
			continue
		}
		fi, err := d.Info()
		if err != nil || time.Since(fi.ModTime()) < age {
			continue
		}
		if err := os.RemoveAll(filepath.Join(Dir(root), d.Name())); err != nil {
			return n, fmt.Errorf("removing an unfinished hook spool entry: %w", err)
		}
		n++
	}
	return n, nil
}
