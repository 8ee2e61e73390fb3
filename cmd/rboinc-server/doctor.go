package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/rboinc/rboinc/internal/setup"
	"github.com/rboinc/rboinc/internal/words"
)

// printInit tells the administrator what init did and what is left to do.
func printInit(w io.Writer, rep setup.Report) {
	kind := "real BOINC project"
	if rep.Simulated {
		kind = "embedded BOINC stand-in"
	}
	fmt.Fprintf(w, "server root %s ready (%s at %s)\n", rep.Root, kind, rep.Project)
	var add, have []setup.DaemonLine
	for _, d := range rep.Daemons {
		if d.Present {
			have = append(have, d)
		} else {
			add = append(add, d)
		}
	}
	if len(add) > 0 {
		fmt.Fprintf(w, "\nAdd to <daemons> in %s, then restart the project's daemons (bin/stop; bin/start):\n\n", filepath.Join(rep.Project, "config.xml"))
		for _, d := range add {
			fmt.Fprintf(w, "    %s\n", d.Line)
		}
		hook, creator, notifier, native := false, false, false, false
		for _, d := range add {
			hook = hook || strings.Contains(d.Line, "script_assimilator")
			creator = creator || strings.Contains(d.Line, setup.CreatorCmd)
			notifier = notifier || strings.Contains(d.Line, setup.NotifierCmd)
			native = native || strings.Contains(d.Line, "rboinc-server assimilator")
		}
		if hook {
			fmt.Fprintln(w, "\nKeep --script a single word: today's script_assimilator passes no arguments to a --script of several words.")
		}
		if creator {
			fmt.Fprintf(w, "The %s daemon is optional: it creates the chains' next steps in batches, so that many chains advance per second; without it the hook creates each next step itself.\n", setup.CreatorCmd)
		}
		if notifier {
			fmt.Fprintf(w, "The %s daemon sends the notifications users register (webhooks, e-mail); without it they wait until a `rboinc-server serve` sends them.\n", setup.NotifierCmd)
		}
		if native {
			fmt.Fprintln(w, "\nrboinc's assimilator replaces script_assimilator for these applications (remove their script_assimilator lines) and creates the next steps itself.")
		}
		for _, d := range add {
			if d.Conflict != "" {
				fmt.Fprintln(w, "warning:", d.Conflict)
			}
		}
	}
	for _, d := range have {
		if d.App == "" {
			cmd, what := setup.CreatorCmd, "creator"
			if d.Line == setup.NotifierLine() {
				cmd, what = setup.NotifierCmd, "notifier"
			}
			fmt.Fprintf(w, "config.xml already runs rboinc's %s (%s)\n", what, cmd)
			continue
		}
		fmt.Fprintf(w, "config.xml already runs the hook for %s\n", d.App)
	}
	for _, n := range rep.Notes {
		fmt.Fprintln(w, "note:", n)
	}
	if !rep.Simulated {
		fmt.Fprintf(w, "\nNext: serve the API (Apache: examples/apache/rboinc.conf; or `rboinc-server serve --root %s`), add users (`rboinc-server user add --root %s NAME`), then check everything with `rboinc-server doctor --root %s`.\n", rep.Root, rep.Root, rep.Root)
	}
}

// doctorCommand is `doctor`: re-check an installation, print every finding,
// fail when something needs fixing.
func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check a server root and its BOINC project, and say what to fix",
		Flags: []cli.Flag{rootFlag, &cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print only notes and problems"},
			&cli.StringFlag{Name: "url", Usage: "also test an upload as clients make it, through the API at `URL` (what users set as RBOINC_URL)"}},
		Action: func(c *cli.Context) error {
			fs := setup.Doctor(c.Context, c.String("root"))
			if u := c.String("url"); u != "" {
				fs = append(fs, setup.ProbeUpload(c.Context, c.String("root"), u)...)
			} else {
				fs = append(fs, setup.Finding{Severity: setup.Note, Msg: "give --url URL (what users set as RBOINC_URL) to also test an upload through the web server, as clients make it"})
			}
			w := c.App.Writer
			for _, x := range fs {
				if x.Severity == setup.OK && c.Bool("quiet") {
					continue
				}
				fmt.Fprintf(w, "%-7s %s\n", x.Severity.String()+":", x.Msg)
			}
			if n := len(fs.Problems()); n > 0 {
				return cli.Exit(fmt.Sprintf("doctor: %s to fix", words.Count(n, "problem", "problems")), 1)
			}
			fmt.Fprintln(w, "no problems found")
			return nil
		},
	}
}
