package spool

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/hookargs"
)

func TestWriteRead(t *testing.T) {
	root, up := t.TempDir(), t.TempDir()
	var files []string
	for k, c := range []string{"a\n", "b\n"} {
		p := filepath.Join(up, "w-A_g-0-2-RND0001_0_r1_"+string(rune('0'+k)))
		os.WriteFile(p, []byte(c), 0o644)
		files = append(files, p)
	}
	missing := filepath.Join(up, "w-A_g-0-2-RND0001_0_r1_2") // an optional output BOINC did not get
	call := hookargs.HookCall{WUName: "w-A_g-0-2-RND0001", WUID: 9, Files: append(files, missing)}
	name, err := Write(root, call)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range files { // BOINC's file_deleter
		os.Remove(p)
	}
	got, err := Read(root, name)
	if err != nil {
		t.Fatal(err)
	}
	if got.WUName != call.WUName || got.WUID != 9 || len(got.Files) != 3 {
		t.Fatalf("read back %+v", got)
	}
	for i, want := range []string{"a\n", "b\n"} {
		if data, err := os.ReadFile(got.Files[i]); err != nil || string(data) != want {
			t.Fatalf("output %d: %q %v", i, data, err)
		}
	}
	if _, err := os.Stat(got.Files[2]); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing output appeared: %v", err)
	}
	names, err := Entries(root)
	if err != nil || len(names) != 1 || names[0] != name {
		t.Fatalf("entries %v %v", names, err)
	}
	if err := Remove(root, name); err != nil || Exists(root, name) {
		t.Fatalf("remove: %v", err)
	}
}

func TestEntriesInOrder(t *testing.T) {
	root := t.TempDir()
	var want []string
	for i := 0; i < 5; i++ {
		n, err := Write(root, hookargs.HookCall{WUName: "w"})
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, n)
	}
	os.MkdirAll(filepath.Join(Dir(root), ".new-half-written"), 0o755)
	got, _ := Entries(root)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("entries %v, want %v", got, want)
	}
}

func TestWriteRefusesOddNames(t *testing.T) {
	root := t.TempDir()
	for _, p := range []string{"/x/call", "/x/a\nb_0_r1_0", "/x/.hidden", "/"} {
		if _, err := Write(root, hookargs.HookCall{WUName: "w", Files: []string{p}}); err == nil {
			t.Errorf("%q accepted", p)
		}
	}
	if got, _ := Entries(root); len(got) != 0 {
		t.Fatalf("entries left: %v", got)
	}
}

func TestStream(t *testing.T) {
	root := t.TempDir()
	if InStream(root) {
		t.Fatal("in a stream before any call")
	}
	os.MkdirAll(Dir(root), 0o755)
	MarkCall(root)
	if !InStream(root) {
		t.Fatal("not in a stream right after a call")
	}
	old := time.Now().Add(-time.Second)
	os.Chtimes(filepath.Join(Dir(root), lastCall), old, old)
	if InStream(root) {
		t.Fatal("in a stream a second after the last call")
	}
	AskPass(root)
	if !PassAsked(root) {
		t.Fatal("pass not asked")
	}
	ClearAsk(root)
	if PassAsked(root) {
		t.Fatal("ask not cleared")
	}
}

func TestLock(t *testing.T) {
	root := t.TempDir()
	f, err := Lock(root, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Lock(root, false); !errors.Is(err, ErrBusy) {
		t.Fatalf("second lock: %v", err)
	}
	f.Close()
	g, err := Lock(root, false)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	g.Close()
}

// FuzzRead: whatever the call file holds, Read never names a file outside its
// entry.
func FuzzRead(f *testing.F) {
	f.Add([]byte("rboinc-hook-call 1\nwu_name w\nwu_id 7\nfile w_0_r1_0\n"))
	f.Add([]byte("rboinc-hook-call 1\nwu_name w\nfile ../x\n"))
	f.Add([]byte("rboinc-hook-call 1\nwu_name w\nerror 3\nbatch 2\n"))
	f.Add([]byte("rboinc-hook-call 1\nfile ..\n"))
	f.Add([]byte("rboinc-hook-call 1\nwu_name w\nfile call\n"))
	f.Add([]byte("rboinc-hook-call 1\nwu_name w"))
	f.Fuzz(func(t *testing.T, data []byte) {
		root := t.TempDir()
		dir := filepath.Join(Dir(root), "1-x")
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, callFile), data, 0o644)
		call, err := Read(root, "1-x")
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("a bad call file is not ErrMalformed: %v", err)
			}
			return
		}
		for _, p := range call.Files {
			if filepath.Dir(p) != dir || !okName(filepath.Base(p)) {
				t.Fatalf("file %q outside entry %s", p, dir)
			}
		}
	})
}

// FuzzCallRoundTrip: a call the hook spools reads back as it was (outputs
// by their base names), or is refused when spooled.
func FuzzCallRoundTrip(f *testing.F) {
	f.Add("w-A_g-0-2-RND0001", int64(9), int64(0), false, 0, "/up/w-A_g-0-2-RND0001_0_r1_0")
	f.Add("w-A_g-0-2-RND0001", int64(0), int64(4), true, 3, "")
	f.Add("a\nb", int64(1), int64(1), false, 0, "/x/y z")
	f.Fuzz(func(t *testing.T, wu string, id, batch int64, isErr bool, mask int, file string) {
		call := hookargs.HookCall{WUName: wu, WUID: id, Batch: batch, Error: isErr, ErrorMask: mask}
		if file != "" {
			call.Files = []string{file}
		}
		data, err := encodeCall(call)
		if err != nil {
			return
		}
		got, err := decodeCall(data)
		if err != nil {
			t.Fatalf("%+v spooled as %q, then: %v", call, data, err)
		}
		if !isErr {
			mask = 0
		}
		want := hookargs.HookCall{WUName: wu, WUID: id, Batch: batch, Error: isErr, ErrorMask: mask}
		if file != "" {
			want.Files = []string{filepath.Base(file)}
		}
		if got.WUName != want.WUName || got.WUID != want.WUID || got.Batch != want.Batch || got.Error != want.Error ||
			got.ErrorMask != want.ErrorMask || strings.Join(got.Files, "/") != strings.Join(want.Files, "/") {
			t.Fatalf("%+v read back as %+v", want, got)
		}
	})
}

// An entry without its call file, or with a directory in its place, is
// malformed: it will never read.
func TestReadMissingCallIsMalformed(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(Dir(root), "1-x"), 0o755)
	os.MkdirAll(filepath.Join(Dir(root), "2-x", callFile), 0o755)
	for _, name := range []string{"1-x", "2-x"} {
		if _, err := Read(root, name); !errors.Is(err, ErrMalformed) {
			t.Fatalf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

func TestSweepUnfinished(t *testing.T) {
	root := t.TempDir()
	old, fresh := filepath.Join(Dir(root), ".new-1-a-0"), filepath.Join(Dir(root), ".new-2-b-0")
	for _, d := range []string{old, fresh} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "w_0_r1_0"), []byte("x"), 0o644)
	}
	long := time.Now().Add(-2 * time.Hour)
	os.Chtimes(old, long, long)
	done, err := Write(root, hookargs.HookCall{WUName: "w"})
	if err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(Dir(root), done), long, long) // finished entries are never swept
	n, err := SweepUnfinished(root, time.Hour)
	if err != nil || n != 1 {
		t.Fatalf("swept %d, %v", n, err)
	}
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the old unfinished entry is still there")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatal("a fresh unfinished entry (a hook at work) was removed")
	}
	if !Exists(root, done) {
		t.Fatal("a finished entry was removed")
	}
}

// TestUnplaced: a call written set aside is never an entry waiting, keeps
// its outputs after BOINC's deleter and its reason; renamed back it is
// read as any entry, and set aside again it has the new reason.
func TestUnplaced(t *testing.T) {
	root, up := t.TempDir(), t.TempDir()
	p := filepath.Join(up, "w-A_g-0-2-RND0001_x_r1_0")
	os.WriteFile(p, []byte("a\n"), 0o644)
	call := hookargs.HookCall{WUName: "w-A_g-0-2-RND0001", WUID: 9, Files: []string{p}}
	name, err := WriteUnplaced(root, call, "first reason")
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(p)
	kept := filepath.Join(Dir(root), UnplacedPrefix+name)
	if b, err := os.ReadFile(filepath.Join(kept, filepath.Base(p))); err != nil || string(b) != "a\n" {
		t.Fatalf("output %q, %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(kept, ReasonFile)); string(b) != "first reason\n" {
		t.Fatalf("reason %q", b)
	}
	if names, _ := Entries(root); len(names) != 0 || Exists(root, name) {
		t.Fatalf("an unplaced call waits: %v", names)
	}
	if err := os.Rename(kept, filepath.Join(Dir(root), name)); err != nil {
		t.Fatal(err)
	}
	got, err := Read(root, name)
	if err != nil || got.WUName != call.WUName || len(got.Files) != 1 {
		t.Fatalf("read back %+v, %v", got, err)
	}
	if err := SetAsideUnplaced(root, name, "second reason"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(kept, ReasonFile)); string(b) != "second reason\n" {
		t.Fatalf("reason %q", b)
	}
	if b, err := os.ReadFile(filepath.Join(kept, filepath.Base(p))); err != nil || string(b) != "a\n" {
		t.Fatalf("output after setting aside again %q, %v", b, err)
	}
}
