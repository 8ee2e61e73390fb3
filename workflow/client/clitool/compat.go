package clitool

import (
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
	}
	byName := map[string]flagInfo{}
	var names []string
	for _, f := range flags {
		info := flagInfo{canon: f.Names()[0]}
		if df, ok := f.(cli.DocGenerationFlag); ok {
			info.takesValue = df.TakesValue()
		}
		for _, n := range f.Names() {
			byName[n] = info
			names = append(names, n)
		}
	}
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
			case strings.HasPrefix(strings.ToLower(n), lower) && !seen[c]:
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
			return "", nil
		}
		return "", fmt.Errorf("option -%s is ambiguous: it could be -%s", name, strings.Join(prefix, ", -"))
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
