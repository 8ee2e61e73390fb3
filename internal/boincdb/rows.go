package boincdb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/rboinc/rboinc/internal/sqldb"
)

// Execer is a *sql.DB or a *sql.Tx.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Workunit is a row of BOINC's workunit table (mod_time aside).
type Workunit struct {
	ID                 int64
	CreateTime         int64
	AppID              int64
	Name               string
	XMLDoc             string
	Batch              int64
	RscFpopsEst        float64
	RscFpopsBound      float64
	RscMemoryBound     float64
	RscDiskBound       float64
	NeedValidate       int
	CanonicalResultID  int64
	CanonicalCredit    float64
	TransitionTime     int64
	DelayBound         int
	ErrorMask          int
	FileDeleteState    int
	AssimilateState    int
	HRClass            int
	Opaque             float64
	MinQuorum          int
	TargetNResults     int
	MaxErrorResults    int
	MaxTotalResults    int
	MaxSuccessResults  int
	ResultTemplateFile string
	Priority           int
	RscBandwidthBound  float64
	FilesetID          int64
	AppVersionID       int64
	TransitionerFlags  int
	SizeClass          int
	Keywords           string
	AppVersionNum      int
}

const workunitCols = `create_time, appid, name, xml_doc, batch, rsc_fpops_est, rsc_fpops_bound, rsc_memory_bound,
	rsc_disk_bound, need_validate, canonical_resultid, canonical_credit, transition_time, delay_bound, error_mask,
	file_delete_state, assimilate_state, hr_class, opaque, min_quorum, target_nresults, max_error_results,
	max_total_results, max_success_results, result_template_file, priority, rsc_bandwidth_bound, fileset_id,
	app_version_id, transitioner_flags, size_class, keywords, app_version_num`

func (w *Workunit) values() []any {
	return []any{w.CreateTime, w.AppID, w.Name, w.XMLDoc, w.Batch, w.RscFpopsEst, w.RscFpopsBound, w.RscMemoryBound,
		w.RscDiskBound, w.NeedValidate, w.CanonicalResultID, w.CanonicalCredit, w.TransitionTime, w.DelayBound, w.ErrorMask,
		w.FileDeleteState, w.AssimilateState, w.HRClass, w.Opaque, w.MinQuorum, w.TargetNResults, w.MaxErrorResults,
		w.MaxTotalResults, w.MaxSuccessResults, w.ResultTemplateFile, w.Priority, w.RscBandwidthBound, w.FilesetID,
		w.AppVersionID, w.TransitionerFlags, w.SizeClass, w.Keywords, w.AppVersionNum}
}

// Insert adds w, every column named, and sets w.ID.
func (w *Workunit) Insert(ctx context.Context, ex Execer) error {
	vals := w.values()
	res, err := ex.ExecContext(ctx, "INSERT INTO workunit ("+workunitCols+") VALUES "+inList(len(vals)), vals...)
	if err != nil {
		return err
	}
	w.ID, err = res.LastInsertId()
	return err
}

// Replace overwrites the row with w.ID (create_work --wu_id); it reports
// whether there was one.
func (w *Workunit) Replace(ctx context.Context, ex Execer) (bool, error) {
	names := strings.Split(workunitCols, ",")
	for i := range names {
		names[i] = strings.TrimSpace(names[i]) + " = ?"
	}
	res, err := ex.ExecContext(ctx, "UPDATE workunit SET "+strings.Join(names, ", ")+" WHERE id = ?", append(w.values(), w.ID)...)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// Result is a row of BOINC's result table (mod_time aside).
type Result struct {
	ID                 int64
	CreateTime         int64
	WorkunitID         int64
	ServerState        int
	Outcome            int
	ClientState        int
	HostID             int64
	UserID             int64
	ReportDeadline     int64
	SentTime           int64
	ReceivedTime       int64
	Name               string
	CPUTime            float64
	XMLDocIn           string
	XMLDocOut          string
	StderrOut          string
	Batch              int64
	FileDeleteState    int
	ValidateState      int
	ClaimedCredit      float64
	GrantedCredit      float64
	Opaque             float64
	Random             int64
	AppVersionNum      int
	AppID              int64
	ExitStatus         int
	TeamID             int64
	Priority           int
	ElapsedTime        float64
	FlopsEstimate      float64
	AppVersionID       int64
	RuntimeOutlier     int
	SizeClass          int
	PeakWorkingSetSize float64
	PeakSwapSize       float64
	PeakDiskUsage      float64
}

const resultCols = `create_time, workunitid, server_state, outcome, client_state, hostid, userid, report_deadline,
	sent_time, received_time, name, cpu_time, xml_doc_in, xml_doc_out, stderr_out, batch, file_delete_state,
	validate_state, claimed_credit, granted_credit, opaque, random, app_version_num, appid, exit_status, teamid,
	priority, elapsed_time, flops_estimate, app_version_id, runtime_outlier, size_class, peak_working_set_size,
	peak_swap_size, peak_disk_usage`

// Insert adds r, every column named, and sets r.ID.
func (r *Result) Insert(ctx context.Context, ex Execer) error {
	vals := []any{r.CreateTime, r.WorkunitID, r.ServerState, r.Outcome, r.ClientState, r.HostID, r.UserID, r.ReportDeadline,
		r.SentTime, r.ReceivedTime, r.Name, r.CPUTime, r.XMLDocIn, r.XMLDocOut, r.StderrOut, r.Batch, r.FileDeleteState,
		r.ValidateState, r.ClaimedCredit, r.GrantedCredit, r.Opaque, r.Random, r.AppVersionNum, r.AppID, r.ExitStatus, r.TeamID,
		r.Priority, r.ElapsedTime, r.FlopsEstimate, r.AppVersionID, r.RuntimeOutlier, r.SizeClass, r.PeakWorkingSetSize,
		r.PeakSwapSize, r.PeakDiskUsage}
	res, err := ex.ExecContext(ctx, "INSERT INTO result ("+resultCols+") VALUES "+inList(len(vals)), vals...)
	if err != nil {
		return err
	}
	r.ID, err = res.LastInsertId()
	return err
}

// AppID looks an app up by name; found is false when it does not exist.
func AppID(ctx context.Context, ex Execer, name string) (id int64, found bool, err error) {
	err = ex.QueryRowContext(ctx, "SELECT id FROM app WHERE name = ?", name).Scan(&id)
	if err == sql.ErrNoRows {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("looking up app %s: %w", name, err)
	}
	return id, true, nil
}

// AddApp inserts an app (what xadd or appmgr do on a real project) and
// returns its id; an app of that name already there is kept.
func AddApp(ctx context.Context, ex Execer, name string) (int64, error) {
	if id, ok, err := AppID(ctx, ex, name); ok || err != nil {
		return id, err
	}
	if _, err := ex.ExecContext(ctx, "INSERT INTO app (create_time, name, user_friendly_name) VALUES (?, ?, ?)", now(), name, name); err != nil && !sqldb.IsDuplicate(err) {
		return 0, fmt.Errorf("adding app %s: %w", name, err)
	}
	id, _, err := AppID(ctx, ex, name)
	return id, err
}
