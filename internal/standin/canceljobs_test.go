package standin

import (
	"bytes"
	"context"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/boincdb"
)

// TestCancelJobsTool runs bin/cancel_jobs with BOINC's two command lines,
// from outside the project, and checks its effect and its errors.
func TestCancelJobsTool(t *testing.T) {
	// Waits mostly on its processes (create_work, the hook): beside the
	// others that do.
	t.Parallel()
	tp := setupCompute(t)
	ctx := context.Background()
	for _, wu := range []string{"k1", "k2", "k3", "k4"} {
		tp.stage(wu+".coor", wu+"\n")
		tp.stage(wu+".psf", "topology\n")
		if _, errs, code := tp.createWork("", "", "--appname", "rbtest", "--wu_name", wu, wu+".coor", wu+".psf"); code != 0 {
			t.Fatalf("%s: %s", wu, errs)
		}
	}
	s := tp.newSim()
	if err := s.transitionDue(ctx, tp.p); err != nil {
		t.Fatal(err)
	}
	ids, err := tp.db().WUIDs(ctx, []string{"k1", "k2", "k3", "k4"})
	if err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, int) {
		cmd := exec.Command(tp.path("bin/cancel_jobs"), args...)
		cmd.Dir = t.TempDir()
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		if ee, ok := err.(*exec.ExitError); ok {
			return out.String(), ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return out.String(), 0
	}
	for _, bad := range [][]string{{}, {"--name"}, {"1", "2", "3"}, {"x", "y"}, {"0", "5"}} {
		if out, code := run(bad...); code != 1 || !strings.Contains(out, "Usage: cancel_jobs min-ID max-ID") {
			t.Errorf("cancel_jobs %q: exit %d, %q; want BOINC's usage and exit 1", bad, code, out)
		}
	}
	if out, code := run("--name", "nope"); code != 1 || !strings.Contains(out, "No workunit named 'nope'") {
		t.Errorf("cancel_jobs --name nope: exit %d, %q", code, out)
	}
	if out, code := run("--name", "k1"); code != 0 || out != "" {
		t.Fatalf("cancel_jobs --name k1: exit %d, %q", code, out)
	}
	lo, hi := min(ids["k2"], ids["k3"]), max(ids["k2"], ids["k3"])
	if out, code := run(itoa(lo), itoa(hi)); code != 0 || out != "" {
		t.Fatalf("cancel_jobs %d %d: exit %d, %q", lo, hi, code, out)
	}
	if err := s.transitionDue(ctx, tp.p); err != nil {
		t.Fatal(err)
	}
	for wu, cancelled := range map[string]bool{"k1": true, "k2": true, "k3": true, "k4": false} {
		n := tp.count(`SELECT count(*) FROM workunit WHERE name = ? AND error_mask & ? != 0 AND assimilate_state = ?`, wu, boincdb.ErrCancelled, assimReady)
		unsent := tp.count(`SELECT count(*) FROM result r JOIN workunit w ON w.id = r.workunitid WHERE w.name = ? AND r.server_state = ?`, wu, serverUnsent)
		if cancelled && (n != 1 || unsent != 0) || !cancelled && (n != 0 || unsent != 1) {
			t.Errorf("%s: cancelled and ready %d, unsent results %d; want cancelled %v", wu, n, unsent, cancelled)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
