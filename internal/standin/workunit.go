package standin

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/rboinc/rboinc/internal/boincdb"
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

// row is the workunit row create_work writes: BOINC's columns, with a
// transition_time of now so that the transitioner takes it up.
func (w *wuRow) row(appID int64) *boincdb.Workunit {
	return &boincdb.Workunit{ID: w.id, CreateTime: w.createTime, AppID: appID, Name: w.name, XMLDoc: w.xmlDoc,
		Batch: int64(w.batch), RscFpopsEst: w.rscFpopsEst, RscFpopsBound: w.rscFpopsBound,
		RscMemoryBound: w.rscMemoryBound, RscDiskBound: w.rscDiskBound, RscBandwidthBound: w.rscBandwidthBound,
		TransitionTime: w.createTime, DelayBound: w.delayBound, MinQuorum: w.minQuorum, TargetNResults: w.targetNResults,
		MaxErrorResults: w.maxErrorResults, MaxTotalResults: w.maxTotalResults, MaxSuccessResults: w.maxSuccessResults,
		ResultTemplateFile: w.resultTemplateFile, Priority: w.priority, SizeClass: w.sizeClass, HRClass: w.hrClass,
		AppVersionNum: w.appVersionNum, CanonicalCredit: w.credit, Keywords: w.keywords, TransitionerFlags: w.transitionerFlags}
}

// errTooLong mimics MySQL's strict-mode refusal of an over-long name.
type errTooLong struct{ name string }

func (e errTooLong) Error() string { return "Data too long for column 'name' at row 1" }

// store inserts the row, or with --wu_id replaces the row with that id.
func (w *wuRow) store(ctx context.Context, tx *sql.Tx, appID int64) error {
	if len(w.name) > maxNameLen {
		return errTooLong{w.name}
	}
	r := w.row(appID)
	if w.id != 0 {
		found, err := r.Replace(ctx, tx)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("no workunit with id %d", w.id)
		}
		return nil
	}
	if err := r.Insert(ctx, tx); err != nil {
		return err
	}
	if w.id = r.ID; w.assign == nil {
		return nil
	}
	multi := 0
	if w.assign.multi {
		multi = 1
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO assignment (create_time, target_id, target_type, multi, workunitid, resultid)
		VALUES (?, ?, ?, ?, ?, 0)`, w.createTime, w.assign.targetID, w.assign.targetType, multi, w.id)
	return err
}
