// Command rboinc-submit submits chains of BOINC work units to an rboinc
// server. Its file options depend on the application queue, so the queue
// is fetched from the server before the command line is parsed in full.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/rboinc/rboinc/internal/clitool"
	"github.com/rboinc/rboinc/workflow/client"
	"github.com/rboinc/rboinc/workflow/wire"
	"github.com/urfave/cli/v2"
)

const prog = "rboinc-submit"

func main() {
	ctx, stop := clitool.SignalContext()
	code := run(ctx, os.Args)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string) int {
	// -version, -man and -completion need no server.
	if code, done := clitool.Early(newApp(nil, nil), args, true); done {
		return code
	}
	pre := prescan(args[1:])
	if pre.verbose {
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug})))
	}
	cl, q, err := connect(ctx, pre)
	slog.Debug("queue fetched", "ms", sinceStart())
	if errors.Is(err, client.ErrUsage) {
		// "-a langevin": that -a is ambiguous says more than "missing
		// -app_name". (Only now: a queue's option may be named -a.)
		if _, xerr := clitool.ExpandArgs(args[1:], newApp(nil, nil).Flags, false); clitool.IsAmbiguous(xerr) {
			err = client.Usagef("%v (see -help)", xerr)
		}
	}
	if err != nil {
		if !pre.help {
			if clitool.WantsJSON(args[1:], newApp(nil, nil).Flags) {
				return clitool.ReportJSON(prog, err)
			}
			return clitool.Report(prog, err)
		}
		// Help must work without a server: show the fixed options.
		if pre.url != "" && pre.app != "" {
			fmt.Fprintf(os.Stderr, "%s: note: the queue's own options are not listed: %v\n", prog, err)
		}
	}
	return clitool.Run(ctx, newApp(cl, q), args)
}

// connect fetches the queue named by -app_name, with a clear error when
// something is missing, the server is unreachable, or the queue unknown.
func connect(ctx context.Context, pre preArgs) (*client.Client, *wire.Queue, error) {
	cl, err := client.New(pre.url, pre.token)
	if err != nil {
		return nil, nil, err
	}
	clitool.NoteRetries(cl, prog)
	if pre.token == "" {
		return nil, nil, client.Usagef("no access token: give -authenticator or set RBOINC_TOKEN")
	}
	if pre.app == "" {
		return nil, nil, client.Usagef("missing mandatory option -app_name, the application queue (see -help)")
	}
	q, err := cl.Queue(ctx, pre.app)
	var api *client.APIError
	if errors.As(err, &api) && (api.Code == wire.CodeUnknownQueue || api.Code == wire.CodeNotFound) {
		return nil, nil, &client.APIError{Status: api.Status, Code: api.Code, Message: unknownQueue(ctx, cl, pre.app)}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("fetching queue %s: %w", pre.app, err)
	}
	return cl, q, nil
}

// unknownQueue words the error for a queue the server does not have,
// listing those it has.
func unknownQueue(ctx context.Context, cl *client.Client, name string) string {
	msg := fmt.Sprintf("unknown application queue %q on %s", name, cl.Base)
	list, err := cl.Queues(ctx)
	switch {
	case err != nil:
		return msg + fmt.Sprintf(" (and the list of queues failed: %v)", err)
	case len(list) == 0:
		return msg + "; the server offers no queue"
	}
	names := make([]string, len(list))
	for i, s := range list {
		names[i] = s.Name
	}
	return msg + "; available: " + strings.Join(names, ", ")
}

func newApp(cl *client.Client, q *wire.Queue) *cli.App {
	fixed := fixedFlags()
	app := &cli.App{
		Name:      prog,
		Usage:     "submit chains of BOINC work units to an rboinc server",
		UsageText: prog + " -app_name QUEUE -group GROUP -name NAME [-num_steps N] [-<parameter> FILE]...\n" + prog + " -app_name QUEUE -group GROUP -jobs FILE [-<parameter> FILE]...\n" + prog + " -app_name QUEUE -help_parameters",
		Description: "Options take one or two dashes. The file options of a queue are listed by\n" +
			"-help_parameters. Exit codes: 0 ok, 1 failure, 2 usage error, 3 server\n" +
			"unreachable, 4 refused by the server, 5 authentication failed.",
		Flags: fixed,
		Action: func(c *cli.Context) error {
			if q == nil {
				return client.Usagef("missing -url, -authenticator or -app_name (see -help)")
			}
			return submit(c, cl, q)
		},
	}
	if q != nil {
		app.Flags = append(app.Flags, paramFlags(q, fixed)...)
	}
	clitool.Setup(app)
	return app
}

// started is about when the process started (package initialisation).
var started = time.Now()

// sinceStart is the time since the process started, in milliseconds, for
// debug lines.
func sinceStart() float64 { return float64(time.Since(started).Microseconds()) / 1000 }
