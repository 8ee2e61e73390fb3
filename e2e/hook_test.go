package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
)

var firstWURE = regexp.MustCompile(`[A-Za-z0-9_]+-[A-Z0-9]+_[A-Za-z0-9_]+-0-[0-9]+-RND[0-9]{4}`)

// rbhook NOUTPUTS TIMES: take the first work unit named in the last
// command's stdout, put NOUTPUTS output files for it into BOINC's upload
// hierarchy, and call the installed hook TIMES times the way
// script_assimilator does (`../bin/rboinc_hook WU_ID PATH...` from
// tmp_<host>). With RESULT, the outputs are those of result
// <wu>_<RESULT> (default 0, the transitioner's first).
func cmdHook(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 && len(args) != 3 {
		ts.Fatalf("usage: rbhook NOUTPUTS TIMES [RESULT]")
	}
	result := "0"
	if len(args) == 3 {
		result = args[2]
	}
	nout, err := strconv.Atoi(args[0])
	ts.Check(err)
	times, err := strconv.Atoi(args[1])
	ts.Check(err)
	wu := firstWURE.FindString(ts.ReadFile("stdout"))
	if wu == "" {
		ts.Fatalf("no work-unit name in the last stdout")
	}
	proj, err := boinc.LoadProject(filepath.Join(ts.Getenv("ROOT"), "boinc"))
	ts.Check(err)
	hookArgs := []string{"4242"}
	for k := 0; k < nout; k++ {
		p := proj.UploadPath(fmt.Sprintf("%s_%s_r1176225829_%d", wu, result, k))
		ts.Check(os.MkdirAll(filepath.Dir(p), 0o755))
		ts.Check(os.WriteFile(p, []byte(fmt.Sprintf("output %d of %s\n", k, wu)), 0o644))
		ownByServer(ts, filepath.Dir(p), p)
		hookArgs = append(hookArgs, p)
	}
	tmp := filepath.Join(proj.Dir, "tmp_hook")
	ts.Check(os.MkdirAll(tmp, 0o755))
	ownByServer(ts, tmp)
	for i := 0; i < times; i++ {
		cmd := asServer(ts, exec.Command("../bin/rboinc_hook", hookArgs...))
		cmd.Dir = tmp
		out, err := cmd.CombinedOutput()
		if err != nil {
			ts.Fatalf("hook call %d: %v\n%s", i, err, out)
		}
	}
}

// rbwucount REGEXP N: the BOINC stand-in holds N work units whose names
// match REGEXP.
func cmdWUCount(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: rbwucount REGEXP N")
	}
	want, err := strconv.Atoi(args[1])
	ts.Check(err)
	re := mustRE(ts, args[0])
	db := standinDB(ts)
	defer db.Close()
	rows, err := db.Query(`SELECT name FROM workunit`)
	ts.Check(err)
	defer rows.Close()
	n := 0
	var names []string
	for rows.Next() {
		var s string
		ts.Check(rows.Scan(&s))
		names = append(names, s)
		if re.MatchString(s) {
			n++
		}
	}
	if (n == want) == neg {
		ts.Fatalf("%d work units match %s, want %d; all: %v", n, args[0], want, names)
	}
}

// standinDB opens the stand-in's BOINC database, wherever its config.xml
// keeps it.
func standinDB(ts *testscript.TestScript) *boincdb.DB {
	p, err := boinc.LoadProject(filepath.Join(ts.Getenv("ROOT"), "boinc"))
	ts.Check(err)
	t, err := boincdb.ForProject(p, true)
	ts.Check(err)
	db, err := boincdb.Open(context.Background(), t)
	ts.Check(err)
	return db
}
