// Package clitool holds what rboinc-submit and rboinc-retrieve share as
// command-line programs: common flags, terminal detection, progress bars,
// confirmation prompts and the mapping of errors to exit codes.
package clitool

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/rboinc/rboinc/workflow/client"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"
)

// Flag categories, in the order help lists them.
const (
	CatServer  = "Server"
	CatOutput  = "Output"
	CatGeneral = "Miscellaneous"
)

// ServerFlags are -url, -authenticator, -user and -email.
func ServerFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "url", EnvVars: []string{"RBOINC_URL"}, Category: CatServer,
			Usage: "base `URL` of the rboinc server, e.g. http://host:8080/rboinc_cgi"},
		&cli.StringFlag{Name: "authenticator", EnvVars: []string{"RBOINC_TOKEN"}, Category: CatServer,
			Usage: "your access `TOKEN`; it also says who you are"},
		&cli.StringFlag{Name: "user", Category: CatServer, Usage: "`NAME` is ignored: the token says who you are"},
		&cli.StringFlag{Name: "email", Category: CatServer, Usage: "`ADDRESS` is ignored"},
		&cli.StringFlag{Name: "cacert", EnvVars: []string{"RBOINC_CA_FILE"}, Category: CatServer,
			Usage: "also trust the PEM certificates in `FILE` for https (a self-signed server)"},
	}
}

// Setup gives an app the behaviour both commands share: single-dash help
// (see flagString),
// flag errors as usage errors, no os.Exit inside the library, -verbose
// logging.
func Setup(app *cli.App) {
	cli.FlagStringer = flagString
	app.HideHelp = true
	app.HideHelpCommand = true
	// The library's own help flag and command are hidden so that a stray
	// word "help" is not taken as a command; this flag replaces them.
	app.Flags = append(app.Flags, &cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Category: CatGeneral, Usage: "print this help"})
	app.Flags = append(app.Flags, docFlagsOf()...)
	app.ExitErrHandler = func(*cli.Context, error) {}
	app.OnUsageError = func(c *cli.Context, err error, _ bool) error {
		return client.Usagef("%v (see -help)", err)
	}
	app.Before = func(c *cli.Context) error {
		level := slog.LevelWarn
		if c.Bool("verbose") {
			level = slog.LevelDebug
		}
		slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})))
		if c.Args().Present() {
			return client.Usagef("unexpected argument %q (see -help)", c.Args().First())
		}
		return nil
	}
}

// SignalContext is cancelled by SIGINT or SIGTERM, so that transfers stop
// cleanly (temporary files removed) when the user interrupts.
func SignalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

// Main runs app with the process arguments and exits with the code
// client.ExitCode gives its error.
func Main(app *cli.App) {
	ctx, stop := SignalContext()
	code := Run(ctx, app, os.Args)
	stop()
	os.Exit(code)
}

// Run runs app, prints any error on stderr (and, with -json, as JSON on
// stdout) and returns the exit code.
func Run(ctx context.Context, app *cli.App, args []string) int {
	if code, done := Early(app, args, true); done {
		return code
	}
	report := Report
	if len(args) > 1 && WantsJSON(args[1:], app.Flags) {
		report = func(prog string, err error) int {
			if app.Writer != nil {
				return reportJSON(app.Writer, prog, err)
			}
			return ReportJSON(prog, err)
		}
	}
	if len(args) > 1 {
		rest, err := ExpandArgs(args[1:], app.Flags, false)
		if err != nil {
			return report(app.Name, client.Usagef("%v (see -help)", err))
		}
		args = append(args[:1:1], rest...)
	}
	return report(app.Name, app.RunContext(ctx, args))
}

// Report prints err (if any) on stderr as "prog: message" and returns its
// exit code.
func Report(prog string, err error) int {
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %s\n", prog, err)
	}
	return client.ExitCode(err)
}

// Connect builds a client from -url and -authenticator.
func Connect(c *cli.Context) (*client.Client, error) {
	// A URL written for the original clients carries the token.
	base, tok := URLCredentials(c.String("url"))
	if c.String("authenticator") != "" {
		tok = c.String("authenticator")
	}
	if tok == "" {
		return nil, client.Usagef("no access token: give -authenticator or set RBOINC_TOKEN")
	}
	cl, err := client.New(base, tok)
	if err == nil && c.String("cacert") != "" {
		err = cl.TrustCAFile(c.String("cacert"))
	}
	NoteRetries(cl, c.App.Name)
	return cl, err
}

// NoteIgnored prints a one-line notice when -user or -email was given.
func NoteIgnored(c *cli.Context) {
	var given []string
	for _, f := range []string{"user", "email"} {
		if c.IsSet(f) {
			given = append(given, "-"+f)
		}
	}
	if len(given) > 0 {
		fmt.Fprintf(os.Stderr, "%s: note: %s ignored; the server knows you by your -authenticator token\n",
			c.App.Name, strings.Join(given, " and "))
	}
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// NoteRetries has cl say, on a terminal only, when it tries a request
// again (off a terminal, under cron, only the final error is printed).
func NoteRetries(cl *client.Client, prog string) {
	if cl == nil || !IsTerminal(os.Stderr) {
		return
	}
	cl.Retry.OnRetry = func(attempt int, err error, wait time.Duration) {
		fmt.Fprintf(os.Stderr, "%s: %v; trying again in %s (%d of %d)\n", prog, err, wait.Round(100*time.Millisecond), attempt+1, cl.Retry.Attempts)
	}
}
