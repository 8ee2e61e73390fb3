package standin

import (
	"os"
	"path/filepath"
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
	tp := setupCompute(t)
	slots := tp.path("slots")
	if err := os.MkdirAll(slots, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", slots, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs for the volunteer's slots (%v): the full-disk test needs root", err)
	}
	t.Cleanup(func() { syscall.Unmount(slots, syscall.MNT_DETACH) })
	filler := filepath.Join(slots, "filler")
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
	stop := tp.startVolunteer()
	defer stop()
	time.Sleep(2 * time.Second)
	if n := tp.count(`SELECT count(*) FROM result WHERE outcome = 3`); n != 0 {
		t.Fatalf("%d error results while the host's disk was full, want none (sent again later)", n)
	}
	os.Remove(filler)
	tp.waitFor("the work unit to succeed once there is room", func() bool {
		return tp.count(`SELECT count(*) FROM workunit WHERE name = ? AND canonical_resultid > 0 AND error_mask = 0`, wu) == 1
	})
}
