package standin

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/internal/sqldb"
)

// dbFile is the stand-in's default database, relative to the project
// directory; config.xml's rboinc_db_url puts it in a MariaDB/MySQL server.
const dbFile = boincdb.StandinFile

// BOINC's state codes, short names for this package.
const (
	assimInit  = boincdb.AssimilateInit
	assimReady = boincdb.AssimilateReady
	assimDone  = boincdb.AssimilateDone

	serverUnsent     = boincdb.ServerUnsent
	serverInProgress = boincdb.ServerInProgress
	serverOver       = boincdb.ServerOver

	outcomeSuccess     = boincdb.OutcomeSuccess
	outcomeClientError = boincdb.OutcomeClientError
	outcomeDidntNeed   = boincdb.OutcomeDidntNeed

	errMaskTooManyErrors  = boincdb.ErrTooManyErrors
	errMaskTooManySuccess = boincdb.ErrTooManySuccess
	errMaskTooManyTotal   = boincdb.ErrTooManyTotal
	errMaskNoCanonical    = boincdb.ErrNoCanonical
)

// openDB opens the stand-in's BOINC database (the one its config.xml
// names, else its SQLite file), creating BOINC's tables when missing and
// converting a database of an earlier stand-in.
func openDB(projectDir string) (*boincdb.DB, error) {
	p, err := boinc.LoadProject(projectDir)
	if err != nil {
		return nil, err
	}
	return openProjectDB(context.Background(), p)
}

func openProjectDB(ctx context.Context, p *boinc.Project) (*boincdb.DB, error) {
	t, err := boincdb.ForProject(p, true)
	if err != nil {
		return nil, err
	}
	db, err := boincdb.Open(ctx, t)
	if err != nil {
		return nil, err
	}
	if err := upgradeOldSchema(ctx, db); err != nil {
		db.Close()
		return nil, err
	}
	if err := db.CreateTables(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}

// inTx runs fn in one write transaction.
func inTx(ctx context.Context, db *boincdb.DB, fn func(*sql.Tx) error) error {
	return db.Tx(ctx, fn)
}

func isUniqueViolation(err error) bool { return sqldb.IsDuplicate(err) }

// upgradeOldSchema converts the tables of a stand-in from before it kept
// BOINC's schema (workunit.appname and sim_state; result and assignment
// with fewer columns) into BOINC's, keeping every row.
func upgradeOldSchema(ctx context.Context, db *boincdb.DB) error {
	if db.Engine != sqldb.SQLite {
		return nil
	}
	if _, err := db.ExecContext(ctx, `SELECT sim_state FROM workunit WHERE 1 = 0`); err != nil {
		return nil // a new database, or one already converted
	}
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		for _, s := range []string{
			`ALTER TABLE workunit RENAME TO old_workunit`,
			`ALTER TABLE result RENAME TO old_result`,
			`ALTER TABLE assignment RENAME TO old_assignment`,
			`DROP INDEX IF EXISTS workunit_sim`, `DROP INDEX IF EXISTS workunit_assim`,
			`DROP INDEX IF EXISTS result_state`, `DROP INDEX IF EXISTS result_wu`, `DROP INDEX IF EXISTS assignment_target`,
		} {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("converting the stand-in database %s to BOINC's schema: %w", db.Target, err)
	}
	if err := db.CreateTables(ctx); err != nil {
		return err
	}
	err = db.Tx(ctx, func(tx *sql.Tx) error {
		for _, s := range []string{
			`INSERT INTO app (create_time, name, user_friendly_name)
				SELECT min(create_time), appname, appname FROM old_workunit
				WHERE appname NOT IN (SELECT name FROM app) GROUP BY appname`,
			`INSERT INTO workunit (id, create_time, appid, name, xml_doc, batch, rsc_fpops_est, rsc_fpops_bound,
				rsc_memory_bound, rsc_disk_bound, need_validate, canonical_resultid, canonical_credit, transition_time,
				delay_bound, error_mask, file_delete_state, assimilate_state, hr_class, opaque, min_quorum,
				target_nresults, max_error_results, max_total_results, max_success_results, result_template_file,
				priority, rsc_bandwidth_bound, fileset_id, app_version_id, transitioner_flags, size_class, keywords,
				app_version_num)
			SELECT w.id, w.create_time, a.id, w.name, w.xml_doc, w.batch, w.rsc_fpops_est, w.rsc_fpops_bound,
				w.rsc_memory_bound, w.rsc_disk_bound, 0, w.canonical_resultid, w.canonical_credit,
				CASE WHEN w.sim_state = 2 THEN 2147483647 ELSE 0 END,
				w.delay_bound, w.error_mask, w.file_delete_state, w.assimilate_state, w.hr_class, 0, w.min_quorum,
				w.target_nresults, w.max_error_results, w.max_total_results, w.max_success_results, w.result_template_file,
				w.priority, w.rsc_bandwidth_bound, 0, 0, w.transitioner_flags, w.size_class, w.keywords, w.app_version_num
			FROM old_workunit w JOIN app a ON a.name = w.appname`,
			`INSERT INTO result (id, create_time, workunitid, server_state, outcome, client_state, hostid, userid,
				report_deadline, sent_time, received_time, name, cpu_time, xml_doc_in, xml_doc_out, stderr_out, batch,
				file_delete_state, validate_state, claimed_credit, granted_credit, opaque, random, app_version_num, appid,
				exit_status, teamid, priority, elapsed_time, flops_estimate, app_version_id, runtime_outlier, size_class,
				peak_working_set_size, peak_swap_size, peak_disk_usage)
			SELECT r.id, r.create_time, r.workunitid, r.server_state, r.outcome, 0, 0, 0, 0, r.sent_time,
				r.received_time, r.name, 0, r.xml_doc_in, '', r.stderr_out, w.batch, 0, 0, 0, 0, 0, 0, 0, w.appid,
				r.exit_status, 0, r.priority, r.elapsed_time, 0, 0, 0, -1, 0, 0, 0
			FROM old_result r JOIN workunit w ON w.id = r.workunitid`,
			`INSERT INTO assignment (id, create_time, target_id, target_type, multi, workunitid, resultid)
				SELECT id, create_time, target_id, target_type, multi, workunitid, resultid FROM old_assignment`,
			`DROP TABLE old_assignment`, `DROP TABLE old_result`, `DROP TABLE old_workunit`,
		} {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("converting the stand-in database %s to BOINC's schema: %w", db.Target, err)
	}
	return nil
}
