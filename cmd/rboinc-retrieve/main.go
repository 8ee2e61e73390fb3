// Command rboinc-retrieve downloads the results of chains submitted with
// rboinc-submit, and reports, stops or purges them. It is safe under cron:
// it never waits for an answer without -yes, holds a lock on its download
// directory, and says what happened through its exit code.
package main

import (
	"github.com/rboinc/rboinc/internal/clitool"
	"github.com/urfave/cli/v2"
)

const prog = "rboinc-retrieve"

const catAction = "Action"

func newApp() *cli.App {
	app := &cli.App{
		Name:  prog,
		Usage: "download the results of rboinc chains, or report, stop or purge them",
		UsageText: prog + " -group GROUP [-name NAME] [-into DIR | -intotree DIR] [-keep]\n" +
			prog + " -status [-group GROUP [-name NAME]] [-json]\n" +
			prog + " -gridstatus [-group GROUP] [-json]\n" +
			prog + " -stop [-cancel]|-abort|-purge -group GROUP [-name NAME] [-yes]\n" +
			prog + " -resume -group GROUP [-name NAME] [-<parameter> FILE]... [-yes]\n" +
			prog + " -extend K -group GROUP [-name NAME] [-yes]\n" +
			prog + " -priority P -group GROUP [-name NAME]\n" +
			prog + " -follow GROUP [-follow GROUP]... [-into DIR | -intotree DIR]\n" +
			prog + " -watch [-group GROUP] [-json]\n" +
			prog + " -notify-secret | -notify-secret-rotate [-yes]\n" +
			prog + " -confirm-email ADDRESS [-code CODE]",
		Description: "Options take one or two dashes. Exit codes: 0 ok, 1 failure, 2 usage error\n" +
			"(also -stop, -abort, -resume, -extend, -purge or -notify-secret-rotate\n" +
			"without a terminal and without -yes), 3 server unreachable, 4 refused by\n" +
			"the server, 5 authentication failed, 6 another rboinc-retrieve is running\n" +
			"in the directory, 7 some files failed to download (the others were kept\n" +
			"and acknowledged).",
		Flags: append(clitool.ServerFlags(),
			&cli.StringFlag{Name: "group", Category: catAction, Usage: "`GROUP` of chains (mandatory, except for -status)"},
			&cli.StringFlag{Name: "name", Category: catAction, Usage: "only the chain `NAME` of the group"},
			&cli.StringFlag{Name: "into", Category: catAction, Value: ".", Usage: "download into `DIR`"},
			&cli.StringFlag{Name: "intotree", Category: catAction, Usage: "download into `DIR`/<chain name>/"},
			&cli.BoolFlag{Name: "keep", Category: catAction, Usage: "leave the files on the server (do not acknowledge them)"},
			&cli.BoolFlag{Name: "status", Category: catAction, Usage: "print NAME, steps done, state and steps of each chain, and why or where in BOINC its step is"},
			&cli.BoolFlag{Name: "boinc", Category: clitool.CatOutput, Usage: "with -status: also what BOINC does with each running chain's current work unit (its results, from BOINC's database)"},
			&cli.BoolFlag{Name: "gridstatus", Category: catAction, Usage: "print the number of chains per state of each of your groups"},
			&cli.BoolFlag{Name: "stop", Category: catAction, Usage: "create no further steps for the group (or chain)"},
			&cli.BoolFlag{Name: "cancel", Category: catAction, Usage: "with -stop: also cancel the work units in BOINC"},
			&cli.BoolFlag{Name: "purge", Category: catAction, Usage: "remove the group (or chain) from the server for good (its work units in BOINC are cancelled)"},
			&cli.BoolFlag{Name: "resume", Category: catAction, Usage: "continue stopped, failed or aborted chains from their last good step; -<parameter> FILE options of the chains' queue (as rboinc-submit takes them) give that step new inputs"},
			&cli.StringFlag{Name: "extend", Category: catAction, Usage: "add `K` steps to the chains (also to done ones)"},
			&cli.BoolFlag{Name: "abort", Category: catAction, Usage: "stop the chains and cancel their work units in BOINC"},
			&cli.StringFlag{Name: "priority", Category: catAction, Usage: "give the chains the base priority `P` (as -priority of rboinc-submit): their next steps, and their work units BOINC has not sent yet"},
			&cli.StringSliceFlag{Name: "follow", Category: catAction, Usage: "retrieve `GROUP`'s results as its steps finish, until the group is done (repeatable; -into/-intotree as for a retrieval)"},
			&cli.BoolFlag{Name: "watch", Category: catAction, Usage: "print your chains' events as they happen, until interrupted (-group: of that group only)"},
			&cli.BoolFlag{Name: "yes", Category: catAction, Usage: "do not ask before -stop, -abort, -resume, -extend or -purge"},
			&cli.BoolFlag{Name: "json", Category: clitool.CatOutput, Usage: "print the result as JSON"},
			&cli.BoolFlag{Name: "verbose", Category: clitool.CatOutput, Usage: "log every request, and print the summary even when output is not a terminal"},
			&cli.BoolFlag{Name: "quiet", Category: clitool.CatOutput, Usage: "no progress bar, no summary (the default when output is not a terminal)"},
		),
		Action: action,
	}
	app.Flags = append(app.Flags, notifyFlags()...)
	clitool.Setup(app)
	return app
}
