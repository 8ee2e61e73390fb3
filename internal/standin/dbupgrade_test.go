package standin

import (
	"database/sql"
	"os"
	"testing"
)

// oldSchema is the stand-in's database before it kept BOINC's schema.
const oldSchema = `
CREATE TABLE IF NOT EXISTS workunit (
	id                   INTEGER PRIMARY KEY AUTOINCREMENT,
	create_time          INTEGER NOT NULL,
	appname              TEXT NOT NULL,
	name                 TEXT NOT NULL UNIQUE,
	xml_doc              TEXT NOT NULL,
	batch                INTEGER NOT NULL DEFAULT 0,
	rsc_fpops_est        REAL NOT NULL,
	rsc_fpops_bound      REAL NOT NULL,
	rsc_memory_bound     REAL NOT NULL,
	rsc_disk_bound       REAL NOT NULL,
	rsc_bandwidth_bound  REAL NOT NULL DEFAULT 0,
	delay_bound          INTEGER NOT NULL,
	min_quorum           INTEGER NOT NULL,
	target_nresults      INTEGER NOT NULL,
	max_error_results    INTEGER NOT NULL,
	max_total_results    INTEGER NOT NULL,
	max_success_results  INTEGER NOT NULL,
	result_template_file TEXT NOT NULL,
	priority             INTEGER NOT NULL DEFAULT 0,
	size_class           INTEGER NOT NULL DEFAULT -1,
	hr_class             INTEGER NOT NULL DEFAULT 0,
	app_version_num      INTEGER NOT NULL DEFAULT 0,
	canonical_credit     REAL NOT NULL DEFAULT 0,
	keywords             TEXT NOT NULL DEFAULT '',
	transitioner_flags   INTEGER NOT NULL DEFAULT 0,
	error_mask           INTEGER NOT NULL DEFAULT 0,
	canonical_resultid   INTEGER NOT NULL DEFAULT 0,
	assimilate_state     INTEGER NOT NULL DEFAULT 0, -- 0 init, 1 ready, 2 done
	file_delete_state    INTEGER NOT NULL DEFAULT 0, -- 0 init, 2 done
	sim_state            INTEGER NOT NULL DEFAULT 0  -- stand-in: 0 new, 1 active, 2 decided
);
CREATE INDEX IF NOT EXISTS workunit_sim ON workunit(sim_state);
CREATE INDEX IF NOT EXISTS workunit_assim ON workunit(assimilate_state, appname, id);
CREATE TABLE IF NOT EXISTS result (
	id             INTEGER PRIMARY KEY AUTOINCREMENT,
	create_time    INTEGER NOT NULL,
	workunitid     INTEGER NOT NULL REFERENCES workunit(id),
	name           TEXT NOT NULL UNIQUE,
	server_state   INTEGER NOT NULL,          -- 2 unsent, 4 in progress, 5 over
	outcome        INTEGER NOT NULL DEFAULT 0, -- 1 success, 3 client error, 5 didn't need
	priority       INTEGER NOT NULL DEFAULT 0,
	xml_doc_in     TEXT NOT NULL,
	sent_time      INTEGER NOT NULL DEFAULT 0,
	received_time  INTEGER NOT NULL DEFAULT 0,
	exit_status    INTEGER NOT NULL DEFAULT 0,
	elapsed_time   REAL NOT NULL DEFAULT 0,
	stderr_out     TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS assignment (      -- BOINC's: targeted and broadcast jobs
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	create_time INTEGER NOT NULL,
	target_id   INTEGER NOT NULL,
	target_type INTEGER NOT NULL,              -- 0 none (every host), 1 host, 2 user, 3 team
	multi       INTEGER NOT NULL,              -- 1: each target gets an instance (broadcast)
	workunitid  INTEGER NOT NULL,
	resultid    INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS assignment_target ON assignment(target_type, target_id);
CREATE INDEX IF NOT EXISTS result_state ON result(server_state, priority);
CREATE INDEX IF NOT EXISTS result_wu ON result(workunitid);
`

func TestOldStandinDatabaseIsConverted(t *testing.T) {
	t.Parallel()
	if os.Getenv(testDBEnv) == "mariadb" {
		t.Skip("only SQLite stand-ins are from before BOINC's schema")
	}
	tp := newProject(t)
	os.Remove(tp.path(dbFile))
	old, err := sql.Open("sqlite", tp.path(dbFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{oldSchema,
		`INSERT INTO workunit (id, create_time, appname, name, xml_doc, batch, rsc_fpops_est, rsc_fpops_bound, rsc_memory_bound,
			rsc_disk_bound, delay_bound, min_quorum, target_nresults, max_error_results, max_total_results, max_success_results,
			result_template_file, canonical_resultid, assimilate_state, sim_state)
			VALUES (7, 100, 'rbtest', 'done_wu', '<x/>', 3, 1, 1, 1, 1, 60, 1, 1, 1, 1, 1, 'templates/rbtest_out', 9, 2, 2),
			       (8, 101, 'rbtest', 'new_wu', '<y/>', 0, 1, 1, 1, 1, 60, 1, 1, 1, 1, 1, 'templates/rbtest_out', 0, 0, 0)`,
		`INSERT INTO result (id, create_time, workunitid, name, server_state, outcome, xml_doc_in) VALUES (9, 100, 7, 'done_wu_0', 5, 1, '<r/>')`,
		`INSERT INTO assignment (create_time, target_id, target_type, multi, workunitid) VALUES (100, 1, 2, 0, 8)`,
	} {
		if _, err := old.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	old.Close()

	db, err := openDB(tp.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var app string
	var batch, tt, assim int64
	if err := db.QueryRow(`SELECT a.name, w.batch, w.transition_time, w.assimilate_state FROM workunit w JOIN app a ON a.id = w.appid WHERE w.id = 7`).
		Scan(&app, &batch, &tt, &assim); err != nil {
		t.Fatal(err)
	}
	if app != "rbtest" || batch != 3 || tt < 1<<30 || assim != assimDone {
		t.Errorf("decided work unit converted to app %q batch %d transition_time %d assimilate_state %d", app, batch, tt, assim)
	}
	if err := db.QueryRow(`SELECT transition_time FROM workunit WHERE id = 8`).Scan(&tt); err != nil || tt != 0 {
		t.Errorf("new work unit: transition_time %d, %v; want 0 (due)", tt, err)
	}
	if n := tp.count(`SELECT count(*) FROM result WHERE workunitid = 7 AND batch = 3 AND outcome = 1`); n != 1 {
		t.Errorf("%d converted results, want 1", n)
	}
	if n := tp.count(`SELECT count(*) FROM assignment WHERE workunitid = 8 AND target_type = 2`); n != 1 {
		t.Errorf("%d converted assignments, want 1", n)
	}
	// A converted database takes new work as a new one does.
	tp.stage("a_in1.coor", "c")
	tp.stage("a_in1.psf", "p")
	if _, errs, code := tp.createWork("", "", "--appname", "rbtest", "--wu_name", "after", "a_in1.coor", "a_in1.psf"); code != 0 {
		t.Fatalf("create_work after conversion: %d %s", code, errs)
	}
}
