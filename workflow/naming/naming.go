package naming

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxIdentLen bounds group and chain names: WU names derive from them and
// BOINC limits names to 191 bytes (we keep well below, as file names grow).
const MaxIdentLen = 64

// MaxUserLen bounds user names for the same reason.
const MaxUserLen = 32

// The names are matched by hand rather than by regular expressions: the
// hook program links this package and starts once per work unit, and
// compiling expressions (with the Unicode tables they pull in) would be paid
// at every start.

// allOf reports whether s is non-empty and every byte satisfies ok.
func allOf(s string, ok func(c byte) bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool    { return '0' <= c && c <= '9' }
func isAlnum(c byte) bool    { return isDigit(c) || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isIdentCh(c byte) bool  { return isAlnum(c) || c == '_' }
func isDigits(s string) bool { return allOf(s, isDigit) }

// isTag matches RNDnnnn, optionally followed by _asgn.
func isTag(s string) bool {
	s, _ = strings.CutSuffix(s, "_asgn")
	return len(s) == 7 && strings.HasPrefix(s, "RND") && isDigits(s[3:])
}

// ValidIdent reports whether s may be used as a group or chain name:
// [A-Za-z0-9_]+ and not longer than MaxIdentLen.
func ValidIdent(s string) bool {
	return len(s) <= MaxIdentLen && allOf(s, isIdentCh)
}

// CheckIdent returns a readable error when s is not a valid group or chain
// name; what says which one ("group", "name").
func CheckIdent(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%s is empty: it must be letters, digits and underscores", what)
	case len(s) > MaxIdentLen:
		return fmt.Errorf("%s %.20q... is too long: at most %d characters", what, s, MaxIdentLen)
	case !allOf(s, isIdentCh):
		return fmt.Errorf("%s %q is not valid: use only letters, digits and underscores", what, s)
	}
	return nil
}

// CheckUser validates a user name. User names have no underscore so that
// the USER_GROUP field of a WU name splits unambiguously at its first '_'.
func CheckUser(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("user name is empty")
	case len(s) > MaxUserLen:
		return fmt.Errorf("user name is too long: at most %d characters", MaxUserLen)
	case !allOf(s, isAlnum):
		return fmt.Errorf("user name %q is not valid: use only letters and digits", s)
	}
	return nil
}

// WU is a parsed rboinc work-unit name.
type WU struct {
	Name   string // chain name
	User   string // upper-cased user name
	Group  string
	Step   int // from 0
	NSteps int
	Tag    string // RNDnnnn, fixed per chain
}

// String formats the work-unit name NAME-USER_GROUP-STEP-NSTEPS-TAG.
func (w WU) String() string {
	return w.Name + "-" + w.User + "_" + w.Group + "-" + strconv.Itoa(w.Step) + "-" + strconv.Itoa(w.NSteps) + "-" + w.Tag
}

// GroupDir is the USER_GROUP field, also used as the results directory name.
func (w WU) GroupDir() string { return w.User + "_" + w.Group }

// Format builds the work-unit name of one step of a chain.
func Format(name, user, group string, step, nsteps int, tag string) string {
	return WU{Name: name, User: strings.ToUpper(user), Group: group, Step: step, NSteps: nsteps, Tag: tag}.String()
}

// Tag formats a chain's random tag from a number in 0..9999.
func Tag(n int) string { return fmt.Sprintf("RND%04d", n%10000) }

// ParseWU parses a work-unit name produced by Format.
func ParseWU(s string) (WU, error) {
	f := strings.Split(s, "-")
	if len(f) != 5 {
		return WU{}, fmt.Errorf("work-unit name %q: want NAME-USER_GROUP-STEP-NSTEPS-RNDnnnn", s)
	}
	var w WU
	w.Name = f[0]
	if !ValidIdent(w.Name) {
		return WU{}, fmt.Errorf("work-unit name %q: bad chain name %q", s, w.Name)
	}
	user, group, ok := strings.Cut(f[1], "_")
	if !ok || !allOf(user, isAlnum) || len(user) > MaxUserLen || !ValidIdent(group) || user != strings.ToUpper(user) {
		return WU{}, fmt.Errorf("work-unit name %q: bad USER_GROUP field %q", s, f[1])
	}
	w.User, w.Group = user, group
	var err error
	if w.Step, err = parseCount(f[2]); err != nil {
		return WU{}, fmt.Errorf("work-unit name %q: bad step: %w", s, err)
	}
	if w.NSteps, err = parseCount(f[3]); err != nil {
		return WU{}, fmt.Errorf("work-unit name %q: bad number of steps: %w", s, err)
	}
	if w.NSteps < 1 || w.Step >= w.NSteps {
		return WU{}, fmt.Errorf("work-unit name %q: step %d is outside 0..%d", s, w.Step, w.NSteps-1)
	}
	if !isTag(f[4]) {
		return WU{}, fmt.Errorf("work-unit name %q: bad tag %q, want RNDnnnn", s, f[4])
	}
	w.Tag = f[4]
	return w, nil
}

// parseCount parses a non-negative decimal without sign or leading zeros.
func parseCount(s string) (int, error) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, fmt.Errorf("%q is not a plain number", s)
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%q is not a plain number", s)
		}
	}
	return strconv.Atoi(s)
}

// Output is a BOINC output file name split into its parts:
// <wu>_<replica>_r<random>_<k> (today) or <wu>_<replica>_<k> (before 2015).
type Output struct {
	WU      string
	Replica int
	Index   int
}

// ParseOutput splits the base name of an uploaded output file. The parts
// after the WU name hold no '_', so they are found from the right; the WU
// name is the rest: at least one byte, no newline.
func ParseOutput(base string) (Output, error) {
	wu, rep, idx, ok := splitOutput(base)
	if !ok {
		return Output{}, fmt.Errorf("output file %q: want <wu>_<n>_r<random>_<k>", base)
	}
	r, err1 := strconv.Atoi(rep)
	k, err2 := strconv.Atoi(idx)
	if err1 != nil || err2 != nil {
		return Output{}, fmt.Errorf("output file %q: numbers out of range", base)
	}
	return Output{WU: wu, Replica: r, Index: k}, nil
}

// splitOutput splits <wu>_<n>_r<random>_<k>, or else <wu>_<n>_<k>.
func splitOutput(base string) (wu, rep, idx string, ok bool) {
	last := func(s string) (rest, part string, ok bool) {
		i := strings.LastIndexByte(s, '_')
		if i < 0 {
			return "", "", false
		}
		return s[:i], s[i+1:], true
	}
	rest, idx, ok1 := last(base)
	rest, mid, ok2 := last(rest)
	if !ok1 || !ok2 || !isDigits(idx) {
		return "", "", "", false
	}
	wu, rep = rest, mid // the old form: <wu>_<n>_<k>
	if r, found := strings.CutPrefix(mid, "r"); found && isDigits(r) {
		if w, n, ok := last(rest); ok && isDigits(n) && okOutputWU(w) {
			return w, n, idx, true
		}
	}
	if !isDigits(rep) || !okOutputWU(wu) {
		return "", "", "", false
	}
	return wu, rep, idx, true
}

func okOutputWU(s string) bool { return s != "" && !strings.Contains(s, "\n") }

// ResultFile is the name a step's output k has in the results area and on
// the scientist's disk (before an alias is appended): <wu>_<k>.
func ResultFile(wu string, k int) string { return wu + "_" + strconv.Itoa(k) }

// ParseResultFile splits <wu>_<k> back into the WU name and output index.
func ParseResultFile(s string) (wu string, k int, err error) {
	i := strings.LastIndexByte(s, '_')
	if i <= 0 {
		return "", 0, fmt.Errorf("result file %q: want <wu>_<k>", s)
	}
	k, err = parseCount(s[i+1:])
	if err != nil {
		return "", 0, fmt.Errorf("result file %q: %w", s, err)
	}
	return s[:i], k, nil
}
