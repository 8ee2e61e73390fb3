package standin

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// dbFile is the stand-in database, relative to the project directory.
const dbFile = "standin.db"

// Workunit and result states, with BOINC's numbers where BOINC has them.
const (
	assimInit  = 0
	assimReady = 1
	assimDone  = 2

	simNew     = 0 // created by create_work, no result yet
	simActive  = 1 // results exist, no decision
	simDecided = 2 // canonical result chosen, or error_mask set

	serverUnsent     = 2
	serverInProgress = 4
	serverOver       = 5

	outcomeSuccess     = 1
	outcomeClientError = 3
	outcomeDidntNeed   = 5

	errMaskTooManyErrors  = 2
	errMaskTooManySuccess = 4
	errMaskTooManyTotal   = 8
	errMaskNoCanonical    = 32
)

const schema = `
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

// openDB opens (creating if needed) the stand-in database of a project.
// create_work runs are separate processes from the volunteer loop, so every
// write transaction takes the write lock up front and waits for it.
func openDB(projectDir string) (*sql.DB, error) {
	path := filepath.Join(projectDir, dbFile)
	if strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("stand-in database path %q must not contain '?'", path)
	}
	db, err := sql.Open("sqlite", path+"?_busy_timeout=10000&_journal_mode=WAL&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("opening stand-in database %s: %w", path, err)
	}
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("preparing stand-in database %s: %w", path, err)
	}
	return db, nil
}

// inTx runs fn in one write transaction.
func inTx(ctx context.Context, db *sql.DB, fn func(*sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

func isUniqueViolation(err error) bool {
	var e *sqlite.Error
	return errors.As(err, &e) && e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}
