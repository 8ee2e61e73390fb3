package setup

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// doctor says to add <one_result_per_user_per_wu/> to a real project's
// config.xml that lacks it (late replicas need it), and is content once it
// is there.
func TestDoctorOneResultPerUserPerWU(t *testing.T) {
	ctx := context.Background()
	proj := fakeProject(t, t.TempDir())
	root, _ := initReal(t, proj)
	cfgPath := filepath.Join(proj, "config.xml")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	notes := func(f Findings) string {
		var s []string
		for _, x := range f {
			if x.Severity == Note {
				s = append(s, x.Msg)
			}
		}
		return strings.Join(s, "\n")
	}
	const add = "Add <one_result_per_user_per_wu/> to <config> in "
	if n := notes(Doctor(ctx, root)); !strings.Contains(n, "config.xml has no <one_result_per_user_per_wu/>") || !strings.Contains(n, add+cfgPath) {
		t.Errorf("doctor does not say to add <one_result_per_user_per_wu/>:\n%s", n)
	}
	for elem, missing := range map[string]bool{
		"<one_result_per_user_per_wu/>":                              false,
		"<one_result_per_user_per_wu>1</one_result_per_user_per_wu>": false,
		"<one_result_per_user_per_wu>0</one_result_per_user_per_wu>": true,
		"<one_result_per_host_per_wu/>":                              true,
	} {
		write(t, cfgPath, strings.Replace(string(cfg), "<config>", "<config>"+elem, 1), 0o644)
		f := Doctor(ctx, root)
		if got := strings.Contains(notes(f), add); got != missing {
			t.Errorf("%s: says to add it %v, want %v:\n%s", elem, got, missing, notes(f))
		}
		if !missing && !strings.Contains(oks(f), "config.xml has <one_result_per_user_per_wu/>") {
			t.Errorf("%s: not said to be fine", elem)
		}
	}
}
