package legacy_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/advance"
	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/spool"
)

// TestStopBetweenSteps: boinc_retrieve -stop on a group whose running
// chain is between two steps (its step done, the next one waiting for the
// creator, which the status calls queued) stops it. The original client
// sends stop at any moment, and on a busy server a chain spends much of
// its life there.
func TestStopBetweenSteps(t *testing.T) {
	w := newWorld(t)
	wu := firstWU(t, w.uploadAndSubmit("toni", "up051158", description(t, "submit-10step.xml", nil), inputs))
	// BOINC delivers step 0; the hook's call is taken in, but the creator
	// has not made step 1 yet.
	var files []string
	for k := range 8 {
		p := w.e.Proj.UploadPath(fmt.Sprintf("%s_0_r1804289383_%d", wu, k))
		write(t, p, "output\n", 0o644)
		files = append(files, p)
	}
	if _, err := spool.Accept(w.e.Root, boinc.HookCall{WUName: wu, Files: files}); err != nil {
		t.Fatal(err)
	}
	if _, err := advance.IntakeSpool(w.ctx, w.e.Chains()); err != nil {
		t.Fatal(err)
	}
	st, err := w.e.Status(w.ctx, mustUser(t, w, "toni"), "G1", "")
	if err != nil || len(st.Chains) != 1 || st.Chains[0].State != "queued" {
		t.Fatalf("before the stop: %+v %v", st.Chains, err)
	}
	ans := w.post("toni", ret, "action=stop&group=G1&loginname=toni")
	if !strings.Contains(ans, `<Success Message="Group successfully marked as stopped`) {
		t.Fatalf("stop of a chain between steps answered:\n%s", ans)
	}
	if err := w.e.CreatorPass(w.ctx); err != nil {
		t.Fatal(err)
	}
	st, err = w.e.Status(w.ctx, mustUser(t, w, "toni"), "G1", "")
	if err != nil || st.Chains[0].State != "stopped" || st.Chains[0].StepsDone != 1 {
		t.Fatalf("after the stop: %+v %v", st.Chains, err)
	}
	if ans := w.post("toni", ret, "action=stop&group=G1&loginname=toni"); !strings.Contains(ans, "Already stopped") {
		t.Fatalf("second stop answered:\n%s", ans)
	}
}
