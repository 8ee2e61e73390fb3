package naming

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// MaxIdentLen bounds group and chain names: WU names derive from them and
// BOINC limits names to 191 bytes (we keep well below, as file names grow).
const MaxIdentLen = 64

// MaxUserLen bounds user names for the same reason.
const MaxUserLen = 32

var (
	identRE = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
	userRE  = regexp.MustCompile(`^[A-Za-z0-9]+$`)
	rndRE   = regexp.MustCompile(`^RND[0-9]{4}(_asgn)?$`)
)

// ValidIdent reports whether s may be used as a group or chain name:
// [A-Za-z0-9_]+ and not longer than MaxIdentLen.
func ValidIdent(s string) bool {
	return len(s) <= MaxIdentLen && identRE.MatchString(s)
}

// CheckIdent returns a readable error when s is not a valid group or chain
// name; what says which one ("group", "name").
func CheckIdent(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%s is empty: it must be letters, digits and underscores", what)
	case len(s) > MaxIdentLen:
		return fmt.Errorf("%s %.20q... is too long: at most %d characters", what, s, MaxIdentLen)
	case !identRE.MatchString(s):
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
	case !userRE.MatchString(s):
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
	if !ok || !userRE.MatchString(user) || len(user) > MaxUserLen || !ValidIdent(group) || user != strings.ToUpper(user) {
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
	if !rndRE.MatchString(f[4]) {
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

var (
	outNewRE = regexp.MustCompile(`^(.+)_([0-9]+)_r([0-9]+)_([0-9]+)$`)
	outOldRE = regexp.MustCompile(`^(.+)_([0-9]+)_([0-9]+)$`)
)

// ParseOutput splits the base name of an uploaded output file.
func ParseOutput(base string) (Output, error) {
	m := outNewRE.FindStringSubmatch(base)
	if m == nil {
		if m2 := outOldRE.FindStringSubmatch(base); m2 != nil {
			m = []string{m2[0], m2[1], m2[2], "", m2[3]}
		}
	}
	if m == nil {
		return Output{}, fmt.Errorf("output file %q: want <wu>_<n>_r<random>_<k>", base)
	}
	rep, err1 := strconv.Atoi(m[2])
	idx, err2 := strconv.Atoi(m[4])
	if err1 != nil || err2 != nil {
		return Output{}, fmt.Errorf("output file %q: numbers out of range", base)
	}
	return Output{WU: m[1], Replica: rep, Index: idx}, nil
}

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
