package hookargs

import (
	"slices"
	"testing"
)

func TestHandoverArgsReadBack(t *testing.T) {
	args := []string{"17", "/u/x/w-A_g-0-2-RND0001_0_r1_0"}
	for _, tc := range []struct {
		entry string
		alone bool
	}{{"", false}, {"12-ab", false}, {"12-ab", true}} {
		argv := HandoverArgs("/root", tc.entry, tc.alone, args)
		if argv[0] != "process" {
			t.Fatalf("argv %q", argv)
		}
		root, rest := SplitRoot(argv[1:], func(string) string { return "" })
		entry, alone, rest, err := SplitSpooled(rest)
		if err != nil || root != "/root" || entry != tc.entry || alone != tc.alone || !slices.Equal(rest, args) {
			t.Fatalf("%+v: read back %q %q %v %q %v", tc, root, entry, alone, rest, err)
		}
	}
}

func TestSplitSpooledRefusesPaths(t *testing.T) {
	for _, e := range []string{"../x", "a/b", ".last-call"} {
		if _, _, _, err := SplitSpooled([]string{"--spooled", e, "17"}); err == nil {
			t.Errorf("entry %q accepted", e)
		}
	}
}
