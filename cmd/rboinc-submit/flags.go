package main

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/rboinc/rboinc/internal/clitool"
	"github.com/rboinc/rboinc/workflow/wire"
	"github.com/urfave/cli/v2"
)

const (
	catChain    = "Chain"
	catSchedule = "Scheduling and resources"
)

// fixedFlags are the options every queue has.
func fixedFlags() []cli.Flag {
	f := clitool.ServerFlags()
	return append(f,
		&cli.StringFlag{Name: "app_name", Category: clitool.CatServer, Usage: "application `QUEUE` to submit to (mandatory)"},

		&cli.StringFlag{Name: "group", Category: catChain, Usage: "`GROUP` the chains belong to (mandatory)"},
		&cli.StringFlag{Name: "name", Category: catChain, Usage: "`NAME` of the chain (mandatory unless -jobs)"},
		&cli.StringFlag{Name: "jobs", Category: catChain, Usage: "submit one chain per line of `FILE`: NAME [-parameter FILE]..."},
		&cli.IntFlag{Name: "num_steps", Category: catChain, Value: 1, Usage: "`N` steps (work units) per chain"},
		&cli.IntFlag{Name: "priority", Category: catChain, Value: 1, Usage: "BOINC priority `N` of the first step; later steps get less"},

		&cli.Float64Flag{Name: "fpops_est", Category: catSchedule, Usage: "estimated floating-point operations `X` per step (default: the template's)"},
		&cli.Float64Flag{Name: "fpops_bound", Category: catSchedule, Usage: "abort a step after `X` floating-point operations"},
		&cli.Float64Flag{Name: "memory_bound", Category: catSchedule, Usage: "`BYTES` of memory a step needs"},
		&cli.IntFlag{Name: "target_nresults", Category: catSchedule, Usage: "`N` replicas of each step"},
		&cli.IntFlag{Name: "min_quorum", Category: catSchedule, Usage: "`N` agreeing replicas needed"},
		&cli.Int64Flag{Name: "batch", Category: catSchedule, Usage: "BOINC batch `ID`"},
		&cli.IntFlag{Name: "max_attempts", Category: catSchedule, Usage: "`N` work units at most per step when BOINC gives up on one (default and upper bound: the server's max_step_attempts)"},
		&cli.StringSliceFlag{Name: "notify", Category: catSchedule, Usage: "tell `URL|ADDRESS` when a chain of the group is done or failed and when the group is done (repeatable): a webhook, each call signed with your secret (rboinc-retrieve -notify-secret), or an e-mail address you confirmed (rboinc-retrieve -confirm-email)"},
		&cli.StringFlag{Name: "assign_user_all", Category: catSchedule, Usage: "send the work only to BOINC user `ID` (me: your own BOINC account, when the server links you to one)"},

		&cli.IntFlag{Name: "balance", Category: catSchedule, Usage: "load balancer `ON` (1) or off (0): accepted for the original's scripts; rboinc has no load balancer"},
		&cli.StringFlag{Name: "metadata_file", Category: catChain, Usage: "`FILE` is ignored: accepted for the original's scripts, which never uploaded it either"},

		&cli.BoolFlag{Name: "dry_run", Category: clitool.CatGeneral, Usage: "check everything and upload the files, but create no work"},
		&cli.BoolFlag{Name: "no_hash_cache", Category: clitool.CatGeneral, Usage: "hash every input file, ignoring the cache of unchanged files' checksums (also RBOINC_HASH_CACHE=off)"},
		&cli.BoolFlag{Name: "help_parameters", Category: clitool.CatGeneral, Usage: "list the file parameters of the queue and exit"},
		&cli.BoolFlag{Name: "json", Category: clitool.CatOutput, Usage: "print the result as one JSON object"},
		&cli.BoolFlag{Name: "verbose", Category: clitool.CatOutput, Usage: "log every request"},
		&cli.BoolFlag{Name: "quiet", Category: clitool.CatOutput, Usage: "print only the submitted chains"},
	)
}

// paramFlags adds one -<name> FILE option per parameter of q. A parameter
// whose name clashes with a fixed option, or that the flag syntax cannot
// carry, cannot be given; the queue's administrator should rename it.
func paramFlags(q *wire.Queue, fixed []cli.Flag) []cli.Flag {
	taken := map[string]bool{}
	for _, f := range fixed {
		for _, n := range f.Names() {
			taken[n] = true
		}
	}
	// clitool.Setup adds these to every command (a server with older
	// templates may still offer a parameter of that name).
	for _, n := range []string{"help", "h", "version", "man", "completion"} {
		taken[n] = true
	}
	var out []cli.Flag
	cat := fmt.Sprintf("Parameters of queue %s", q.Name)
	for _, p := range q.Parameters {
		if taken[p.Name] || p.Name == "" || strings.HasPrefix(p.Name, "-") || strings.ContainsAny(p.Name, "= \t") {
			slog.Warn("queue parameter cannot be used as an option", "queue", q.Name, "parameter", p.Name)
			continue
		}
		taken[p.Name] = true
		out = append(out, &cli.StringFlag{Name: p.Name, Category: cat, Usage: paramUsage(p)})
	}
	return out
}

// paramUsage is the help text of a parameter. Backquotes would be taken
// as a placeholder by the cli library, so they are replaced.
func paramUsage(p wire.Parameter) string {
	u := strings.ReplaceAll(p.Description, "`", "'")
	if p.Optional {
		u += " (optional)"
	}
	return u
}
