package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/rboinc/rboinc/internal/mail"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/internal/dialguard"
	"github.com/rboinc/rboinc/internal/pool"
	"github.com/rboinc/rboinc/internal/query"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/templates"
)

// Config is the server root's rboinc.json.
type Config struct {
	// BoincProject is the BOINC project directory (absolute).
	BoincProject string `json:"boinc_project"`
	// Simulated says the project is the embedded BOINC stand-in, whose
	// volunteer loop `serve` runs.
	Simulated bool `json:"simulated"`
	// HookScript is the hook's name in the project's bin/.
	HookScript string `json:"hook_script"`
	// Assimilator is how finished work units reach rboinc: "hook" (BOINC's
	// script_assimilator runs the hook once per work unit; the default) or
	// "native" (rboinc's own assimilator daemon reads BOINC's database).
	Assimilator string `json:"assimilator,omitempty"`
	// Create is how work units enter BOINC: "create_work" (the project's
	// bin/create_work --stdin; the default) or "native" (rboinc inserts
	// them into BOINC's database itself, row for row what create_work
	// writes; see workcreate.go).
	Create string `json:"create,omitempty"`
	// Encoder, when set, is run as `Encoder IN OUT EncodeCode` for inputs
	// marked encode="true".
	Encoder    string `json:"encoder,omitempty"`
	EncodeCode string `json:"encode_code,omitempty"`
	// MaxErrorResults and MaxTotalResults are passed to create_work for
	// every work unit (the original RBoinc used 5 and 10).
	MaxErrorResults int `json:"max_error_results"`
	MaxTotalResults int `json:"max_total_results"`
	// Chain life: work units a step may take (a submission may ask for
	// fewer or more within this) and the wait before the second, doubling
	// per attempt, in seconds; events kept this many days.
	MaxStepAttempts    int     `json:"max_step_attempts,omitempty"`
	RetryBackoff       float64 `json:"retry_backoff,omitempty"`
	EventRetentionDays int     `json:"event_retention,omitempty"`
	// The original's load balancing: a chain more than CatchupSteps behind
	// the most advanced chain of its group gets its next work unit at
	// CatchupPriority; a step in BOINC longer than LateAfterHours gets one
	// more replica, its priority raised by 1000, once.
	CatchupSteps    int     `json:"catchup_steps,omitempty"`
	CatchupPriority int     `json:"catchup_priority,omitempty"`
	LateAfterHours  float64 `json:"late_after,omitempty"`
	// InputCheckSeconds is how often the creator checks that the inputs
	// of the work units BOINC holds for running chains are in download/
	// and links missing or damaged ones again from the pool (default 30,
	// at most 60: see inputcheck.go).
	InputCheckSeconds float64 `json:"input_check_seconds,omitempty"`
	// SMTP is the mail server e-mail notifications (and reports) go through.
	SMTP mail.Settings `json:"smtp,omitzero"`
	// StateDB, when set, puts rboinc's state in MariaDB:
	// mysql://USER:PASS@tcp(HOST:PORT)/DB (or unix(SOCKET)), tables
	// rboinc_*; empty: the SQLite file state.db in the root. Every host of
	// a project on several hosts names the same database.
	StateDB string `json:"state_db,omitempty"`
	// Limits are the per-user quotas and submission policy.
	Limits
	// Transfer bounds slow clients of the standalone server.
	Transfer
	// NotifyConfig bounds notifications: where webhooks may go, how many
	// targets a user may have.
	NotifyConfig
}

// Transfer bounds how slowly clients may talk to the standalone server and
// how many requests one user may have in progress; under Apache, its own
// settings (RequestReadTimeout, MaxRequestWorkers) do this.
type Transfer struct {
	// MinTransferRate is the slowest a request body or an answer may
	// flow, in bytes per second of time spent waiting for the client,
	// measured over TransferWindowSeconds; a client that stays slower, or
	// sends nothing for a whole window, is cut off. 0: no minimum.
	MinTransferRate       int64 `json:"min_transfer_rate"`
	TransferWindowSeconds int   `json:"transfer_window_seconds"`
	// IdleTimeoutSeconds closes keep-alive connections idle that long.
	IdleTimeoutSeconds int `json:"idle_timeout_seconds"`
	// MaxUserRequests bounds one user's requests in progress at once
	// (HTTP 429 beyond). 0: no limit.
	MaxUserRequests int `json:"max_user_requests"`
	// MaxJSONInFlight bounds the bytes of JSON request bodies the server
	// holds at once, from all users together (HTTP 503 with Retry-After
	// beyond); each route also has its own limit. 0: no bound.
	MaxJSONInFlight int64 `json:"max_json_bytes_in_flight"`
}

// DefaultTransfer cuts off clients slower than 1 KiB/s over a minute.
func DefaultTransfer() Transfer {
	return Transfer{MinTransferRate: 1024, TransferWindowSeconds: 60, IdleTimeoutSeconds: 120, MaxUserRequests: 64, MaxJSONInFlight: 64 << 20}
}

// Limits bound what one user may do. Zero means no limit.
type Limits struct {
	// MaxUploadBytes bounds one uploaded file (checked while it streams).
	MaxUploadBytes int64 `json:"max_upload_bytes"`
	// MaxScratchBytes bounds the bytes held in one user's WebDAV scratch area.
	MaxScratchBytes int64 `json:"max_scratch_bytes"`
	// MaxRunningChains bounds one user's chains in progress.
	MaxRunningChains int `json:"max_running_chains"`
	// MaxPoolBytes bounds the pooled input contents one user's chains (not
	// purged) refer to, each distinct content counted once.
	MaxPoolBytes int64 `json:"max_pool_bytes"`
	// MaxPriority and MaxTargetNResults bound the submission options that
	// take BOINC resources from other scientists.
	MaxPriority       int `json:"max_priority,omitempty"`
	MaxTargetNResults int `json:"max_target_nresults,omitempty"`
	// MaxUserLongPolls bounds one user's long polls of the events feed in
	// progress (HTTP 429 beyond), counted in the state database so that
	// it holds under CGI (a process per request) and across hosts too.
	MaxUserLongPolls int `json:"max_user_long_polls"`
	// MaxDAVLocks bounds the WebDAV locks one user holds at once.
	MaxDAVLocks int `json:"max_dav_locks"`
	// MaxOpenUploads bounds one user's upload collections: those opened
	// through the API, and the entries at the top of their WebDAV scratch
	// area (where the original clients make theirs with MKCOL).
	MaxOpenUploads int `json:"max_open_uploads"`
}

// DefaultLimits are generous: they stop accidents and abuse, not work.
func DefaultLimits() Limits {
	return Limits{MaxUploadBytes: 4 << 30, MaxScratchBytes: 64 << 30, MaxRunningChains: 100000, MaxPoolBytes: 1 << 40,
		MaxUserLongPolls: 8, MaxDAVLocks: 100, MaxOpenUploads: 100}
}

// DefaultConfig is the configuration `init` writes.
func DefaultConfig() Config {
	return Config{HookScript: "rboinc_hook", EncodeCode: "-1", MaxErrorResults: 5, MaxTotalResults: 10, Limits: DefaultLimits(), Transfer: DefaultTransfer(),
		NotifyConfig: DefaultNotifyConfig()}
}

// ConfigFile is the name of the configuration file in the server root.
const ConfigFile = "rboinc.json"

// LoadConfig reads root/rboinc.json.
func LoadConfig(root string) (Config, error) {
	c := DefaultConfig()
	data, err := os.ReadFile(filepath.Join(root, ConfigFile))
	if errors.Is(err, os.ErrNotExist) {
		return c, &NotRootError{Root: root}
	}
	if err != nil {
		return c, fmt.Errorf("reading the server configuration %s: %w", filepath.Join(root, ConfigFile), err)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("parsing %s: %w", filepath.Join(root, ConfigFile), err)
	}
	if err := CheckStateDB(c.StateDB); err != nil {
		return c, fmt.Errorf("%s: %w", filepath.Join(root, ConfigFile), err)
	}
	l := c.Limits
	if l.MaxUploadBytes < 0 || l.MaxScratchBytes < 0 || l.MaxRunningChains < 0 || l.MaxPoolBytes < 0 || l.MaxPriority < 0 || l.MaxTargetNResults < 0 ||
		l.MaxUserLongPolls < 0 || l.MaxDAVLocks < 0 || l.MaxOpenUploads < 0 {
		return c, fmt.Errorf("%s: the limits (max_*) must not be negative; 0 means no limit", filepath.Join(root, ConfigFile))
	}
	if t := c.Transfer; t.MinTransferRate < 0 || t.TransferWindowSeconds < 0 || t.IdleTimeoutSeconds < 0 || t.MaxUserRequests < 0 || t.MaxJSONInFlight < 0 {
		return c, fmt.Errorf("%s: min_transfer_rate, transfer_window_seconds, idle_timeout_seconds, max_user_requests and max_json_bytes_in_flight must not be negative; 0 means none", filepath.Join(root, ConfigFile))
	}
	if err := CheckCreate(c.Create); err != nil {
		return c, fmt.Errorf("%s: %w", filepath.Join(root, ConfigFile), err)
	}
	if err := c.NotifyConfig.check(); err != nil {
		return c, fmt.Errorf("%s: %w", filepath.Join(root, ConfigFile), err)
	}
	if c.TransferWindowSeconds == 0 {
		c.TransferWindowSeconds = DefaultTransfer().TransferWindowSeconds
	}
	return c, nil
}

// NotRootError says a directory given as server root is none.
type NotRootError struct{ Root string }

func (e *NotRootError) Error() string {
	return fmt.Sprintf("%s is not an rboinc server root (it has no %s): run `rboinc-server init --root %s` to make one", e.Root, ConfigFile, e.Root)
}

// Engine ties the state database, the content pool, the queues and the
// BOINC project together.
type Engine struct {
	Root   string
	Cfg    Config
	Proj   *boinc.Project
	Pool   *pool.Pool
	Queues *templates.Registry
	Log    *slog.Logger

	// db is the state database: nobody outside the engine holds it. q is
	// its read side, which pages, metrics and status read (Query).
	db *store.DB
	q  *query.Reader

	defaultsMu sync.Mutex
	defaults   map[string]defaultEntry

	// layouts are the chains' layouts recordStep parsed (see layoutCache).
	layouts layoutCache

	// pendingHint tells this process's RunCreator that a step was left
	// pending for it (kickCreator found the lock held), so that the
	// creator's idle looks need not query the database every time.
	pendingHint atomic.Bool

	// lastSweep is when Collect last swept temporary files (UnixNano).
	lastSweep atomic.Int64
	// lastUnindexed is when Collect last looked for pool files no row
	// names (UnixNano).
	lastUnindexed atomic.Int64
	// strayCursor is where collection's look for owner rows without a
	// pool row goes on (a string: an MD5, or "" from the start).
	strayCursor atomic.Value
	// orphanCursor is where the last pass over the results area stopped.
	orphanCursor orphanCursor
	// purgedCursor is the purged chain id the next pass forgetting their
	// steps starts after.
	purgedCursor atomic.Int64
	// digests remembers the MD5 of download files that are copies of pool
	// contents, so that the input check reads each copy once.
	digests digestCache
	// lastLate is when late steps were last looked for (UnixNano).
	lastLate atomic.Int64
	// lastLease is when batch leases were last checked (UnixNano).
	lastLease atomic.Int64
	// afterCreateSteps, when set (by tests, before the creator runs),
	// runs between createSteps' making of work units in BOINC and their
	// recording.
	afterCreateSteps func()
	// afterBeginBatch, when set (by tests), runs between a batch
	// submission's record of its batch and that of its chains.
	afterBeginBatch func(store.Batch)

	// synced are the pool files this process made durable (durable.go).
	synced syncedSet

	// notifyOnce makes the notification client and its dial guard from
	// Cfg at their first use (notifyclient.go).
	notifyOnce   sync.Once
	notifyGuard  *dialguard.Policy
	notifyClient *http.Client

	// creation is how work units are made (workcreate.go), chosen by
	// Cfg.Create at its first use.
	creationMu sync.Mutex
	creation   workCreator

	// bdb is BOINC's database, for status views (boincDB).
	bdbMu sync.Mutex
	bdb   *boincdb.DB
	// bdbWarned is the last reason the status views went without BOINC's
	// database, logged once rather than at each request.
	bdbWarned string
	// legacyWarned is the last reason collection kept rboinc's jf_ links
	// (legacyLinksClaimed), logged once.
	legacyWarned string
}

// Open opens the engine of a server root.
func Open(ctx context.Context, root string, log *slog.Logger) (*Engine, error) {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	cfg, err := LoadConfig(root)
	if err != nil {
		return nil, err
	}
	proj, err := boinc.LoadProject(cfg.BoincProject)
	if err != nil {
		return nil, err
	}
	db, err := store.Open(ctx, cfg.StateLocation(root))
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	return &Engine{
		Root: root, Cfg: cfg, Proj: proj, db: db, q: query.New(db), Log: log,
		Pool:     &pool.Pool{Dir: filepath.Join(root, "pool"), NoSidecars: cfg.Create == CreateNative},
		Queues:   templates.NewRegistry(filepath.Join(proj.Dir, "templates")),
		defaults: map[string]defaultEntry{},
	}, nil
}

// Query returns the read side of the engine's state: what pages, metrics
// and status read.
func (e *Engine) Query() *query.Reader { return e.q }

// Close releases the databases.
func (e *Engine) Close() error {
	e.bdbMu.Lock()
	if e.bdb != nil {
		e.bdb.Close()
		e.bdb = nil
	}
	e.bdbMu.Unlock()
	e.creationMu.Lock()
	if c, ok := e.creation.(*nativeCreator); ok {
		c.db.Close()
	}
	e.creation = nil
	e.creationMu.Unlock()
	return e.db.Close()
}

// Paths inside the server root.
func (e *Engine) resultsDir(userUpper, group string) string {
	return filepath.Join(e.Root, "results", userUpper+"_"+group)
}
func (e *Engine) davDir(user string) string { return filepath.Join(e.Root, "dav", user) }
func (e *Engine) etcDir() string            { return filepath.Join(e.Root, "etc") }

// Kind classifies engine errors for the API layer.
type Kind int

// Error kinds.
const (
	KindInternal Kind = iota
	KindBadRequest
	KindUnknownQueue
	KindNameTaken
	KindMissingContent
	KindNotFound
	KindForbidden
	KindQuota    // a per-user limit would be passed
	KindTooLarge // an upload is larger than the server accepts
	KindNoSpace  // the server's disk is full: nothing was kept, try again later
	KindConflict // the request does not fit the state on the server (a resumed upload's offset)
	// KindOtherConsumer: the group's results go to another consumer (a
	// master's tag asked by rboinc-retrieve, say).
	KindOtherConsumer
	// KindBadTarget is a notification target the user may not name (an
	// inner address, an unconfirmed e-mail address): a bad request the
	// clients report as a usage error.
	KindBadTarget
	// KindUnavailable is the state database out of reach for a moment (a
	// MariaDB restart): the request may be sent again as it is.
	KindUnavailable
	// KindOutcomeUnknown is the state database gone during the request's
	// commit: the change may have been recorded. A request safe to repeat
	// may be sent again; an -extend must not be, unseen.
	KindOutcomeUnknown
	// KindMisconfigured is a queue the administrator set up wrong (its
	// templates unreadable or invalid, its BOINC application missing):
	// Msg names the queue for the user, Err holds the detail (paths
	// included) for the server's log only.
	KindMisconfigured
)

// Error is an error the requester can act on.
type Error struct {
	Kind Kind
	Msg  string
	Err  error
	// Missing lists, for KindMissingContent, every content the request
	// lacks (wire.Error.Missing).
	Missing []string
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Err }

func errf(k Kind, format string, a ...any) error {
	err := fmt.Errorf(format, a...)
	return &Error{Kind: k, Msg: err.Error(), Err: errors.Unwrap(err)}
}

// KindOf returns the kind of err: KindNoSpace for a full disk, whatever
// else wraps or words it, and KindInternal for foreign errors.
func KindOf(err error) Kind {
	if IsNoSpace(err) {
		return KindNoSpace
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	if errors.Is(err, store.ErrCommitUnknown) {
		return KindOutcomeUnknown
	}
	if store.Unreachable(err) {
		return KindUnavailable
	}
	return KindInternal
}
