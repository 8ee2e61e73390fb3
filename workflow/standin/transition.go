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

	"github.com/rboinc/rboinc/workflow/boinc"
)

// transitionNew gives the WUs create_work made their first results.
func (s *sim) transitionNew(ctx context.Context, p *boinc.Project) error {
	rows, err := s.db.QueryContext(ctx, `SELECT id, name FROM workunit WHERE sim_state = ?
		ORDER BY priority DESC, id LIMIT 500`, simNew)
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
		// A WU whose result template is unreadable stays new and is tried
		// again, as the transitioner does; say so once.
		s.report("wu:"+w.name, err, "cannot create results for work unit "+w.name)
	}
	return nil
}

// wuState is what the transitioner reads of a workunit.
type wuState struct {
	id                                              int64
	name, rtFile                                    string
	priority                                        int
	minQuorum, target, maxErr, maxTotal, maxSuccess int
	errorMask, simState                             int
	flags                                           int // transitioner_flags: 0, or an assigned job's
}

// transition is the transitioner and validator for one WU: it decides the WU
// (canonical result, or an error_mask) or creates the results it still needs.
func (s *sim) transition(ctx context.Context, tx *sql.Tx, p *boinc.Project, wuID int64) error {
	var w wuState
	err := tx.QueryRowContext(ctx, `SELECT id, name, result_template_file, priority, min_quorum,
		target_nresults, max_error_results, max_total_results, max_success_results, error_mask, sim_state,
		transitioner_flags
		FROM workunit WHERE id = ?`, wuID).Scan(&w.id, &w.name, &w.rtFile, &w.priority, &w.minQuorum,
		&w.target, &w.maxErr, &w.maxTotal, &w.maxSuccess, &w.errorMask, &w.simState, &w.flags)
	if err != nil {
		return fmt.Errorf("reading work unit %d: %w", wuID, err)
	}
	if w.simState == simDecided {
		return nil
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
		if w.simState == simNew {
			_, err := tx.ExecContext(ctx, `UPDATE workunit SET sim_state = ? WHERE id = ?`, simActive, wuID)
			return err
		}
		return nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE workunit SET canonical_resultid = ?, error_mask = ?,
		assimilate_state = ?, sim_state = ? WHERE id = ?`, canonical, mask, assimReady, simDecided, wuID); err != nil {
		return err
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
		if _, err := tx.ExecContext(ctx, `INSERT INTO result (create_time, workunitid, name, server_state,
			priority, xml_doc_in) VALUES (?, ?, ?, ?, ?, ?)`,
			time.Now().Unix(), w.id, name, serverUnsent, w.priority, doc); err != nil {
			return fmt.Errorf("creating result %s: %w", name, err)
		}
	}
	return nil
}
