package hookargs

import (
	"slices"
	"strings"
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
	for _, e := range []string{"../x", "a/b", ".last-call", "/", "", "..", "."} {
		if _, _, _, err := SplitSpooled([]string{"--spooled", e, "17"}); err == nil {
			t.Errorf("entry %q accepted", e)
		}
	}
}

// FuzzSplitSpooled: whatever the arguments, an entry SplitSpooled accepts
// names a file in the spool itself (no directory, not hidden), and what
// HandoverArgs writes reads back unchanged.
func FuzzSplitSpooled(f *testing.F) {
	f.Add("12-ab", true, "17")
	f.Add("/", false, "x")
	f.Add("..", false, "--alone")
	f.Fuzz(func(t *testing.T, entry string, alone bool, arg string) {
		got, _, _, err := SplitSpooled([]string{"--spooled", entry, arg})
		if err != nil {
			return
		}
		if got == "" || strings.ContainsRune(got, '/') || strings.HasPrefix(got, ".") {
			t.Fatalf("entry %q accepted", got)
		}
		argv := HandoverArgs("/r", got, alone, []string{arg})
		_, rest := SplitRoot(argv[1:], func(string) string { return "" })
		e2, a2, rest, err := SplitSpooled(rest)
		if err != nil || e2 != got || (arg != "--alone" && (a2 != alone || !slices.Equal(rest, []string{arg}))) {
			t.Fatalf("%q %v %q: read back %q %v %q %v", got, alone, arg, e2, a2, rest, err)
		}
	})
}
