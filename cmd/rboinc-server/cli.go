package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/internal/clitool"
	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/workflow/client"
)

const prog = "rboinc-server"

// runContext is the command line of rboinc-server, with the clients' exit
// codes: 0 ok, 1 failure, 2 usage error (a bad flag or value, a missing
// argument or subcommand, an unknown subcommand, a directory that is not a
// server root).
func runContext(ctx context.Context, a *cli.App, args []string) int {
	if code, done := clitool.Early(a, args, false); done {
		return code
	}
	prepare(a)
	return report(a.RunContext(ctx, args))
}

// prepare gives every command of a the usage checks above. The library's
// own reactions (its help on stdout and exit 0 for a missing subcommand,
// its help before the error of a missing flag) are replaced.
func prepare(a *cli.App) {
	a.OnUsageError = onUsageError
	a.ExitErrHandler = func(*cli.Context, error) {}
	a.Action = groupAction(nil, a.Commands)
	var walk func(cs []*cli.Command)
	walk = func(cs []*cli.Command) {
		for _, c := range cs {
			c.OnUsageError = onUsageError
			switch {
			case len(c.Subcommands) > 0:
				c.Action = groupAction(c, c.Subcommands)
			case c.Action != nil && c.ArgsUsage == "":
				c.Action = noArgs(c.Action)
			}
			if usesRoot(c) {
				c.Before = needRoot(c.Name != "init")
			}
			walk(c.Subcommands)
		}
	}
	walk(a.Commands)
}

// onUsageError words a flag the parser refused, suggesting the nearest
// flag the command has.
func onUsageError(c *cli.Context, err error, _ bool) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		if near := clitool.Suggest(name, commandFlagNames(c)); near != "" {
			msg += "; did you mean " + dashed(near) + "?"
		}
	}
	return client.Usagef("%s (see %s --help)", msg, commandPath(c))
}

// commandFlagNames are the names of the flags c's command (or the app)
// takes.
func commandFlagNames(c *cli.Context) []string {
	flags := c.App.Flags
	if c.Command != nil && c.Command.Name != "" {
		flags = c.Command.Flags
	}
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	return append(names, "help")
}

func dashed(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}

// groupAction runs when no subcommand of cs was named: a missing or
// unknown subcommand is a usage error, with a suggestion.
func groupAction(parent *cli.Command, cs []*cli.Command) cli.ActionFunc {
	return func(c *cli.Context) error {
		path := prog
		if parent != nil {
			path += " " + parent.Name
		}
		var names []string
		for _, sub := range cs {
			if !sub.Hidden && sub.Name != "help" {
				names = append(names, sub.Name)
			}
		}
		if !c.Args().Present() {
			return client.Usagef("%s needs a command: %s (see %s --help)", path, strings.Join(names, ", "), path)
		}
		name := c.Args().First()
		msg := fmt.Sprintf("unknown command %q", name)
		if parent != nil {
			msg = fmt.Sprintf("unknown command %q for %s", name, path)
		}
		if near := clitool.Suggest(name, names); near != "" {
			msg += "; did you mean " + near + "?"
		}
		return client.Usagef("%s (see %s --help)", msg, path)
	}
}

// noArgs refuses words after a command that takes none: a misplaced
// flag value would otherwise be dropped silently.
func noArgs(action cli.ActionFunc) cli.ActionFunc {
	return func(c *cli.Context) error {
		if c.Args().Present() {
			return client.Usagef("unexpected argument %q (see %s --help)", c.Args().First(), commandPath(c))
		}
		return action(c)
	}
}

// report prints err and gives its exit code.
func report(err error) int {
	if err == nil {
		return 0
	}
	var exit cli.ExitCoder
	code := client.ExitFailure
	switch msg := err.Error(); {
	case strings.HasPrefix(msg, "No help topic"):
		code = client.ExitUsage // `help NOSUCH`: the library says 3
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case errors.Is(err, client.ErrUsage), errors.As(err, new(*engine.NotRootError)),
		strings.HasPrefix(msg, "Required flag"), strings.HasPrefix(msg, "flag provided but not defined"):
		code = client.ExitUsage
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintf(os.Stderr, "%s: %s\n", prog, msg)
	}
	return code
}

// commandPath is the command c runs, "rboinc-server user add" say.
func commandPath(c *cli.Context) string {
	var names []string
	for _, x := range c.Lineage() {
		if x.Command != nil && x.Command.Name != "" && x.Command.Name != prog {
			names = append([]string{x.Command.Name}, names...)
		}
	}
	return strings.Join(append([]string{prog}, names...), " ")
}

// usagef is a usage error of rboinc-server (exit 2).
func usagef(format string, args ...any) error { return client.Usagef(format, args...) }

func usesRoot(c *cli.Command) bool {
	for _, f := range c.Flags {
		if f == rootFlag {
			return true
		}
	}
	return false
}

// needRoot refuses, before anything is written, a missing --root and,
// when existing, a --root that is not a server root (only init makes one).
func needRoot(existing bool) cli.BeforeFunc {
	return func(c *cli.Context) error {
		root := c.String("root")
		if root == "" {
			return usagef("missing --root DIR, the server root (or set RBOINC_ROOT; see %s --help)", commandPath(c))
		}
		if !existing {
			return nil
		}
		_, err := engine.LoadConfig(absRoot(root))
		if errors.As(err, new(*engine.NotRootError)) {
			return usagef("%s is not an rboinc server root: run `rboinc-server init --root %s`", root, root)
		}
		return nil
	}
}
