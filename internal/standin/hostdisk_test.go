package standin

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestVolunteerFullDiskResendsResult: the simulated host's slots share the
// project's disk. When that disk is full, the result is sent again once
// there is room, as a real client waits for space (or retries an upload
// the server refused for lack of it), and is not reported as an error:
// before, every replica failed at once ("download of input failed: no
// space left on device") and the work unit failed in BOINC, which a real
// project whose server disk fills for a moment never sees.
func TestVolunteerFullDiskResendsResult(t *testing.T) {
	t.Parallel()
	tp := setupCompute(t)
	filler := filepath.Join(slotsOnTmpfs(t, tp, "1m"), "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	block := make([]byte, 4096)
	for {
		if _, err := f.Write(block); err != nil {
			break
		}
	}
	f.Close()

	tp.stage("a_in1.coor", "coordinates\n")
	tp.stage("a_in1.psf", "topology\n")
	const wu = "full-TONI_G-0-1-RND0001"
	if _, errs, code := tp.createWork("", "", "--appname", "rbtest", "--wu_name", wu, "a_in1.coor", "a_in1.psf"); code != 0 {
		t.Fatal(errs)
	}
	resentOnceThereIsRoom(t, tp, wu, filler)
}

// TestVolunteerInputBiggerThanRoomResendsResult: with more than a megabyte
// free but less than an input (the soak's 1 MiB coordinates), copying it
// into the slot fails with ENOSPC while the disk does not look full; that
// is the host's lack of room all the same, and the result is sent again
// (before, every replica failed at once and the work unit failed: seen in
// the soak, 2026-12-06, a WebDAV-uploaded chain failed by a disk-full
// fault).
func TestVolunteerInputBiggerThanRoomResendsResult(t *testing.T) {
	t.Parallel()
	tp := setupCompute(t)
	// Outputs within the template's max_nbytes, whatever the input's size.
	tp.write("apps/rbtest/run", "#!/bin/sh\nhead -c 64 in.coor > out.coor\ncat in.psf > out.log\n", 0o755)
	slots := slotsOnTmpfs(t, tp, "8m")
	filler := filepath.Join(slots, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	// Leave about 1.5 MiB: more than hostDiskFull's megabyte.
	if _, err := f.Write(make([]byte, 8<<20-3<<19)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var st syscall.Statfs_t
	if err := syscall.Statfs(slots, &st); err != nil {
		t.Fatal(err)
	}
	if free := int64(st.Bavail) * int64(st.Bsize); free <= 1<<20 || free >= 2<<20 {
		t.Fatalf("%d bytes free on the slots' tmpfs, want between 1 and 2 MiB", free)
	}

	tp.stage("a_in1.coor", strings.Repeat("0.25 0.5 0.75\n", 3<<20/14)) // 3 MiB, copied into the slot
	tp.stage("a_in1.psf", "topology\n")
	const wu = "room-TONI_G-0-1-RND0001"
	if _, errs, code := tp.createWork("", "", "--appname", "rbtest", "--wu_name", wu, "a_in1.coor", "a_in1.psf"); code != 0 {
		t.Fatal(errs)
	}
	resentOnceThereIsRoom(t, tp, wu, filler)
}

// slotsOnTmpfs mounts a tmpfs of size (mount's notation) on the volunteer's
// slots, unmounted at the test's end; the test is skipped without root.
func slotsOnTmpfs(t *testing.T, tp *testProject, size string) string {
	t.Helper()
	slots := tp.path("slots")
	if err := os.MkdirAll(slots, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", slots, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs for the volunteer's slots (%v): the full-disk test needs root", err)
	}
	t.Cleanup(func() { syscall.Unmount(slots, syscall.MNT_DETACH) })
	return slots
}

// resentOnceThereIsRoom runs the volunteer while filler takes the slots'
// room: no result may be reported as an error; once filler is removed, the
// work unit wu must succeed (its result sent again).
func resentOnceThereIsRoom(t *testing.T, tp *testProject, wu, filler string) {
	t.Helper()
	stop := tp.startVolunteer()
	defer stop()
	time.Sleep(2 * time.Second)
	if n := tp.count(`SELECT count(*) FROM result WHERE outcome = 3`); n != 0 {
		t.Fatalf("%d error results while the host had no room, want none (sent again later)", n)
	}
	os.Remove(filler)
	tp.waitFor("the work unit to succeed once there is room", func() bool {
		return tp.count(`SELECT count(*) FROM workunit WHERE name = ? AND canonical_resultid > 0 AND error_mask = 0`, wu) == 1
	})
}
