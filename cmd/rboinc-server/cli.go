package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/client/clitool"
	"github.com/rboinc/rboinc/workflow/engine"
)

const prog = "rboinc-server"

// run is the command line of rboinc-server, with the clients' exit codes:
// 0 ok, 1 failure, 2 usage error (a bad flag or value, a missing argument,
// an unknown subcommand, a directory that is not a server root).
func runContext(ctx context.Context, a *cli.App, args []string) int {
	if code, done := clitool.Early(a, args, false); done {
		return code
	}
	usage := func(c *cli.Context, err error, _ bool) error {
		return client.Usagef("%v (see %s --help)", err, commandPath(c))
	}
	a.OnUsageError = usage
	a.ExitErrHandler = func(*cli.Context, error) {}
	a.CommandNotFound = func(c *cli.Context, name string) {
		fmt.Fprintf(os.Stderr, "%s: unknown command %q (see %s --help)\n", prog, name, prog)
		os.Exit(client.ExitUsage)
	}
	var walk func(cs []*cli.Command)
	walk = func(cs []*cli.Command) {
		for _, c := range cs {
			c.OnUsageError = usage
			walk(c.Subcommands)
		}
	}
	walk(a.Commands)
	guardRoots(a.Commands)
	return report(a.RunContext(ctx, args))
}

// report prints err and gives its exit code.
func report(err error) int {
	if err == nil {
		return 0
	}
	var notRoot *engine.NotRootError
	var exit cli.ExitCoder
	code := client.ExitFailure
	switch msg := err.Error(); {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case errors.Is(err, client.ErrUsage), errors.As(err, &notRoot),
		strings.HasPrefix(msg, "Required flag"), strings.HasPrefix(msg, "flag provided but not defined"):
		code = client.ExitUsage
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintf(os.Stderr, "%s: %s\n", prog, msg)
	}
	return code
}

func commandPath(c *cli.Context) string {
	if c != nil && c.Command != nil && c.Command.Name != "" {
		return prog + " " + c.Command.FullName()
	}
	return prog
}

// usagef is a usage error of rboinc-server (exit 2).
func usagef(format string, args ...any) error { return client.Usagef(format, args...) }

// needRoot refuses, before anything is written, a --root that is not a
// server root (only init makes one).
func needRoot(c *cli.Context) error {
	root := c.String("root")
	if root == "" {
		return nil // the missing flag is reported as such
	}
	_, err := engine.LoadConfig(absRoot(root))
	var notRoot *engine.NotRootError
	if errors.As(err, &notRoot) {
		return err
	}
	return nil
}

// guardRoots puts needRoot before every command that works on an existing
// server root.
func guardRoots(cs []*cli.Command) {
	for _, c := range cs {
		if c.Name == "init" || c.Name == "doctor" {
			continue
		}
		for _, f := range c.Flags {
			if f == rootFlag {
				c.Before = needRoot
			}
		}
		guardRoots(c.Subcommands)
	}
}
