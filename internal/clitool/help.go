package clitool

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// flagString formats one option for -help as the original tools did:
// single dash, placeholder, usage, a default only when it says something,
// and the environment variable. The placeholder comes from the first
// `QUOTED` word of the usage; flags without one (the per-queue parameters
// of rboinc-submit) take a FILE.
func flagString(f cli.Flag) string {
	df, ok := f.(cli.DocGenerationFlag)
	if !ok {
		return ""
	}
	placeholder, usage := unquoteUsage(df.GetUsage())
	s := "-" + strings.Join(df.Names(), ", -")
	if df.TakesValue() {
		if placeholder == "" {
			placeholder = "FILE"
		}
		s += " " + placeholder
	}
	s += "\t" + usage
	// A flag read from the environment holds the environment's value (a
	// token, say): name the variable, never print the value.
	if env := df.GetEnvVars(); len(env) > 0 {
		s += " [$" + strings.Join(env, ", $") + "]"
	} else if v := df.GetValue(); df.TakesValue() && v != "" && v != "0" {
		s += " (default: " + v + ")"
	}
	return s
}

// unquoteUsage splits "read `FILE` first" into "FILE" and "read FILE first".
func unquoteUsage(u string) (placeholder, usage string) {
	i := strings.IndexByte(u, '`')
	if i < 0 {
		return "", u
	}
	j := strings.IndexByte(u[i+1:], '`')
	if j < 0 {
		return "", u
	}
	name := u[i+1 : i+1+j]
	return name, u[:i] + name + u[i+1+j+1:]
}
