package standin

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/internal/sqldb"
)

// transitionDue is the transitioner's pass: every work unit whose
// transition_time has come (create_work sets it to now, as do a reported
// result, cancel_jobs and an added replica).
func (s *sim) transitionDue(ctx context.Context, p *boinc.Project) error {
	rows, err := s.db.QueryContext(ctx, `SELECT id, name FROM workunit WHERE transition_time <= ?
		ORDER BY priority DESC, id LIMIT 500`, time.Now().Unix())
	if err != nil {
		return err
	}
	type wu struct {
		id   int64
		name string
	}
	var todo []wu
	for rows.Next() {
		var w wu
		if err := rows.Scan(&w.id, &w.name); err != nil {
			rows.Close()
			return err
		}
		todo = append(todo, w)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, w := range todo {
		err := inTx(ctx, s.db, func(tx *sql.Tx) error { return s.transition(ctx, tx, p, w.id) })
		// A WU whose result template is unreadable keeps its
		// transition_time and is tried again, as the transitioner does;
		// say so once.
		s.report("wu:"+w.name, err, "cannot create results for work unit "+w.name)
	}
	return nil
}

// wuState is what the transitioner reads of a workunit.
type wuState struct {
	id                                              int64
	appID                                           int64
	name, rtFile                                    string
	priority                                        int
	batch                                           int64
	minQuorum, target, maxErr, maxTotal, maxSuccess int
	errorMask, assimState, fileDeleteState          int
	flags                                           int // transitioner_flags: 0, or an assigned job's
}

// transition is the transitioner and validator for one WU: it decides the WU
// (canonical result, or an error_mask), creates the results it still needs,
// or, once it is assimilated and its results are over, hands its files to
// the file deleter.
func (s *sim) transition(ctx context.Context, tx *sql.Tx, p *boinc.Project, wuID int64) error {
	var w wuState
	err := tx.QueryRowContext(ctx, `SELECT id, appid, name, result_template_file, priority, batch, min_quorum,
		target_nresults, max_error_results, max_total_results, max_success_results, error_mask, assimilate_state,
		file_delete_state, transitioner_flags
		FROM workunit WHERE id = ?`+s.lockRow(), wuID).Scan(&w.id, &w.appID, &w.name, &w.rtFile, &w.priority, &w.batch, &w.minQuorum,
		&w.target, &w.maxErr, &w.maxTotal, &w.maxSuccess, &w.errorMask, &w.assimState, &w.fileDeleteState, &w.flags)
	if err != nil {
		return fmt.Errorf("reading work unit %d: %w", wuID, err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, name, server_state, outcome FROM result
		WHERE workunitid = ? ORDER BY id`, wuID)
	if err != nil {
		return err
	}
	var (
		names                               []string
		outstanding, nSuccess, nErr, nTotal int
		canonical                           int64
	)
	for rows.Next() {
		var id int64
		var name string
		var state, outcome int
		if err := rows.Scan(&id, &name, &state, &outcome); err != nil {
			rows.Close()
			return err
		}
		names = append(names, name)
		nTotal++
		switch {
		case state == serverUnsent || state == serverInProgress:
			outstanding++
		case outcome == outcomeSuccess:
			nSuccess++
			if canonical == 0 {
				canonical = id
			}
		case outcome == outcomeClientError:
			nErr++
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if w.assimState != assimInit {
		return s.transitionDecided(ctx, tx, &w, outstanding)
	}

	mask := w.errorMask
	if mask != 0 || nSuccess < max(w.minQuorum, 1) {
		canonical = 0
	}
	if canonical == 0 && mask == 0 {
		// BOINC's rules: more errors than max_error_results is error 2; a
		// result needed beyond max_total_results is error 8. So with the
		// default replication one failure ends the WU with error 8.
		switch need := max(w.target, w.minQuorum) - outstanding - nSuccess; {
		case nErr > w.maxErr:
			mask |= errMaskTooManyErrors
		case nSuccess > w.maxSuccess:
			mask |= errMaskTooManySuccess
		case need > 0 && w.maxTotal-nTotal <= 0:
			mask |= errMaskTooManyTotal
		case need > 0 && w.flags != 0:
			// Assigned: the scheduler makes its results, for its targets
			// (TRANSITION_NO_NEW_RESULTS, TRANSITION_NONE).
		case need > 0:
			if err := s.createResults(ctx, tx, p, &w, names, min(need, w.maxTotal-nTotal)); err != nil {
				return err
			}
		}
	}
	if canonical == 0 && mask == 0 {
		// Nothing to decide until a result comes back (which sets
		// transition_time again).
		_, err := tx.ExecContext(ctx, `UPDATE workunit SET transition_time = ? WHERE id = ?`, boincdb.Never, wuID)
		return err
	}
	if _, err := tx.ExecContext(ctx, `UPDATE workunit SET canonical_resultid = ?, error_mask = ?,
		assimilate_state = ?, transition_time = ? WHERE id = ?`, canonical, mask, assimReady, boincdb.Never, wuID); err != nil {
		return err
	}
	if canonical != 0 {
		if err := validateAll(ctx, tx, wuID); err != nil {
			return err
		}
	}
	// Results not sent yet are no longer needed.
	if _, err := tx.ExecContext(ctx, `UPDATE result SET server_state = ?, outcome = ?
		WHERE workunitid = ? AND server_state = ?`, serverOver, outcomeDidntNeed, wuID, serverUnsent); err != nil {
		return err
	}
	if mask != 0 {
		s.log.Info("work unit failed", "wu", w.name, "error_mask", mask, "errors", nErr, "results", nTotal)
	} else {
		s.log.Info("work unit validated", "wu", w.name, "canonical_result", canonical)
	}
	return nil
}

// transitionDecided handles a WU already decided: once it is assimilated
// and none of its results is out any more, its files and its results'
// files are the file deleter's (file_delete_state ready).
func (s *sim) transitionDecided(ctx context.Context, tx *sql.Tx, w *wuState, outstanding int) error {
	if w.errorMask == 0 {
		// A result back after the decision is checked against the
		// canonical one; the stand-in's results always agree.
		if err := validateAll(ctx, tx, w.id); err != nil {
			return err
		}
	}
	if w.assimState == assimDone && outstanding == 0 && w.fileDeleteState == boincdb.FileDeleteInit {
		if _, err := tx.ExecContext(ctx, `UPDATE result SET file_delete_state = ? WHERE workunitid = ? AND file_delete_state = ?`,
			boincdb.FileDeleteReady, w.id, boincdb.FileDeleteInit); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE workunit SET file_delete_state = ? WHERE id = ?`, boincdb.FileDeleteReady, w.id); err != nil {
			return err
		}
	}
	_, err := tx.ExecContext(ctx, `UPDATE workunit SET transition_time = ? WHERE id = ?`, boincdb.Never, w.id)
	return err
}

// createResults creates n results <wu>_<k> the way the transitioner's
// create_result does, re-reading the result template from disk each time.
func (s *sim) createResults(ctx context.Context, tx *sql.Tx, p *boinc.Project, w *wuState, existing []string, n int) error {
	tmpl, err := readTemplate(filepath.Join(p.Dir, w.rtFile))
	if err != nil {
		return fmt.Errorf("failed to read result template file '%s': %w", w.rtFile, err)
	}
	next := 0
	for _, name := range existing {
		if k, err := strconv.Atoi(name[strings.LastIndexByte(name, '_')+1:]); err == nil && k >= next {
			next = k + 1
		}
	}
	for i := range n {
		name := w.name + "_" + strconv.Itoa(next+i)
		base := fmt.Sprintf("%s_r%d_", name, rand.Int64N(1<<31))
		doc, perr := processResultTemplate(tmpl, base, p.UploadURL)
		if perr != nil {
			// The transitioner only logs this and creates the result anyway.
			s.log.Error("process_result_template() error", "wu", w.name, "result", name, "err", perr)
		}
		if len(doc) > maxBlob {
			return fmt.Errorf("result XML doc is too long: %d bytes, max is %d", len(doc), maxBlob)
		}
		r := newResult(w, name, doc)
		if err := r.Insert(ctx, tx); err != nil {
			return fmt.Errorf("creating result %s: %w", name, err)
		}
	}
	return nil
}

// newResult is a result of w as the transitioner (or, for assigned jobs,
// the scheduler) creates it: unsent, with the work unit's priority, batch
// and app.
func newResult(w *wuState, name, doc string) *boincdb.Result {
	return &boincdb.Result{CreateTime: time.Now().Unix(), WorkunitID: w.id, ServerState: serverUnsent, Name: name,
		XMLDocIn: doc, Batch: w.batch, AppID: w.appID, Priority: w.priority, Random: rand.Int64N(1 << 31), SizeClass: -1}
}

// validateAll is the validator's verdict on a work unit with a canonical
// result: every successful result of it is valid (BOINC's validator marks
// each result of the quorum it compared, and each later one it compares
// with the canonical; the stand-in's results always agree).
func validateAll(ctx context.Context, tx *sql.Tx, wuID int64) error {
	_, err := tx.ExecContext(ctx, `UPDATE result SET validate_state = ? WHERE workunitid = ? AND server_state = ? AND outcome = ? AND validate_state = ?`,
		boincdb.ValidateValid, wuID, serverOver, outcomeSuccess, boincdb.ValidateInit)
	return err
}

// lockRow ends a read of the work unit's row that must lock it: two results
// of a quorum reported at once, or the transitioner beside a report, each
// deciding the work unit from a snapshot without the other's result, left
// it undecided for ever on MariaDB (SQLite has one writer at a time). The
// row locked first, the rest of the transaction reads what the other
// committed.
func (s *sim) lockRow() string {
	if s.db.Engine == sqldb.SQLite {
		return ""
	}
	return " FOR UPDATE"
}
