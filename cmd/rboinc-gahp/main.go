// Command rboinc-gahp is the BOINC GAHP of rboinc: the server HTCondor's
// gridmanager starts (BOINC_GAHP in condor_config) for jobs with
// grid_resource = boinc <rboinc API URL>, and drives over stdin and stdout
// with the GAHP protocol (package gahp). The project URL and the
// authenticator (the user's rboinc token) come with BOINC_SELECT_PROJECT,
// or from a config.txt of those two lines in the working directory.
//
// Usage: rboinc-gahp [--version | --help]
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/rboinc/rboinc/internal/buildinfo"
	"github.com/rboinc/rboinc/internal/gahp"
)

const usage = "usage: rboinc-gahp [--version | --help]  (HTCondor's gridmanager drives it over stdin and stdout)\n"

const help = usage + `
rboinc-gahp is the BOINC GAHP of rboinc: name it in condor_config
(BOINC_GAHP = /usr/local/bin/rboinc-gahp) and HTCondor runs jobs with
grid_resource = boinc <rboinc API URL> through it. The token comes from the
job's boinc_authenticator_file (BOINC_SELECT_PROJECT), or from config.txt in
the working directory (URL on line 1, token on line 2). It speaks the GAHP
protocol of BOINC's reference GAHP on stdin and stdout; run by hand, type
COMMANDS to list the commands and QUIT to leave. See docs/htcondor.md.
`

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-version") {
		fmt.Println(buildinfo.Version("rboinc-gahp"))
		return 0
	}
	if len(args) == 1 && (args[0] == "--help" || args[0] == "-help" || args[0] == "-h") {
		// Asked for, help is an answer (stdout, exit 0), as for every
		// other rboinc command; anything else is a usage error.
		fmt.Print(help)
		return 0
	}
	if len(args) > 0 {
		fmt.Fprintf(os.Stderr, "rboinc-gahp: unexpected argument %q\n%s", args[0], usage)
		return 2
	}
	// stdout is the protocol's: diagnostics go to stderr, which the
	// gridmanager logs.
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "rboinc-gahp:", err)
		return 1
	}
	s := &gahp.Session{Banner: gahp.DefaultBanner(), Dir: dir}
	p, found, err := gahp.ReadConfig(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rboinc-gahp:", err)
		return 1
	}
	if found {
		s.Project = p
	}
	if err := s.Run(context.Background(), os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "rboinc-gahp:", err)
		return 1
	}
	return 0
}
