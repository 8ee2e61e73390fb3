package hookargs

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/naming"
)

const wu = "run1-TONI_G-0-3-RND0001"

func TestParseHookArgsForms(t *testing.T) {
	p0 := "/p/upload/54/" + wu + "_0_r1176225829_0"
	p1 := "/p/upload/86/" + wu + "_0_r1176225829_1"
	cases := []struct {
		args  []string
		files int
		id    int64
	}{
		{[]string{"1143", p0, p1}, 2, 1143},              // today: WU_ID PATH...
		{[]string{wu, p0, "out", p1, "out2", "7"}, 2, 0}, // wu_name files2 batch_id
		{[]string{wu, p0, "out", "7", "7", "5.034376", "1143", p0}, 2, 0},
		{[]string{p0}, 1, 0}, // files alone
		// An assigned job's result: <wu>_<pid>_<time>_<seq> (real BOINC).
		{[]string{"1145", "/p/upload/3f/" + wu + "_26939_1796317918_0_r1146017171_0", "/p/upload/1a/" + wu + "_26939_1796317918_0_r1146017171_1"}, 2, 1145},
	}
	for _, tc := range cases {
		c, err := Parse(tc.args)
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if c.WUName != wu || len(c.Files) != tc.files || c.WUID != tc.id || c.Error {
			t.Errorf("%v: got %+v", tc.args, c)
		}
	}
}

func TestParseHookArgsError(t *testing.T) {
	c, err := Parse([]string{"--error", "8", wu, "1145", "8"})
	if err != nil || !c.Error || c.ErrorMask != 8 || c.WUName != wu || c.WUID != 1145 || c.Batch != 8 {
		t.Fatalf("%+v %v", c, err)
	}
	c, err = Parse([]string{"--error", "2", "1140"})
	if err != nil || !c.Error || c.WUID != 1140 || c.WUName != "" {
		t.Fatalf("old form: %+v %v", c, err)
	}
	for _, bad := range [][]string{nil, {"--error"}, {"--error", "x", wu, "1", "2"}, {"1143"}, {"12", "/p/x"},
		{wu, "/p/upload/1/other-TONI_G-0-3-RND0001_0_r1_0"}} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("1143", "/p/upload/54/"+wu+"_0_r1_0", "")
	f.Add("--error", "8", wu)
	// Assigned jobs (<wu>_<pid>_<time>_<seq>), the older forms, a chain
	// name with digits after '_', another project's work unit.
	f.Add("1145", "/p/upload/3f/"+wu+"_26939_1796317918_0_r1146017171_0", "/p/upload/1a/"+wu+"_26939_1796317918_0_r1146017171_1")
	f.Add("1145", "/p/upload/3f/"+wu+"_26939_1796317918_0_1", "")
	f.Add(wu, "/p/upload/3f/"+wu+"_3_2", "out")
	f.Add("7", "/u/run_7-ALICE_g_2-1-3-RND0002_3_r99_0", "/u/run_7-ALICE_g_2-1-3-RND0002_44_55_66_r99_1")
	f.Add("7", "/u/other_5_6_7_r1_0", "")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		hc, err := Parse([]string{a, b, c})
		if err != nil || hc.Error {
			return
		}
		if hc.WUName == "" {
			t.Fatal("success without WU name")
		}
		// Every output is the work unit's: its name, '_'-separated
		// numbers (the result), then the output's own parts.
		for _, p := range hc.Files {
			base := filepath.Base(p)
			o, err := naming.ParseOutput(base)
			if err != nil || o.WU != hc.WUName || !strings.HasPrefix(base, hc.WUName+"_") {
				t.Fatalf("%q: output %s taken for work unit %q (%+v, %v)", []string{a, b, c}, base, hc.WUName, o, err)
			}
		}
		// An rboinc work unit is found whatever result naming BOINC used.
		if _, err := naming.ParseWU(hc.WUName); err == nil {
			for _, p := range hc.Files {
				if w, ok := naming.FindWU(filepath.Base(p)); !ok || w != hc.WUName {
					t.Fatalf("%q: FindWU(%s) = %q, want %q", []string{a, b, c}, filepath.Base(p), w, hc.WUName)
				}
			}
		}
	})
}

func TestSplitRoot(t *testing.T) {
	env := func(string) string { return "/env" }
	for _, tc := range []struct {
		args []string
		root string
		rest int
	}{
		{[]string{"--root", "/r", "5", "/p"}, "/r", 2},
		{[]string{"-root", "/r", "5"}, "/r", 1},
		{[]string{"--root=/r", "5"}, "/r", 1},
		{[]string{"5", "/p"}, "/env", 2},
		{[]string{"--root"}, "/env", 1},
	} {
		root, rest := SplitRoot(tc.args, env)
		if root != tc.root || len(rest) != tc.rest {
			t.Errorf("%q: root %q, rest %q", tc.args, root, rest)
		}
	}
}
