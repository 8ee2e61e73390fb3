// Package wire holds the JSON types and paths of the rboinc HTTP API. The
// clients and the server share these types and nothing else.
//
// All API paths live under APIPrefix, below the base URL the scientist gives
// (RBOINC_URL, e.g. http://host:8080/rboinc_cgi). Every request except the
// liveness probe (GET on the base URL) is authenticated: HTTP Basic with the
// user name and the token as password, or "Authorization: Bearer TOKEN".
// Errors come back with a non-2xx status and an Error body.
package wire

// Paths, relative to the base URL (which ends in /rboinc_cgi).
const (
	APIPrefix   = "/api/v1"
	PathQueues  = APIPrefix + "/queues"       // GET list; GET /queues/{name}
	PathMissing = APIPrefix + "/pool/missing" // POST MissingRequest -> MissingResponse
	PathUploads = APIPrefix + "/uploads"      // POST -> UploadResponse; DELETE PathUploads/<id> -> CountResponse
	PathSubmit  = APIPrefix + "/submit"       // POST SubmitRequest -> SubmitResponse
	PathStatus  = APIPrefix + "/status"       // GET ?group=G[&name=N][&boinc=1] -> StatusResponse
	// PathGridStatus: GET ?[group=G] -> GridStatusResponse
	PathGridStatus = APIPrefix + "/gridstatus"
	PathStop       = APIPrefix + "/stop"     // POST ChainRef -> CountResponse
	PathResume     = APIPrefix + "/resume"   // POST ResumeRequest -> CountResponse
	PathExtend     = APIPrefix + "/extend"   // POST ExtendRequest -> CountResponse
	PathAbort      = APIPrefix + "/abort"    // POST ChainRef -> CountResponse
	PathPriority   = APIPrefix + "/priority" // POST PriorityRequest -> CountResponse
	PathEvents     = APIPrefix + "/events"   // GET ?after=ID&wait=30s -> EventsResponse
	PathPurge      = APIPrefix + "/purge"    // POST ChainRef -> CountResponse
	PathResults    = APIPrefix + "/results"  // GET ?group=G[&name=N][&consumer=C] -> ResultsResponse
	PathFiles      = APIPrefix + "/files"    // GET /files/{group}/{file}[?consumer=C] -> bytes
	PathAck        = APIPrefix + "/ack"      // POST AckRequest -> CountResponse
	// PathFilesBulk: POST BulkRequest -> a tar stream of result files (see
	// BulkRequest; docs/scientist.md). An older server answers 404 or 405.
	PathFilesBulk = APIPrefix + "/files/bulk"
	PathWhoAmI    = APIPrefix + "/whoami" // GET -> WhoAmI
	// Batches (made by PathSubmit with SubmitRequest.Batch).
	PathBatches     = APIPrefix + "/batches"        // GET -> BatchesResponse (every batch, no jobs)
	PathBatchQuery  = APIPrefix + "/batches/query"  // POST BatchQuery -> BatchesResponse
	PathBatchOutput = APIPrefix + "/batches/output" // GET ?job=J -> JobOutput
	PathBatchAbort  = APIPrefix + "/batches/abort"  // POST JobsRef -> CountResponse
	PathBatchRetire = APIPrefix + "/batches/retire" // POST BatchRef -> CountResponse
	PathBatchLease  = APIPrefix + "/batches/lease"  // POST BatchRef (Name, Lease) -> CountResponse
	// DAVPrefix is the WebDAV scratch area, on the same host as the API but
	// outside the base path: /DAV/<user>/<upload id>/<md5>.
	DAVPrefix = "/DAV/"
)

// HeaderAPIBase is sent with the 404 a server answers for a path outside
// its API: the API's base path (e.g. /rboinc_cgi), for clients to name the
// right URL.
const HeaderAPIBase = "X-Rboinc-API"

// AssignSelf as Options.AssignUserAll assigns the work to the submitter's
// own BOINC account (rboinc-submit -assign_user_all me).
const AssignSelf = -1

// PathSubmitInline is PathSubmit with contents in the same body: the
// SubmitRequest as one line of JSON ending in '\n', then the bytes of each
// SubmitRequest.Inline content, in that order, back to back. Servers older
// than it answer 404 without a wire.Error.
const PathSubmitInline = APIPrefix + "/submit/inline" // POST -> SubmitResponse

// Error codes, in Error.Code.
const (
	CodeBadRequest      = "bad_request"          // 400: a field is invalid; Error says which
	CodeUnauthorized    = "unauthorized"         // 401
	CodeForbidden       = "forbidden"            // 403
	CodeNotFound        = "not_found"            // 404: no such chain, group or file
	CodeUnknownQueue    = "unknown_queue"        // 404: no such application queue
	CodeNameTaken       = "name_taken"           // 409: group/name already used
	CodeMissingContent  = "missing_content"      // 409: announced content is neither pooled nor uploaded
	CodeQuotaExceeded   = "quota_exceeded"       // 403 or 413: a per-user limit would be passed; Error says which
	CodeTooLarge        = "too_large"            // 413: an upload is larger than the server accepts
	CodeInternal        = "internal"             // 500
	CodeUploadOffset    = "upload_offset"        // 409: a resumed upload's piece does not start where the server's part ends; ask again (HEAD)
	CodeTooManyRequests = "too_many_requests"    // 429: the user has as many requests in progress as the server takes; retry later
	CodeNoSpace         = "insufficient_storage" // 507: the server's disk is full; nothing was kept, try again later
	CodeOtherConsumer   = "other_consumer"       // 409: the group's results go to another consumer (a master's tag, a batch's group, rboinc-retrieve's)
	// CodeBadNotifyTarget (400): a notification target the user may not
	// name (an inner address, an unconfirmed e-mail address); the clients
	// exit 2, as for a usage error.
	CodeBadNotifyTarget = "bad_notify_target"
)

// CodeQueueMisconfigured (500): the queue's templates or BOINC application
// are wrong on the server, which lasts until its administrator fixes them:
// not worth retrying, unlike a 503. Error names the queue; the server's
// log has the detail.
const CodeQueueMisconfigured = "queue_misconfigured"

// Error is the body of every non-2xx answer.
type Error struct {
	Error string `json:"error"`
	Code  string `json:"code"`
	// Missing, in a CodeMissingContent answer to PathSubmit or
	// PathSubmitInline, lists every content (MD5 hex) the request named
	// and the server lacks for this user, when there are at most
	// MaxMissingListed. A client may so send a submission without asking
	// PathMissing first, and upload only when told. Servers older than
	// it leave it out: ask PathMissing then.
	Missing []string `json:"missing,omitempty"`
}

// WhoAmI answers PathWhoAmI.
type WhoAmI struct {
	User string `json:"user"`
}

// QueueSummary is one entry of GET PathQueues.
type QueueSummary struct {
	Name        string `json:"name"`
	Application string `json:"application"`
	Description string `json:"description"`
}

// Parameter is one input a scientist may (or must) give: -<Name> FILE.
type Parameter struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Optional    bool   `json:"optional"`
	OpenName    string `json:"open_name"`
}

// Output is one output file of a queue's result template.
type Output struct {
	Index    int      `json:"index"` // k of <OUTFILE_k/>; result files are <wu>_<k>
	OpenName string   `json:"open_name"`
	Aliases  []string `json:"aliases,omitempty"`
	Chain    *int     `json:"chain,omitempty"` // input slot it feeds in the next step
}

// Queue answers GET PathQueues/{name}.
type Queue struct {
	Name        string      `json:"name"`
	Application string      `json:"application"`
	Description string      `json:"description"`
	Parameters  []Parameter `json:"parameters"`
	Outputs     []Output    `json:"outputs"`
	// Tries says how often a step runs before its chain fails (absent
	// from older servers).
	Tries *Tries `json:"tries,omitempty"`
}

// Tries are the server's retries of a failing step: BOINC sends each work
// unit again after an error result, up to MaxErrorResults error results
// (so MaxErrorResults+1 runs) and MaxTotalResults results in all; when BOINC
// gives up, rboinc makes the step again as a new work unit, up to
// MaxStepAttempts work units per step. A zero BOINC figure means the
// template's or BOINC's own default.
type Tries struct {
	MaxErrorResults int `json:"max_error_results"`
	MaxTotalResults int `json:"max_total_results"`
	MaxStepAttempts int `json:"max_step_attempts"`
}

// MissingRequest asks which of these contents (MD5 hex) the server lacks.
type MissingRequest struct {
	MD5s []string `json:"md5s"`
}

// MissingResponse lists the subset of MissingRequest.MD5s to upload.
type MissingResponse struct {
	Missing []string `json:"missing"`
}

// UploadResponse names a fresh, empty WebDAV collection of the caller's.
// Files are PUT to DAVPath + <md5 hex>, then named in SubmitRequest.Upload.
type UploadResponse struct {
	ID      string `json:"id"`
	DAVPath string `json:"dav_path"` // absolute path on the server, ends in '/'
}

// FileRef names one input by content.
type FileRef struct {
	MD5  string `json:"md5"`
	Size int64  `json:"size"`
}

// ChainSpec is one chain to create: its name and its inputs by parameter
// name. Parameters left out fall back to the server's defaults if optional.
type ChainSpec struct {
	Name  string             `json:"name"`
	Files map[string]FileRef `json:"files"`
	// Args is the application's command line at every step of the chain
	// (words joined by spaces; none may hold a double quote, a newline, or <, > or &).
	Args []string `json:"args,omitempty"`
	// Job is the chain's job name in SubmitRequest.Batch (required there):
	// printable ASCII, unique among the user's jobs.
	Job string `json:"job,omitempty"`
}

// Options are the submission options of the original boinc_submit.
// Zero means "not given": the template's or BOINC's value applies.
type Options struct {
	NumSteps       int     `json:"num_steps,omitempty"` // default 1
	Priority       *int    `json:"priority,omitempty"`  // default 1; falls by one per step
	FpopsEst       float64 `json:"fpops_est,omitempty"`
	FpopsBound     float64 `json:"fpops_bound,omitempty"`
	MemoryBound    float64 `json:"memory_bound,omitempty"`
	TargetNResults int     `json:"target_nresults,omitempty"`
	MinQuorum      int     `json:"min_quorum,omitempty"`
	Batch          int64   `json:"batch,omitempty"`
	AssignUserAll  int64   `json:"assign_user_all,omitempty"` // AssignSelf: the submitter's own linked BOINC account
	DryRun         bool    `json:"dry_run,omitempty"`
	// MaxAttempts is the work units each step may take (0: the server's
	// max_step_attempts, which also bounds it).
	MaxAttempts int `json:"max_attempts,omitempty"`
	// Notify registers webhook URLs or e-mail addresses for the events of
	// the submission's group (chain done, chain failed, group done).
	Notify []string `json:"notify,omitempty"`
}

// SubmitRequest creates one or many chains of one queue in one group.
type SubmitRequest struct {
	Queue   string      `json:"queue"`
	Group   string      `json:"group"`
	Upload  string      `json:"upload,omitempty"` // UploadResponse.ID holding the missing contents
	Options Options     `json:"options"`
	Chains  []ChainSpec `json:"chains"`
	// Inline lists the missing contents that follow the request in the
	// body of PathSubmitInline (empty on PathSubmit): many small files in
	// one request instead of a PUT each.
	Inline []FileRef `json:"inline,omitempty"`
	// Batch, when set, makes the chains one batch of that name (the group
	// must be new and is the batch's alone), each chain a job (ChainSpec.Job).
	Batch *BatchSpec `json:"batch,omitempty"`
	// Consumer is who takes the chains' results: "" (rboinc-retrieve, and
	// every client that predates consumers) or ConsumerMaster. All the
	// live chains of a group have one consumer; a batch's is ConsumerBatch.
	Consumer string `json:"consumer,omitempty"`
}

// Consumers: who takes a chain's results. Every result has exactly one:
// the listing (PathResults), download (PathFiles) and acknowledgement
// (PathAck) of a result name the consumer (query parameter or field
// "consumer"; none is ConsumerRetriever) and the server refuses any other.
const (
	ConsumerRetriever = ""       // rboinc-retrieve, its -follow, the Perl clients
	ConsumerMaster    = "master" // a workflow/master program: the group is its tag
	ConsumerBatch     = "batch"  // the GAHP: the group is a batch's
)

// BatchSpec names a batch made by a submission.
type BatchSpec struct {
	Name  string `json:"name"`            // printable ASCII, unique among the user's batches
	Lease int64  `json:"lease,omitempty"` // absolute, seconds since the epoch; 0: none
}

// ChainCreated reports one created (or, in a dry run, checked) chain.
type ChainCreated struct {
	Name    string `json:"name"`
	FirstWU string `json:"first_wu"`
	// Existing: made by an earlier, identical submission, not by this one.
	Existing bool `json:"existing,omitempty"`
}

// UploadPart answers a resumable upload's HEAD and PUT at
// PathUploads/<id>/<md5>: how many bytes of the content the server holds
// (also in the Upload-Offset header), and whether it is whole and in place.
// A PUT sends the rest from that offset, with Content-Range: bytes
// START-END/TOTAL.
type UploadPart struct {
	Have     int64 `json:"have"`
	Complete bool  `json:"complete"`
}

// SubmitResponse answers PathSubmit.
type SubmitResponse struct {
	DryRun bool           `json:"dry_run,omitempty"`
	Chains []ChainCreated `json:"chains"`
	// AlreadySubmitted: every chain of the request existed already, made
	// by an identical submission (a retry after a lost answer); nothing new
	// was created.
	AlreadySubmitted bool `json:"already_submitted,omitempty"`
}

// ChainRef names a group, or one chain in it when Name is set.
type ChainRef struct {
	Group string `json:"group"`
	Name  string `json:"name,omitempty"`
	// Cancel, with PathStop, also cancels the chains' work units in BOINC.
	Cancel bool `json:"cancel,omitempty"`
}

// PriorityRequest gives the chains of Group (or chain Name) a new base
// priority: step k's work unit gets Priority-k, as at submission.
type PriorityRequest struct {
	ChainRef
	Priority int `json:"priority"`
}

// ResumeRequest resumes the chains of Group (or chain Name), at PathResume.
// Files, when given, replace inputs of the step each chain restarts, by
// parameter name as in ChainSpec.Files (an input no output feeds keeps the
// new content for the later steps too); contents the server lacks go into the upload
// collection Upload first, as for a submission.
type ResumeRequest struct {
	ChainRef
	Files  map[string]FileRef `json:"files,omitempty"`
	Upload string             `json:"upload,omitempty"`
}

// ExtendRequest adds Steps steps to the chains of Group (or chain Name).
type ExtendRequest struct {
	ChainRef
	Steps int `json:"steps"`
}

// CountResponse says how many things an action touched.
type CountResponse struct {
	Count   int    `json:"count"`
	Message string `json:"message,omitempty"`
	// Failed says what of the change the server could not do (BOINC
	// refused to cancel work units): the change is then a failure, and
	// the clients exit non-zero. Message says it too, for older clients.
	Failed string `json:"failed,omitempty"`
}

// Chain states.
const (
	StateRunning = "running"
	StateDone    = "done"
	StateFailed  = "failed"
	StateStopped = "stopped"
	StateAborted = "aborted"
	StateQueued  = "queued"
)

// ChainStatus is one chain's progress.
type ChainStatus struct {
	Group     string `json:"group"`
	Name      string `json:"name"`
	Queue     string `json:"queue"`
	State     string `json:"state"`
	StepsDone int    `json:"steps_done"`
	NumSteps  int    `json:"num_steps"`
	Error     string `json:"error,omitempty"`
	// Reason is why the chain is in its state (as Error, also when it is
	// no failure); WU the work unit of its current (or last) step,
	// Attempts that step's work units so far.
	Reason   string `json:"reason,omitempty"`
	WU       string `json:"wu,omitempty"`
	Attempts int    `json:"attempts,omitempty"`
	// Boinc is what BOINC does with the chain's current work unit (with
	// boinc=1, for running chains, when BOINC's database answers).
	Boinc *ChainBoinc `json:"boinc,omitempty"`
	// BoincState is where a running chain's current work unit is in
	// BOINC (BoincUnsent, BoincInProgress, BoincValidating), BoincSince
	// since when it runs on a volunteer (Unix seconds), when BOINC's
	// database answers; the state stays "running" for older clients.
	BoincState string `json:"boinc_state,omitempty"`
	BoincSince int64  `json:"boinc_since,omitempty"`
	// StepInFlight is set on a stopped chain whose step is still in BOINC
	// (or being made): -stop lets it run to its end, and its outputs are
	// still to come; its group is not finished before they are.
	StepInFlight bool `json:"step_in_flight,omitempty"`
}

// ChainBoinc is a running chain's current work unit in BOINC.
type ChainBoinc struct {
	WU      string        `json:"wu"`
	Results []BoincResult `json:"results"`
}

// BoincResult is one result of a work unit, as BOINC's database has it.
type BoincResult struct {
	Name         string  `json:"name"`
	State        string  `json:"state"` // unsent, in progress, success, error, not needed, couldn't send, over
	HostID       int64   `json:"host_id,omitempty"`
	ExitStatus   int     `json:"exit_status,omitempty"` // the host's error code
	SentTime     int64   `json:"sent_time,omitempty"`
	ReceivedTime int64   `json:"received_time,omitempty"`
	ElapsedTime  float64 `json:"elapsed_s,omitempty"`
}

// BoincCounts is what BOINC did with a set of work units: their results by
// state, and how long the decided ones took.
type BoincCounts struct {
	WorkUnits  int `json:"work_units"` // of the set, those BOINC holds
	Unsent     int `json:"unsent"`
	InProgress int `json:"in_progress"`
	Success    int `json:"success"` // results over with outcome success
	Error      int `json:"error"`   // results over with a client error, no reply or a validate error
	Decided    int `json:"decided"` // work units with a canonical result or an error mask
	// Turnaround of the work units with a canonical result: from the work
	// unit's creation to the canonical result's arrival, in seconds.
	TurnaroundAvg float64 `json:"turnaround_avg_s,omitempty"`
	TurnaroundMax int64   `json:"turnaround_max_s,omitempty"`
	// Priority range of the work units not assimilated yet.
	PriorityMin *int `json:"priority_min,omitempty"`
	PriorityMax *int `json:"priority_max,omitempty"`
}

// Event is one chain transition (store.Ev* types).
type Event struct {
	ID     int64  `json:"id"`
	Time   int64  `json:"time"`
	Type   string `json:"type"`
	Group  string `json:"group"`
	Name   string `json:"name"`
	Step   int    `json:"step"`
	Reason string `json:"reason,omitempty"`
}

// EventsResponse answers PathEvents: the user's events after the id asked
// for, oldest first, and the user's newest event id (to start from).
type EventsResponse struct {
	Events []Event `json:"events"`
	LastID int64   `json:"last_id"`
}

// GroupGrid is one group of GridStatusResponse: its chains by state and,
// when BOINC's database answers, what BOINC did with its work units of the
// last 30 days.
type GroupGrid struct {
	Group   string       `json:"group"`
	Chains  int          `json:"chains"`
	Running int          `json:"running"`
	Done    int          `json:"done"`
	Failed  int          `json:"failed"`
	Stopped int          `json:"stopped"`
	Aborted int          `json:"aborted"`
	Boinc   *BoincCounts `json:"boinc,omitempty"`
}

// Count adds a chain in state to the group: every chain in exactly one
// state column, a queued one (its step waiting for its work unit) running.
func (g *GroupGrid) Count(state string) {
	g.Chains++
	switch state {
	case StateDone:
		g.Done++
	case StateFailed:
		g.Failed++
	case StateStopped:
		g.Stopped++
	case StateAborted:
		g.Aborted++
	default:
		g.Running++
	}
}

// GridStatusResponse answers PathGridStatus, groups sorted by name.
type GridStatusResponse struct {
	Groups []GroupGrid `json:"groups"`
	// BoincError says why the BOINC figures are missing.
	BoincError string `json:"boinc_error,omitempty"`
}

// StatusResponse answers PathStatus, chains sorted by group then name.
type StatusResponse struct {
	Chains []ChainStatus `json:"chains"`
	// Batches are the user's batches (of the group asked for), when the
	// request names no single chain.
	Batches []Batch `json:"batches,omitempty"`
	// BoincError says why the chains have no BoincState: BOINC's database
	// could not be read.
	BoincError string `json:"boinc_error,omitempty"`
}

// ResultFile is one finished output waiting on the server.
type ResultFile struct {
	Group   string   `json:"group"`
	Chain   string   `json:"chain"`
	WU      string   `json:"wu"`
	Step    int      `json:"step"`
	Index   int      `json:"index"`
	Name    string   `json:"name"` // <wu>_<index>
	MD5     string   `json:"md5"`
	Size    int64    `json:"size"`
	Aliases []string `json:"aliases,omitempty"` // the first is appended on download
	Path    string   `json:"path"`              // relative to the base URL: PathFiles/<group>/<name>
	// OpenName is the name the application wrote the file under (the
	// result template's open_name).
	OpenName string `json:"open_name,omitempty"`
}

// ResultsResponse answers PathResults, sorted by chain, step, index.
type ResultsResponse struct {
	Files []ResultFile `json:"files"`
}

// AckRequest tells the server which result files the client has; only
// those are removed there.
type AckRequest struct {
	Group string   `json:"group"`
	Files []string `json:"files"` // ResultFile.Name values
	// Consumer is who acknowledges (see ConsumerMaster); the group's
	// chains must be its.
	Consumer string `json:"consumer,omitempty"`
}

// BulkRequest asks PathFilesBulk for many result files of one group in
// one answer: a POSIX tar stream (Content-Type BulkContentType) whose
// entries are regular files named ResultFile.Name, of the file's size,
// with its MD5 (hex) in the PAX record BulkMD5Record. Files is the list
// wanted (at most MaxBulkFiles); when it is absent (or null) the answer
// holds the group's (or chain Name's) next waiting files, in the order of
// PathResults. A file that is not the caller's, not waiting or past the
// answer's bounds (MaxBulkFiles, MaxBulkBytes, a time bound) is left out:
// the client fetches what it misses from PathFiles.
type BulkRequest struct {
	Group    string   `json:"group"`
	Name     string   `json:"name,omitempty"` // one chain, when Files is absent
	Files    []string `json:"files"`          // ResultFile.Name values
	Consumer string   `json:"consumer,omitempty"`
}

// The answer of PathFilesBulk.
const (
	BulkContentType = "application/x-tar"
	BulkMD5Record   = "RBOINC.md5"
)

// Job states of a batch, as BOINC's GAHP reports them.
const (
	JobInProgress = "IN_PROGRESS"
	JobDone       = "DONE"
	JobError      = "ERROR" // failed or aborted
)

// BatchRef names one batch; Lease is used by PathBatchLease.
type BatchRef struct {
	Name  string `json:"name"`
	Lease int64  `json:"lease,omitempty"`
}

// JobsRef names jobs of the user's batches.
type JobsRef struct {
	Jobs []string `json:"jobs"`
}

// BatchQuery asks for the jobs of some batches changed at or after
// MinModTime (seconds since the epoch; 0: all).
type BatchQuery struct {
	MinModTime float64  `json:"min_mod_time"`
	Names      []string `json:"names"`
}

// BatchJob is one job of a batch.
type BatchJob struct {
	Name    string `json:"name"`
	Chain   string `json:"chain"`
	State   string `json:"state"`    // JobInProgress, JobDone, JobError
	ModTime int64  `json:"mod_time"` // last change, seconds since the epoch
}

// Batch is one batch, with its jobs when asked for them.
type Batch struct {
	Name    string     `json:"name"`
	Group   string     `json:"group"`
	Queue   string     `json:"queue"`
	Created int64      `json:"created"`
	Lease   int64      `json:"lease"`
	Jobs    []BatchJob `json:"jobs,omitempty"`
	// State is BatchRetired for a batch retired in the last 30 days (then
	// Retired is when, in Unix seconds, and it has no jobs: its chains were
	// purged), empty for a live one.
	State   string `json:"state,omitempty"`
	Retired int64  `json:"retired,omitempty"`
}

// BatchRetired is Batch.State of a retired batch, as BOINC's query of a
// batch shows one retired (BATCH_STATE_RETIRED) rather than none.
const BatchRetired = "retired"

// BatchesResponse answers PathBatches and PathBatchQuery (in the order
// asked); ServerTime is the server's clock when it answered, to pass as
// the next MinModTime.
type BatchesResponse struct {
	ServerTime float64 `json:"server_time"`
	Batches    []Batch `json:"batches"`
}

// JobOutput answers PathBatchOutput: a job's state, what its last work
// unit's result reported (BOINC's canonical result, or its last error
// result) and its output files on the server.
type JobOutput struct {
	Job        string       `json:"job"`
	Batch      string       `json:"batch"`
	State      string       `json:"state"`
	ExitStatus int          `json:"exit_status"`
	Elapsed    float64      `json:"elapsed_s"`
	CPU        float64      `json:"cpu_s"`
	Stderr     string       `json:"stderr"`
	Files      []ResultFile `json:"files"`
}

// PathProgress answers GET ?group=G with ProgressResponse: each group's
// progress and estimated time to finish (rboinc-retrieve -status on a
// terminal draws it).
const PathProgress = APIPrefix + "/progress"

// GroupProgress is one group's progress.
type GroupProgress struct {
	Group     string         `json:"group"`
	Chains    int            `json:"chains"`
	States    map[string]int `json:"states"`
	StepsDone int            `json:"steps_done"`
	Steps     int            `json:"steps"`
	// Remaining is the steps left in running chains; RatePerHour the
	// group's steps finished per hour lately; ETASeconds the estimated
	// time to finish them (0: not known, or nothing left).
	Remaining   int     `json:"remaining"`
	RatePerHour float64 `json:"rate_per_hour"`
	ETASeconds  int64   `json:"eta_seconds,omitempty"`
}

// ProgressResponse answers PathProgress, groups sorted by name.
type ProgressResponse struct {
	Groups []GroupProgress `json:"groups"`
}
