package engine_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/workflow/wire"
)

// TestStoppedChainInputLinkedAgain: a stopped chain's work unit stays in
// BOINC and runs to its end; an input of it taken out of download/ is
// linked again as a running chain's is.
func TestStoppedChainInputLinkedAgain(t *testing.T) {
	f := newFixtureWith(t, map[string]any{"input_check_seconds": 0.5})
	wu := f.submit("g", "c1", 2).Chains[0].FirstWU
	if _, err := f.e.Stop(f.ctx, f.u, wire.ChainRef{Group: "g", Name: "c1"}); err != nil {
		t.Fatal(err)
	}
	dl, _ := f.firstInput(wu)
	if err := os.Remove(dl); err != nil {
		t.Fatal(err)
	}
	f.world(true, false)
	waitFor(t, time.Minute, "a stopped chain's input is not back in download/", func() bool {
		_, err := os.Stat(dl)
		return err == nil
	})
}

// TestStoppedChainDownloadErrorWaitsForResume: when a stopped chain's
// work unit fails in BOINC because its input could not be downloaded
// (and the pool has it), the chain stays stopped, its step made again
// when it is resumed, rather than failing the chain.
func TestStoppedChainDownloadErrorWaitsForResume(t *testing.T) {
	f := newFixtureWith(t, map[string]any{"max_step_attempts": 1, "max_error_results": 1, "max_total_results": 1})
	wu := f.submit("g", "c1", 2).Chains[0].FirstWU
	if _, err := f.e.Stop(f.ctx, f.u, wire.ChainRef{Group: "g", Name: "c1"}); err != nil {
		t.Fatal(err)
	}
	dl, _ := f.firstInput(wu)
	os.Remove(dl + ".md5")
	if err := os.Remove(dl); err != nil {
		t.Fatal(err)
	}
	f.world(false, true) // no creator: nothing links the input before the volunteer tries
	var c wire.ChainStatus
	waitFor(t, time.Minute, "the stopped chain's work unit did not end", func() bool {
		st, err := f.e.Status(f.ctx, f.u, "g", "c1")
		if err != nil {
			t.Fatal(err)
		}
		c = st.Chains[0]
		// Status reads the chain and its step apart: the new work unit
		// may show before the chain's new reason does.
		return c.State != wire.StateStopped || strings.Contains(c.Error, "input download failed")
	})
	if c.State != wire.StateStopped || c.WU == wu {
		t.Fatalf("after a download error of its work unit %s the stopped chain is %s (work unit %s): %s", wu, c.State, c.WU, c.Error)
	}
	f.world(true, false)
	if _, err := f.e.Resume(f.ctx, f.u, wire.ResumeRequest{ChainRef: wire.ChainRef{Group: "g", Name: "c1"}}); err != nil {
		t.Fatal(err)
	}
	f.waitChain("g", "c1", wire.StateDone, 4*time.Minute)
}
