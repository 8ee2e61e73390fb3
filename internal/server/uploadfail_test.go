package server_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/workflow/client"
)

// TestFailedUploadLeavesNoCollection: when an upload is refused (here: a
// file over the server's upload limit), rboinc-submit's client removes the
// upload collection it opened, so that nothing is left in the scratch area.
func TestFailedUploadLeavesNoCollection(t *testing.T) {
	t.Parallel()
	v := newEnv(t)
	v.e.Cfg.MaxUploadBytes = 1 << 20
	dir := t.TempDir()
	big := filepath.Join(dir, "big.coor")
	os.WriteFile(big, []byte(strings.Repeat("1 2 3\n", 2<<20/6)), 0o644) // too large to go inline too
	vel := filepath.Join(dir, "x.vel")
	os.WriteFile(vel, []byte("0 0 0\n"), 0o644)
	cl, err := client.New(v.srv.URL+"/rboinc_cgi", v.tokens["alice"])
	if err != nil {
		t.Fatal(err)
	}
	_, err = cl.SubmitChains(t.Context(), client.SubmitInput{Queue: "langevin", Group: "g",
		Chains: []client.Chain{{Name: "c", Files: map[string]string{"coor_file": big, "vel_file": vel}}}})
	if err == nil || client.ExitCode(err) != client.ExitRefused || !strings.Contains(err.Error(), "larger") {
		t.Fatalf("submission of a file over the limit: %v (exit %d)", err, client.ExitCode(err))
	}
	u, err := v.db.UserByName(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(v.e.DAVRoot(u))
	if len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("the failed upload left %v in the scratch area", names)
	}
}
