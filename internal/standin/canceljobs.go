package standin

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/rboinc/rboinc/internal/boinc"
)

// CancelJobsMain is the stand-in's cancel_jobs (rboinc-server dispatches
// `standin cancel_jobs ARGS` to it), with BOINC's tools/cancel_jobs
// command line and effect:
//
//	cancel_jobs min-ID max-ID    cancel the work units with ids in the range
//	cancel_jobs --name wuname    cancel the work unit of that name
//
// Results not sent yet are over and never sent; each work unit gets the
// cancelled bit of its error mask and is due for the transitioner, so it is
// assimilated as an error, never as a success. Like BOINC's, it prints
// nothing on success and exits 1 on a usage or lookup error.
func CancelJobsMain(args []string, stdout, stderr io.Writer) int {
	usage := func() int {
		fmt.Fprintf(stderr, "Usage: cancel_jobs min-ID max-ID\nor cancel_jobs --name wuname\n")
		return 1
	}
	if len(args) != 2 {
		return usage()
	}
	dir, err := boinc.FindProjectDir()
	if err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		return 1
	}
	db, err := openDB(dir)
	if err != nil {
		fmt.Fprintf(stdout, "boinc_db.open: %v\n", err)
		return 1
	}
	defer db.Close()
	ctx := context.Background()
	var ids []int64
	if args[0] == "--name" {
		m, err := db.WUIDs(ctx, []string{args[1]})
		if err != nil || m[args[1]] == 0 {
			fmt.Fprintf(stderr, "No workunit named '%s'\n", args[1])
			return 1
		}
		ids = []int64{m[args[1]]}
	} else {
		// atoi, as BOINC's: a word that is no number is 0, which is refused.
		lo, _ := strconv.ParseInt(args[0], 10, 64)
		hi, _ := strconv.ParseInt(args[1], 10, 64)
		if lo == 0 || hi == 0 {
			return usage()
		}
		rows, err := db.QueryContext(ctx, `SELECT id FROM workunit WHERE id >= ? AND id <= ?`, lo, hi)
		if err != nil {
			fmt.Fprintf(stderr, "cancel job failed: %v\n", err)
			return 1
		}
		for rows.Next() {
			var id int64
			if rows.Scan(&id) == nil {
				ids = append(ids, id)
			}
		}
		rows.Close()
	}
	if _, err := db.Cancel(ctx, ids); err != nil {
		fmt.Fprintf(stderr, "cancel job failed: %v\n", err)
		return 1
	}
	return 0
}
