package templates

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxNameLen bounds queue names: they become parts of file names and URLs.
const MaxNameLen = 64

var (
	queueRE       = regexp.MustCompile(`^[A-Za-z0-9_]+$`)
	applicationRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	parameterRE   = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)
	outfileRE     = regexp.MustCompile(`^OUTFILE_([0-9]{1,6})$`)
)

// reservedParams are the submit client's fixed option names; a parameter
// with one of these names would collide with it on the command line.
var reservedParams = map[string]bool{
	"url": true, "app_name": true, "group": true, "name": true, "num_steps": true,
	"priority": true, "fpops_est": true, "fpops_bound": true, "memory_bound": true,
	"target_nresults": true, "min_quorum": true, "batch": true, "assign_user_all": true,
	"dry_run": true, "help": true, "help_parameters": true, "authenticator": true,
	"user": true, "email": true, "verbose": true, "jobs": true, "json": true,
	"metadata_file": true, "balance": true, "cacert": true, "no_hash_cache": true, "quiet": true,
	// Every command's own: -version, and -man and -completion (hidden).
	"version": true, "man": true, "completion": true,
}

// ValidName reports whether s is a valid queue name.
func ValidName(s string) bool {
	return len(s) <= MaxNameLen && queueRE.MatchString(s)
}

// checkFileName refuses names that are not one plain file name in a
// directory: BOINC's client and rboinc's result area both use them as such.
func checkFileName(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("file name is empty")
	case len(s) > 255:
		return fmt.Errorf("file name %.20q... is longer than 255 bytes", s)
	case s == "." || s == "..":
		return fmt.Errorf("file name %q is not a plain file name", s)
	case strings.Contains(s, "/"):
		return fmt.Errorf("file name %q contains '/'", s)
	case hasSpaceOrControl(s):
		return fmt.Errorf("file name %q contains whitespace or control characters", s)
	}
	return nil
}

func checkParameter(s string) error {
	switch {
	case len(s) > 64:
		return fmt.Errorf("parameter_name %.20q... is longer than 64 bytes", s)
	case !parameterRE.MatchString(s):
		return fmt.Errorf("parameter_name %q is not a safe name (a letter, then letters, digits, underscores)", s)
	case reservedParams[strings.ToLower(s)]:
		// Options are matched in any letter case.
		return fmt.Errorf("parameter_name %q clashes with the submit client's own -%s option", s, strings.ToLower(s))
	}
	return nil
}

func checkAlias(s string) error {
	switch {
	case s == "":
		return fmt.Errorf("aliases has an empty alias (use single spaces between aliases)")
	case len(s) > 64:
		return fmt.Errorf("alias %.20q... is longer than 64 bytes", s)
	case strings.Contains(s, "/"):
		return fmt.Errorf("alias %q contains '/'", s)
	case hasSpaceOrControl(s):
		return fmt.Errorf("alias %q contains whitespace or control characters", s)
	}
	return nil
}

func hasSpaceOrControl(s string) bool {
	if !utf8.ValidString(s) {
		return true
	}
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0
}
