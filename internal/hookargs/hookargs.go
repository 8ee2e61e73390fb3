// Package hookargs reads the arguments BOINC's script_assimilator gives the
// assimilator hook. It is a leaf package with few imports because the hook
// program (cmd/rboinc-hook), started once per work unit, links it: every
// package it pulls in adds to each start.
package hookargs

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rboinc/rboinc/internal/naming"
)

// ErrNotRboinc marks a call for a work unit whose name is not one rboinc
// makes: another submitter's on the same application (BOINC's own job
// submission, create_work by hand). Such calls are expected, not faults.
var ErrNotRboinc = errors.New("a work unit rboinc did not make")

// HookCall is one invocation of the assimilator hook, in any of the forms
// BOINC's script_assimilator uses.
type HookCall struct {
	Error     bool   // the --error form: the WU failed
	ErrorMask int    // with Error
	WUName    string // known from a token, or derived from output file names
	WUID      int64  // 0 when not given
	Batch     int64
	Files     []string // output paths of the canonical result, in file_ref order
}

// Parse understands:
//
//	--error MASK WU_NAME WU_ID BATCH   (today's failure form)
//	--error MASK WU_NAME WU_ID         (tolerated)
//	--error MASK WU_ID                 (2014..2024 failure form; no name)
//	WU_ID PATH...                      (today's only working success form)
//	wu_name files2 batch_id, and any other mix of the tokens
//	files files2 wu_id wu_name result_id runtime batch_id.
//
// Paths are told apart from other tokens by containing a '/'; the WU name
// comes from a token that parses as an rboinc WU name, or else from the
// output file names <wu>_<n>_r<R>_<k>.
func Parse(args []string) (HookCall, error) {
	var c HookCall
	if len(args) == 0 {
		return c, fmt.Errorf("no arguments: the hook wants `WU_ID PATH...`, `WU_NAME files2 BATCH` or `--error MASK WU_NAME WU_ID BATCH`")
	}
	if args[0] == "--error" || args[0] == "-error" {
		c.Error = true
		rest := args[1:]
		if len(rest) < 2 || len(rest) > 4 {
			return c, fmt.Errorf("--error form wants MASK WU_NAME WU_ID BATCH, got %d arguments", len(rest))
		}
		m, err := strconv.Atoi(rest[0])
		if err != nil {
			return c, fmt.Errorf("--error: bad error mask %q", rest[0])
		}
		c.ErrorMask = m
		if len(rest) == 2 { // --error MASK WU_ID
			if c.WUID, err = strconv.ParseInt(rest[1], 10, 64); err != nil {
				return c, fmt.Errorf("--error: bad WU id %q", rest[1])
			}
			return c, nil
		}
		c.WUName = rest[1]
		if _, err := naming.ParseWU(c.WUName); err != nil {
			return c, fmt.Errorf("--error: %w: %w", ErrNotRboinc, err)
		}
		if c.WUID, err = strconv.ParseInt(rest[2], 10, 64); err != nil {
			return c, fmt.Errorf("--error: bad WU id %q", rest[2])
		}
		if len(rest) == 4 {
			if c.Batch, err = strconv.ParseInt(rest[3], 10, 64); err != nil {
				return c, fmt.Errorf("--error: bad batch id %q", rest[3])
			}
		}
		return c, nil
	}
	var ints []int64
	for _, a := range args {
		switch {
		case strings.Contains(a, "/"):
			c.Files = append(c.Files, a)
		case isInt(a):
			n, _ := strconv.ParseInt(a, 10, 64)
			ints = append(ints, n)
		default:
			if _, err := naming.ParseWU(a); err == nil {
				if c.WUName != "" && c.WUName != a {
					return c, fmt.Errorf("two different WU names given: %q and %q", c.WUName, a)
				}
				c.WUName = a
			}
			// Anything else (open names from files2, the runtime) is not needed.
		}
	}
	for _, f := range c.Files {
		o, err := naming.ParseOutput(filepath.Base(f))
		if err != nil {
			if c.WUName == "" {
				return c, fmt.Errorf("%w: %w", ErrNotRboinc, err)
			}
			return c, err
		}
		if c.WUName == "" {
			c.WUName = o.WU
		} else if c.WUName != o.WU {
			return c, fmt.Errorf("output file %s does not belong to WU %s", f, c.WUName)
		}
	}
	if c.WUName == "" {
		return c, fmt.Errorf("cannot tell the work unit: no WU name and no output file paths in %q", strings.Join(args, " "))
	}
	// In the default `wu_id files` form the id comes first.
	if len(ints) > 0 && !strings.Contains(args[0], "/") && isInt(args[0]) {
		c.WUID = ints[0]
	}
	return c, nil
}

func isInt(s string) bool {
	if s == "" || len(s) > 18 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// SplitRoot takes a leading --root DIR (or -root DIR, --root=DIR) off the
// hook's arguments; without one, the root is $RBOINC_ROOT (maybe empty).
// BOINC passes neither: they are for the administrator's own calls.
func SplitRoot(args []string, env func(string) string) (root string, rest []string) {
	switch {
	case len(args) >= 2 && (args[0] == "--root" || args[0] == "-root"):
		return args[1], args[2:]
	case len(args) >= 1 && strings.HasPrefix(args[0], "--root="):
		return strings.TrimPrefix(args[0], "--root="), args[1:]
	}
	return env("RBOINC_ROOT"), args
}
