package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/internal/atomicfile"
	"github.com/rboinc/rboinc/internal/clitool"
)

// hookDocApp describes rboinc-hook for its manual page and completion
// only: the hook itself links no command-line library (it starts once per
// work unit, and every package it links adds to each start).
func hookDocApp() *cli.App {
	return &cli.App{
		Name:      "rboinc-hook",
		Usage:     "the assimilator hook BOINC's script_assimilator runs once per finished work unit",
		UsageText: "rboinc-hook [--root DIR] WU_ID PATH...\nrboinc-hook [--root DIR] --error MASK WU_NAME WU_ID BATCH",
		Description: "Hands the outputs of a finished work unit to rboinc-server's creator through the\n" +
			"server root's spool. Exit codes: 0 done (also a work unit that is not rboinc's, or a\n" +
			"call it cannot read), 1 BOINC must keep the outputs and call again later (disk or\n" +
			"database failure, a --root that is not a server root), 2 no server root.",
		HideHelp: true,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "root", EnvVars: []string{"RBOINC_ROOT"}, Usage: "the server root (default: the root whose bin/ holds the program)"},
			&cli.BoolFlag{Name: "version", Usage: "print the version and exit"},
			&cli.BoolFlag{Name: "help", Usage: "print the usage and exit"},
		},
	}
}

// docTarget is one file install-docs writes, under the prefix.
type docTarget struct {
	path string // relative to the prefix, %s the command's name
	args []string
}

var docTargets = []docTarget{
	{"share/man/man1/%s.1", []string{"--man"}},
	{"share/bash-completion/completions/%s", []string{"--completion", "bash"}},
	{"share/zsh/site-functions/_%s", []string{"--completion", "zsh"}},
	{"share/fish/vendor_completions.d/%s.fish", []string{"--completion", "fish"}},
}

func installDocsCommand() *cli.Command {
	return &cli.Command{
		Name:  "install-docs",
		Usage: "install the manual pages and bash, zsh and fish completions of the four rboinc commands",
		Flags: []cli.Flag{&cli.StringFlag{Name: "prefix", Value: "/usr/local", Usage: "install under `DIR` (share/man/man1, share/bash-completion, share/zsh, share/fish)"}},
		Action: func(c *cli.Context) error {
			prefix := c.String("prefix")
			for _, name := range []string{"rboinc-server", "rboinc-hook", "rboinc-submit", "rboinc-retrieve"} {
				for _, t := range docTargets {
					out, err := docOf(c.Context, c.App, name, t.args)
					if err != nil {
						return err
					}
					dst := filepath.Join(prefix, fmt.Sprintf(t.path, name))
					if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
						return err
					}
					// A shell or man reading it meanwhile never sees half a file.
					if err := atomicfile.Write(dst, out, 0o644); err != nil {
						return err
					}
					fmt.Fprintln(c.App.Writer, dst)
				}
			}
			return nil
		},
	}
}

// docOf makes one document of command name: rboinc-server's and the
// hook's here, the clients' by running them (beside this program, else on
// PATH) with the same flags a user would give.
func docOf(ctx context.Context, self *cli.App, name string, args []string) ([]byte, error) {
	var buf bytes.Buffer
	write := func(a *cli.App, single bool) error {
		if args[0] == "--man" {
			return clitool.WriteMan(&buf, a)
		}
		return clitool.WriteCompletion(&buf, a, args[1], single)
	}
	switch name {
	case "rboinc-server", "rboinc-hook":
		a := self
		if name == "rboinc-hook" {
			a = hookDocApp()
		}
		err := write(a, false)
		return buf.Bytes(), err
	}
	out, err := siblingDoc(ctx, name, args)
	if err != nil {
		return nil, fmt.Errorf("the documentation of %s: %w (build it beside rboinc-server: go build -o DIR/ ./cmd/...)", name, err)
	}
	return out, nil
}

// siblingDoc runs a client command found beside this program (else on
// PATH) with a fixed documentation flag.
func siblingDoc(ctx context.Context, name string, args []string) ([]byte, error) {
	path := ""
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), name); fileExists(p) {
			path = p
		}
	}
	if path == "" {
		p, err := exec.LookPath(name)
		if err != nil {
			return nil, fmt.Errorf("%s is neither beside rboinc-server nor on PATH", name)
		}
		path = p
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stderr = io.Discard
	return cmd.Output()
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}
