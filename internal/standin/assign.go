package standin

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
)

// The stand-in's volunteer is BOINC user 1 on host 1, in no team: a fresh
// project's first account and host.
const (
	volunteerUser = 1
	volunteerHost = 1
)

// assignSeq numbers the results of assigned jobs, as the scheduler's
// static seqno does.
var assignSeq atomic.Int64

// assignJobs is the scheduler's assigned-work pass for the volunteer:
// with <enable_assignment> in config.xml (read at every pass, as the
// scheduler reads it at every request), each targeted job whose target the
// volunteer is, and with <enable_assignment_multi> each broadcast job it
// is a target of, that it has no instance of yet, gets a result named
// <wu>_<pid>_<time>_<seq> as BOINC's sched_assign names them. Without
// them, assigned jobs are never sent.
func (s *sim) assignJobs(ctx context.Context, p *boinc.Project) error {
	if !p.EnableAssignment && !p.EnableAssignmentMulti {
		return nil
	}
	type job struct {
		asgID, wuID       int64
		appID, batch      int64
		wuName, rtFile    string
		priority, target  int
		errorMask, nTotal int
	}
	var jobs []job
	err := inTx(ctx, s.db, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT a.id, w.id, w.appid, w.batch, w.name, w.result_template_file, w.priority,
			w.target_nresults, w.error_mask, (SELECT count(*) FROM result r WHERE r.workunitid = w.id)
			FROM assignment a JOIN workunit w ON w.id = a.workunitid
			WHERE ((a.target_type = ? AND a.target_id = ?) OR (a.target_type = ? AND a.target_id = ?) OR a.target_type = ?)
			AND ((a.multi = 0 AND ?) OR (a.multi != 0 AND ?))
			AND w.error_mask = 0 AND w.canonical_resultid = 0 ORDER BY w.priority DESC, w.id LIMIT 500`,
			assignUser, volunteerUser, assignHost, volunteerHost, assignNone, p.EnableAssignment, p.EnableAssignmentMulti)
		if err != nil {
			return err
		}
		for rows.Next() {
			var j job
			if err := rows.Scan(&j.asgID, &j.wuID, &j.appID, &j.batch, &j.wuName, &j.rtFile, &j.priority, &j.target, &j.errorMask, &j.nTotal); err != nil {
				rows.Close()
				return err
			}
			// At most one instance per host: every result here is the
			// volunteer's.
			if j.nTotal == 0 {
				jobs = append(jobs, j)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, j := range jobs {
			tmpl, err := readTemplate(filepath.Join(p.Dir, j.rtFile))
			if err != nil {
				return fmt.Errorf("assigned work unit %s: failed to read result template file '%s': %w", j.wuName, j.rtFile, err)
			}
			name := j.wuName + "_" + strconv.Itoa(os.Getpid()) + "_" + strconv.FormatInt(time.Now().Unix(), 10) + "_" + strconv.FormatInt(assignSeq.Add(1)-1, 10)
			doc, perr := processResultTemplate(tmpl, fmt.Sprintf("%s_r%d_", name, rand.Int64N(1<<31)), p.UploadURL)
			if perr != nil {
				s.log.Error("process_result_template() error", "wu", j.wuName, "result", name, "err", perr)
			}
			r := newResult(&wuState{id: j.wuID, appID: j.appID, batch: j.batch, priority: j.priority}, name, doc)
			if err := r.Insert(ctx, tx); err != nil {
				return fmt.Errorf("creating result %s: %w", name, err)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE assignment SET resultid = ? WHERE id = ? AND multi = 0`, r.ID, j.asgID); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && len(jobs) > 0 {
		s.log.Info("sent assigned work", "results", len(jobs))
	}
	return err
}
