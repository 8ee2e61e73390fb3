package spool

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rboinc/rboinc/workflow/boinc"
)

// DirName is the spool's directory in the server root.
const DirName = "spool"

// callFile describes the call in each entry.
const callFile = "call.json"

type spooledCall struct {
	Error     bool     `json:"error,omitempty"`
	ErrorMask int      `json:"error_mask,omitempty"`
	WUName    string   `json:"wu_name"`
	WUID      int64    `json:"wu_id,omitempty"`
	Batch     int64    `json:"batch,omitempty"`
	Files     []string `json:"files,omitempty"` // base names, in the call's order; present ones are linked beside
}

// Dir is the spool of a server root.
func Dir(root string) string { return filepath.Join(root, DirName) }

// Write spools one call: the outputs hard-linked (copied across file
// systems), the call, all made durable, then renamed into place at once.
// It returns the entry's name.
func Write(root string, call boinc.HookCall) (string, error) {
	dir := Dir(root)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("creating the hook spool: %w", err)
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	// Nanoseconds first: names sort in the order the calls came.
	name := strconv.FormatInt(time.Now().UnixNano(), 10) + "-" + hex.EncodeToString(rnd[:])
	tmp := filepath.Join(dir, ".new-"+name)
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return "", fmt.Errorf("creating a hook spool entry: %w", err)
	}
	// The data of every file is on disk (fill, without a journal commit
	// each); the entry's directory, then the spool's after the rename, make
	// the names durable: no ordering between them is assumed, since a file
	// system without a journal gives none.
	err := fill(tmp, call)
	if err == nil {
		err = syncDir(tmp)
	}
	if err == nil {
		err = os.Rename(tmp, filepath.Join(dir, name))
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("spooling the outputs of %s: %w", call.WUName, err)
	}
	return name, nil
}

func fill(dir string, call boinc.HookCall) error {
	sc := spooledCall{Error: call.Error, ErrorMask: call.ErrorMask, WUName: call.WUName, WUID: call.WUID, Batch: call.Batch}
	for _, p := range call.Files {
		base := filepath.Base(p)
		if !okName(base) {
			return fmt.Errorf("unexpected output file name %q", base)
		}
		sc.Files = append(sc.Files, base)
		if err := keep(p, filepath.Join(dir, base)); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // an optional output BOINC did not get; judged at intake
			}
			return err
		}
	}
	data, err := json.Marshal(sc)
	if err != nil {
		return err
	}
	// The entry is not visible until it is renamed: no temporary name needed.
	f, err := os.OpenFile(filepath.Join(dir, callFile), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = flushData(f)
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
		_, _, err := boinc.CopyFileAtomic(src, dst, 0o444)
		return err
	}
	f, err := os.Open(dst)
	if err != nil {
		return err
	}
	err = flushData(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
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
	sort.Strings(names)
	return names, nil
}

// Read returns an entry's call, with the paths of its kept outputs.
func Read(root, name string) (boinc.HookCall, error) {
	dir := filepath.Join(Dir(root), name)
	data, err := os.ReadFile(filepath.Join(dir, callFile))
	if err != nil {
		return boinc.HookCall{}, err
	}
	var sc spooledCall
	if err := json.Unmarshal(data, &sc); err != nil {
		return boinc.HookCall{}, fmt.Errorf("%s: %w", callFile, err)
	}
	call := boinc.HookCall{Error: sc.Error, ErrorMask: sc.ErrorMask, WUName: sc.WUName, WUID: sc.WUID, Batch: sc.Batch}
	for _, f := range sc.Files {
		if f != filepath.Base(f) || !okName(f) {
			return call, fmt.Errorf("bad file name %q in %s", f, callFile)
		}
		call.Files = append(call.Files, filepath.Join(dir, f))
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

// Exists tells whether an entry still waits.
func Exists(root, name string) bool {
	_, err := os.Stat(filepath.Join(Dir(root), name))
	return err == nil
}
