// Command adaptive-master is an example master program (package
// workflow/master): it keeps -inflight work units of the langevin queue
// running, starts each new one from the best result so far (the lowest
// potential energy of the particles in the harmonic well), and stops once
// -target work units have come back. Killed and started again with the
// same -dir, it goes on where it was: every result is taken into account
// exactly once.
//
// Run it on the embedded BOINC stand-in with one command (it builds the
// server, starts it, and runs this program against it):
//
//	bash examples/adaptive-master/run.sh
//
// Against a server of your own:
//
//	RBOINC_URL=https://host/rboinc_cgi RBOINC_TOKEN=... go run ./examples/adaptive-master -target 100
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "adaptive-master:", err)
		os.Exit(1)
	}
}

// config is what the flags say.
type config struct {
	url, token, caFile string
	dir, tag           string
	coor, vel          string
	inflight, target   int
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("adaptive-master", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.url, "url", os.Getenv("RBOINC_URL"), "the server's API (default $RBOINC_URL)")
	fs.StringVar(&c.token, "token", os.Getenv("RBOINC_TOKEN"), "your token (default $RBOINC_TOKEN)")
	fs.StringVar(&c.caFile, "cacert", os.Getenv("RBOINC_CA_FILE"), "PEM certificates to trust besides the system's (default $RBOINC_CA_FILE)")
	fs.StringVar(&c.dir, "dir", "adaptive", "working directory: results and the master's state")
	fs.StringVar(&c.tag, "tag", "adaptive", "the tag (group) of the work units")
	fs.StringVar(&c.coor, "coor", filepath.Join("examples", "langevin", "input.coor"), "the first work units' coordinates")
	fs.StringVar(&c.vel, "vel", filepath.Join("examples", "langevin", "input.vel"), "the first work units' velocities")
	fs.IntVar(&c.inflight, "inflight", 4, "work units kept running")
	fs.IntVar(&c.target, "target", 20, "stop after this many work units came back")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if c.inflight < 1 || c.target < 1 {
		return c, fmt.Errorf("-inflight and -target must be at least 1")
	}
	return c, nil
}
