// Command fidelity is the real-BOINC run's check that rboinc's two ways of
// creating work units (BOINC's bin/create_work and native creation, rboinc.json
// "create") write the same rows in BOINC's database (e2e/realboinc/run.sh,
// stage 9; see README.md there).
//
//	fidelity submit -queue Q -group G -jobs FILE [options]   # as the scientist (RBOINC_URL, RBOINC_TOKEN)
//	fidelity compare -project DIR -a G1[,G2] -b G3[,G4] -tables workunit,assignment [-want workunit=N,...]
//
// submit sends chains through the public client API, which, unlike
// rboinc-submit, also carries each chain's command-line arguments. compare
// reads every column BOINC's schema has (information_schema, not a fixed
// list) for the work units of the groups -a and of the groups -b, pairs them
// by chain name and step, and prints every column whose values differ,
// byte for byte. It opens BOINC's database as rboinc does, from the project's
// config.xml, so it runs as the project's user. Exit status: 0 no
// difference, 1 differences (or too few rows to compare), 2 bad usage or
// an error reading the database.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:]))
}

func run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: fidelity submit|compare [options] (see -h of each)")
		return 2
	}
	switch args[0] {
	case "submit":
		return runSubmit(ctx, args[1:])
	case "compare":
		return runCompare(ctx, args[1:])
	}
	fmt.Fprintf(os.Stderr, "fidelity: unknown command %q: want submit or compare\n", args[0])
	return 2
}
