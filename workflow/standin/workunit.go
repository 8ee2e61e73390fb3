package standin

import (
	"context"
	"database/sql"
	"fmt"
)

// wuRow is what create_work writes into the workunit table.
type wuRow struct {
	id                 int64 // --wu_id: update this row instead of inserting
	name, app          string
	xmlDoc             string
	batch, priority    int
	rscFpopsEst        float64
	rscFpopsBound      float64
	rscMemoryBound     float64
	rscDiskBound       float64
	rscBandwidthBound  float64
	delayBound         int
	minQuorum          int
	targetNResults     int
	maxErrorResults    int
	maxTotalResults    int
	maxSuccessResults  int
	sizeClass          int
	hrClass            int
	appVersionNum      int
	transitionerFlags  int
	credit             float64
	keywords           string
	resultTemplateFile string
	createTime         int64
	assign             *assignment // targeted or broadcast job: its assignment row
}

// assignment is create_work's --target_*/--broadcast* for one job.
type assignment struct {
	targetType, targetID int
	multi                bool
}

// defaultRow holds create_work's defaults (replication all 1 since late 2023).
func defaultRow() wuRow {
	return wuRow{
		rscFpopsEst: 3600e9, rscFpopsBound: 86400e9, rscMemoryBound: 5e8, rscDiskBound: 1e9,
		delayBound: 604800, minQuorum: 1, targetNResults: 1, maxErrorResults: 1,
		maxTotalResults: 1, maxSuccessResults: 1, sizeClass: -1,
	}
}

// maxNameLen is the width of BOINC's workunit.name column.
const maxNameLen = 191

const wuColumns = `create_time, appname, name, xml_doc, batch, rsc_fpops_est, rsc_fpops_bound,
	rsc_memory_bound, rsc_disk_bound, rsc_bandwidth_bound, delay_bound, min_quorum, target_nresults,
	max_error_results, max_total_results, max_success_results, result_template_file, priority,
	size_class, hr_class, app_version_num, canonical_credit, keywords, transitioner_flags`

func (w *wuRow) values() []any {
	return []any{w.createTime, w.app, w.name, w.xmlDoc, w.batch, w.rscFpopsEst, w.rscFpopsBound,
		w.rscMemoryBound, w.rscDiskBound, w.rscBandwidthBound, w.delayBound, w.minQuorum, w.targetNResults,
		w.maxErrorResults, w.maxTotalResults, w.maxSuccessResults, w.resultTemplateFile, w.priority,
		w.sizeClass, w.hrClass, w.appVersionNum, w.credit, w.keywords, w.transitionerFlags}
}

// errTooLong mimics MySQL's strict-mode refusal of an over-long name.
type errTooLong struct{ name string }

func (e errTooLong) Error() string { return "Data too long for column 'name' at row 1" }

// store inserts the row, or with --wu_id replaces the row with that id.
func (w *wuRow) store(ctx context.Context, tx *sql.Tx) error {
	if len(w.name) > maxNameLen {
		return errTooLong{w.name}
	}
	if w.id != 0 {
		res, err := tx.ExecContext(ctx, `UPDATE workunit SET (`+wuColumns+`) =
			(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) WHERE id = ?`, append(w.values(), w.id)...)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return fmt.Errorf("no workunit with id %d", w.id)
		}
		return nil
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO workunit (`+wuColumns+`) VALUES
		(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, w.values()...)
	if err != nil {
		return err
	}
	if w.id, err = res.LastInsertId(); err != nil || w.assign == nil {
		return err
	}
	multi := 0
	if w.assign.multi {
		multi = 1
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO assignment (create_time, target_id, target_type, multi, workunitid)
		VALUES (?, ?, ?, ?, ?)`, w.createTime, w.assign.targetID, w.assign.targetType, multi, w.id)
	return err
}
