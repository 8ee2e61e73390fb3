package clitool

import (
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
)

// ExpandArgs rewrites the options in args (without the program name) the
// way the original clients' Getopt::Long understood them into the names
// of flags: in any letter case, and abbreviated to any unambiguous prefix
// (-app for -app_name, -dry for -dry_run). An exact name always wins over
// a longer one it is a prefix of. Values are left untouched, as is
// everything after "--". An ambiguous abbreviation is an error unless
// lenient, when it is left for a later, complete parse; unknown options
// are left for the flag parser to refuse.
func ExpandArgs(args []string, flags []cli.Flag, lenient bool) ([]string, error) {
	type flagInfo struct {
		canon      string
		takesValue bool
		hidden     bool // written in full only
	}
	byName := map[string]flagInfo{}
	var names []string
	var listed []string // what a "did you mean" may name: the options -help lists
	for _, f := range flags {
		info := flagInfo{canon: f.Names()[0]}
		if vf, ok := f.(cli.VisibleFlag); ok && !vf.IsVisible() {
			info.hidden = true
		}
		if df, ok := f.(cli.DocGenerationFlag); ok {
			info.takesValue = df.TakesValue()
		}
		for _, n := range f.Names() {
			byName[n] = info
			names = append(names, n)
			if !info.hidden {
				listed = append(listed, n)
			}
		}
	}
	sort.Strings(listed)
	sort.Strings(names)
	resolve := func(name string) (string, error) {
		if _, ok := byName[name]; ok {
			return name, nil
		}
		lower := strings.ToLower(name)
		var exact, prefix []string
		seen := map[string]bool{}
		for _, n := range names {
			c := byName[n].canon
			switch {
			case strings.ToLower(n) == lower:
				exact = append(exact, n)
			case strings.HasPrefix(strings.ToLower(n), lower) && !seen[c] && !byName[n].hidden:
				seen[c] = true
				prefix = append(prefix, c)
			}
		}
		switch {
		case len(exact) == 1:
			return exact[0], nil
		case len(exact) == 0 && len(prefix) == 1:
			return prefix[0], nil
		case len(exact) > 1:
			prefix = exact
		case len(prefix) == 0:
			if lenient {
				return "", nil
			}
			if near := closest(lower, listed); near != "" {
				return "", fmt.Errorf("unknown option -%s: did you mean -%s?", name, near)
			}
			return "", fmt.Errorf("unknown option -%s", name)
		}
		return "", &ambiguousError{fmt.Sprintf("option -%s is ambiguous: it could be -%s", name, strings.Join(prefix, ", -"))}
	}
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...), nil
		}
		if a == "-" || !strings.HasPrefix(a, "-") {
			out = append(out, a)
			continue
		}
		dashes := "-"
		if strings.HasPrefix(a, "--") {
			dashes = "--"
		}
		name, val, hasVal := strings.Cut(a[len(dashes):], "=")
		canon, err := resolve(name)
		if err != nil && !lenient {
			return nil, err
		}
		if canon == "" {
			out = append(out, a)
			continue
		}
		if hasVal {
			out = append(out, dashes+canon+"="+val)
			continue
		}
		out = append(out, dashes+canon)
		if byName[canon].takesValue && i+1 < len(args) {
			i++
			out = append(out, args[i])
		}
	}
	return out, nil
}

// ambiguousError is an abbreviation that names several options.
type ambiguousError struct{ msg string }

func (e *ambiguousError) Error() string { return e.msg }

// IsAmbiguous tells whether err (of ExpandArgs) is an ambiguous
// abbreviation, rather than an unknown option.
func IsAmbiguous(err error) bool {
	var a *ambiguousError
	return errors.As(err, &a)
}

// URLCredentials splits a server URL written for the original clients,
// http://USER:TOKEN@host/rboinc_cgi, into the URL without credentials and
// the token.
func URLCredentials(raw string) (string, string) {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw, ""
	}
	tok, _ := u.User.Password()
	u.User = nil
	return u.String(), tok
}

// Suggest is the name among names nearest to name, a mistyped flag or
// command (any letter case), for a "did you mean"; "" when none is near.
func Suggest(name string, names []string) string { return closest(strings.ToLower(name), names) }

// closest is the flag name nearest to name (by edit distance, at most a
// third of its length and at least 2), or "".
func closest(name string, names []string) string {
	best, bestD := "", max(2, len(name)/3)+1
	for _, n := range names {
		if len(n) == 1 {
			continue
		}
		if d := editDistance(name, strings.ToLower(n)); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance is the edit distance between a and b (bytes), two
// neighbours swapped counting as one edit (-nmae is one slip from -name).
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
