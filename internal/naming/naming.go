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
// <result>_r<random>_<k> (today) or <result>_<k> (before 2015), where the
// result is named <wu>_<n> by the transitioner, <wu>_<pid>_<time>_<seq> by
// the scheduler for assigned jobs (sched_assign), and in general <wu>
// followed by '_'-separated numbers.
type Output struct {
	WU     string
	Result string
	Index  int
}

// ParseOutput splits the base name of an uploaded output file. The parts
// after the result name hold no '_', so they are found from the right. The
// work unit is the prefix of the result name, before a run of numbers,
// that has the shape of rboinc's names, whatever numbers BOINC appended;
// for a name of another shape, the result name less its last number.
func ParseOutput(base string) (Output, error) {
	result, idx, ok := splitOutput(base)
	if !ok {
		return Output{}, fmt.Errorf("output file %q: want <result>_r<random>_<k>", base)
	}
	k, err := strconv.Atoi(idx)
	if err != nil {
		return Output{}, fmt.Errorf("output file %q: numbers out of range", base)
	}
	wu, ok := WUOfResult(result)
	if !ok {
		return Output{}, fmt.Errorf("output file %q: result name %q has no work-unit name before its numbers", base, result)
	}
	return Output{WU: wu, Result: result, Index: k}, nil
}

// splitOutput splits <result>_r<random>_<k>, or else <result>_<k>.
func splitOutput(base string) (result, idx string, ok bool) {
	i := strings.LastIndexByte(base, '_')
	if i < 0 || !isDigits(base[i+1:]) {
		return "", "", false
	}
	result, idx = base[:i], base[i+1:]
	if j := strings.LastIndexByte(result, '_'); j >= 0 {
		if r, found := strings.CutPrefix(result[j+1:], "r"); found && isDigits(r) {
			result = result[:j]
		}
	}
	return result, idx, okOutputWU(result)
}

// WUOfResult finds the work unit of a BOINC result name: the longest prefix
// before '_'-separated numbers that parses as an rboinc work-unit name, or
// else (another project's naming) the name less its last number.
func WUOfResult(result string) (string, bool) {
	generic := ""
	for end := len(result); ; {
		i := strings.LastIndexByte(result[:end], '_')
		if i <= 0 || !isDigits(result[i+1:end]) {
			break
		}
		if generic == "" {
			generic = result[:i]
		}
		if _, err := ParseWU(result[:i]); err == nil {
			return result[:i], true
		}
		end = i
	}
	return generic, generic != "" && okOutputWU(generic)
}

// FindWU finds an rboinc work-unit name at the start of a file's base
// name, whatever follows it: what makes a file look like rboinc's.
func FindWU(base string) (string, bool) {
	for i := len(base); i > 0; i-- {
		if i < len(base) && base[i] != '_' {
			continue
		}
		if _, err := ParseWU(base[:i]); err == nil {
			return base[:i], true
		}
	}
	return "", false
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
