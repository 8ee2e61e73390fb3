package engine

import (
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/naming"
)

// FuzzUnreadableCall: whatever BOINC (or anyone) passes the hook, a call
// taken as rboinc's names one of rboinc's work units and has outputs, all
// of them paths; the work unit is the first output's, else a token's.
func FuzzUnreadableCall(f *testing.F) {
	const wu = "o1-ALICE_go-0-2-RND4484"
	f.Add("1145", "/u/3f/"+wu+"_26939_1796317918_0_r1146017171_0", "/u/1a/"+wu+"_x_r1_1")
	f.Add(wu, "/u/3f/other-ALICE_go-0-2-RND4484_0_r1_0", "out")
	f.Add(wu, "/u/3f/someone_0_r1_0", "7")
	f.Add("--error", "3", wu)
	f.Add("12", "/p/upload/3f/someone_x_r1_0", "")
	f.Fuzz(func(t *testing.T, a, b, c string) {
		call, w, ok := unreadableCall([]string{a, b, c})
		if !ok {
			return
		}
		if w.String() != call.WUName || len(call.Files) == 0 {
			t.Fatalf("%q: %+v, %+v", []string{a, b, c}, call, w)
		}
		if _, err := naming.ParseWU(call.WUName); err != nil {
			t.Fatalf("%q: work unit %q: %v", []string{a, b, c}, call.WUName, err)
		}
		for _, p := range call.Files {
			if !strings.Contains(p, "/") {
				t.Fatalf("%q: output %q is no path", []string{a, b, c}, p)
			}
		}
	})
}
