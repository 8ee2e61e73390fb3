package wucreate

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/rboinc/rboinc/internal/boincdb"
)

// Row is what create_work writes into the workunit table.
type Row struct {
	ID                 int64 // --wu_id: update this row instead of inserting
	Name, App          string
	XMLDoc             string
	Batch, Priority    int
	RscFpopsEst        float64
	RscFpopsBound      float64
	RscMemoryBound     float64
	RscDiskBound       float64
	RscBandwidthBound  float64
	DelayBound         int
	MinQuorum          int
	TargetNResults     int
	MaxErrorResults    int
	MaxTotalResults    int
	MaxSuccessResults  int
	SizeClass          int
	HRClass            int
	AppVersionNum      int
	TransitionerFlags  int
	Credit             float64
	Keywords           string
	ResultTemplateFile string
	CreateTime         int64
	Assign             *Assignment // targeted or broadcast job: its assignment row
}

// Assignment is create_work's --target_*/--broadcast* for one job.
type Assignment struct {
	TargetType, TargetID int
	Multi                bool
}

// DefaultRow holds create_work's defaults (replication all 1 since late 2023).
func DefaultRow() Row {
	return Row{
		RscFpopsEst: 3600e9, RscFpopsBound: 86400e9, RscMemoryBound: 5e8, RscDiskBound: 1e9,
		DelayBound: 604800, MinQuorum: 1, TargetNResults: 1, MaxErrorResults: 1,
		MaxTotalResults: 1, MaxSuccessResults: 1, SizeClass: -1,
	}
}

// maxNameLen is the width of BOINC's workunit.name column.
const maxNameLen = 191

// row is the workunit row create_work writes: BOINC's columns, with a
// transition_time of now so that the transitioner takes it up, or never
// for an assigned job (transitioner_flags set), whose results the
// scheduler makes (backend_lib.cpp; e2e/realboinc stage 9 saw it).
func (w *Row) row(appID int64) *boincdb.Workunit {
	transition := w.CreateTime
	if w.TransitionerFlags != 0 {
		transition = boincdb.Never
	}
	return &boincdb.Workunit{ID: w.ID, CreateTime: w.CreateTime, AppID: appID, Name: w.Name, XMLDoc: w.XMLDoc,
		Batch: int64(w.Batch), RscFpopsEst: w.RscFpopsEst, RscFpopsBound: w.RscFpopsBound,
		RscMemoryBound: w.RscMemoryBound, RscDiskBound: w.RscDiskBound, RscBandwidthBound: w.RscBandwidthBound,
		TransitionTime: transition, DelayBound: w.DelayBound, MinQuorum: w.MinQuorum, TargetNResults: w.TargetNResults,
		MaxErrorResults: w.MaxErrorResults, MaxTotalResults: w.MaxTotalResults, MaxSuccessResults: w.MaxSuccessResults,
		ResultTemplateFile: w.ResultTemplateFile, Priority: w.Priority, SizeClass: w.SizeClass, HRClass: w.HRClass,
		AppVersionNum: w.AppVersionNum, CanonicalCredit: w.Credit, Keywords: w.Keywords, TransitionerFlags: w.TransitionerFlags}
}

// ErrTooLong mimics MySQL's strict-mode refusal of an over-long name.
type ErrTooLong struct{ Name string }

func (e ErrTooLong) Error() string { return "Data too long for column 'name' at row 1" }

// Store inserts the row, or with --wu_id replaces the row with that id.
func (w *Row) Store(ctx context.Context, tx *sql.Tx, appID int64) error {
	if len(w.Name) > maxNameLen {
		return ErrTooLong{w.Name}
	}
	r := w.row(appID)
	if w.ID != 0 {
		found, err := r.Replace(ctx, tx)
		if err != nil {
			return err
		}
		if !found {
			return fmt.Errorf("no workunit with id %d", w.ID)
		}
		return nil
	}
	if err := r.Insert(ctx, tx); err != nil {
		return err
	}
	if w.ID = r.ID; w.Assign == nil {
		return nil
	}
	return boincdb.InsertAssignments(ctx, tx, []boincdb.Assignment{w.assignment()})
}

// assignment is the assignment row of a targeted or broadcast job.
func (w *Row) assignment() boincdb.Assignment {
	return boincdb.Assignment{CreateTime: w.CreateTime, TargetID: w.Assign.TargetID, TargetType: w.Assign.TargetType,
		Multi: w.Assign.Multi, WorkunitID: w.ID}
}
