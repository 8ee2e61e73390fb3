package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// flagsFirst lets the `user` subcommands take their flags after the user's
// name too (`user notify alice --webhook URL`), as administrators type
// them: the command-line parser stops at the first argument that is not a
// flag, so the arguments are reordered, flags (with their values) first.
// Everything after "--" stays where it is.
func flagsFirst(a *cli.App, args []string) []string {
	if len(args) < 4 || args[1] != "user" {
		return args
	}
	var sub *cli.Command
	for _, c := range a.Commands {
		if c.Name == "user" {
			sub = c.Command(args[2])
		}
	}
	if sub == nil {
		return args
	}
	takesValue := map[string]bool{}
	for _, f := range sub.Flags {
		_, isBool := f.(*cli.BoolFlag)
		for _, n := range f.Names() {
			takesValue[n] = !isBool
		}
	}
	out := append([]string{}, args[:3]...)
	var rest []string
	in := args[3:]
	for i := 0; i < len(in); i++ {
		s := in[i]
		if s == "--" {
			rest = append(rest, in[i:]...)
			break
		}
		if !strings.HasPrefix(s, "-") || s == "-" {
			rest = append(rest, s)
			continue
		}
		out = append(out, s)
		name := strings.TrimLeft(s, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if takesValue[name] && i+1 < len(in) {
			i++
			out = append(out, in[i])
		}
	}
	return append(out, rest...)
}
