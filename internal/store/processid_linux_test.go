package store

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestProcessHiddenByHidepidLives: on a host whose /proc is mounted with
// hidepid (another user's processes invisible), a live process of another
// account (the web server's submission, seen from the creator's account)
// is not taken for dead: its steps would be revived while it creates them.
// The check runs for real: the test binary again, as nobody, in a mount
// namespace whose /proc has hidepid=2.
func TestProcessHiddenByHidepidLives(t *testing.T) {
	if pid := os.Getenv("RBOINC_TEST_HIDDEN_PID"); pid != "" {
		p, _ := strconv.Atoi(pid)
		started, _ := strconv.ParseInt(os.Getenv("RBOINC_TEST_HIDDEN_START"), 10, 64)
		here := thisProcess()
		l := leaseRow{id: "x", proc: processIdentity{host: here.host, pid: p, started: started}, expires: time.Now().Unix() + 3600}
		_, statErr := os.Stat("/proc/" + pid)
		fmt.Printf("RESULT dead=%v hidden=%v\n", l.dead(time.Now().Unix(), here), statErr != nil)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: mounts a /proc with hidepid in a mount namespace")
	}
	for _, tool := range []string{"unshare", "setpriv", "sleep"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s", tool)
		}
	}
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sleeper.Process.Kill(); sleeper.Wait() }()
	started := processStart(sleeper.Process.Pid)
	if started < 0 {
		t.Fatalf("the sleeper's start: %d", started)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "store.test")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("unshare", "-m", "--propagation", "private", "sh", "-c",
		`mount -t proc -o hidepid=2 proc /proc && exec setpriv --reuid=65534 --regid=65534 --clear-groups "$0" -test.run='^TestProcessHiddenByHidepidLives$'`, bin)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "RBOINC_TEST_HIDDEN_PID="+strconv.Itoa(sleeper.Process.Pid), "RBOINC_TEST_HIDDEN_START="+strconv.FormatInt(started, 10))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Skipf("cannot run the check as nobody under hidepid (%v): %s", err, out)
	}
	if !strings.Contains(string(out), "hidden=true") {
		t.Skipf("hidepid did not hide the process here: %s", out)
	}
	if !strings.Contains(string(out), "RESULT dead=false") {
		t.Fatalf("a live process hidden by hidepid was taken for dead: %s", out)
	}
}
