package store

import (
	"context"
	"database/sql"
)

// migrations turn a state database of any earlier release into this one's,
// in order, each once (see the package comment for the rule). To change
// the schema, append {version: <last+1>, name: "...", sql: `...`}, or a fn
// for a change SQL alone cannot make. All the migrations due run in one
// transaction with foreign keys enforced (PRAGMA foreign_keys cannot change
// there: a table rebuild uses PRAGMA defer_foreign_keys).
var migrations = []migration{
	// The schema as the last release without versions made it. On such a
	// database (tables there, user_version 0) every statement finds its
	// object present: the database is adopted as version 1, data untouched.
	{version: 1, name: "baseline", sql: schemaV1},
	// doctor looks for steps BOINC has held for long (WaitingSince).
	{version: 2, name: "index of the steps BOINC holds, by age", sql: `CREATE INDEX IF NOT EXISTS steps_queued ON steps(created) WHERE state = 'queued';`},
	// A submission identical to an accepted one (its answer lost) is
	// answered with the chains it made (Chain.Digest; '' for older chains).
	{version: 3, name: "submission digest of each chain", sql: `ALTER TABLE chains ADD COLUMN digest TEXT NOT NULL DEFAULT '';`},
	// A user may be linked to a BOINC account, whose authenticator then
	// logs in as them (0: not linked).
	{version: 4, name: "BOINC account of each user", sql: `ALTER TABLE users ADD COLUMN boinc_user_id INTEGER NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX IF NOT EXISTS users_boinc ON users(boinc_user_id) WHERE boinc_user_id != 0;`},
	// Chain life: attempts per step (retries after BOINC gave up on a work
	// unit, with a back-off), the work units of earlier attempts, and the
	// events of every chain transition.
	{version: 5, name: "attempts, earlier attempts and events", sql: schemaV5},
	// Notifications: the targets users register (webhooks, e-mail), each
	// user's webhook signing secret, and the durable outbox that events
	// are fanned out into (the cursor says how far), delivered from there.
	{version: 6, name: "notification targets and outbox", sql: schemaV6},
	// Batches (HTCondor's BOINC GAHP): named sets of one user's chains in
	// one group, with a lease; and each chain's command-line arguments.
	{version: 7, name: "batches, their jobs and leases; chain arguments", sql: schemaV7},
	// Administrators (a right of its own) see every user on the status
	// page, the metrics and the administrator's report; the latency
	// histograms of the metrics are kept here, since the hook and CGI
	// requests are processes of their own (see latency.go); the status
	// page counts done steps by when they finished (steps_done_finished).
	{version: 8, name: "administrator right, latency histograms", sql: schemaV8},
	// Whether a group still has a running chain is asked each time one of
	// its chains ends (group_done): without this index the question read
	// every chain of the group, quadratic in the group's size.
	{version: 9, name: "index of the running chains by group", sql: `CREATE INDEX IF NOT EXISTS chains_running ON chains(user_id, grp) WHERE state = 'running';`},
	// E-mail is sent only to addresses the user confirmed (a code mailed
	// to it) or the administrator registered; every user with a target
	// has a webhook signing secret (none is ever empty when one is sent).
	{version: 10, name: "confirmed e-mail addresses, their codes; a signing secret for every user with targets", sql: schemaV10, fn: migrateV10},
	// A pooled content counts as present for a user only once they have
	// sent its bytes or used it (poolowners.go). What the users' chains
	// read so far is theirs, so nothing they did before asks for bytes again.
	{version: 11, name: "owners of pooled contents", sql: schemaV11},
	// Each user's long polls of the events feed in progress, counted here
	// since under CGI every request is a process of its own (longpolls.go).
	{version: 12, name: "long polls in progress", sql: schemaV12},
	// Every result has one consumer (chains.consumer, wire.Consumer*):
	// rboinc-retrieve (''), a master program ('master', its tag the
	// group) or the GAHP ('batch'). Chains made before are the
	// retriever's, those of batches the GAHP's.
	{version: 13, name: "consumer of each chain's results", sql: `ALTER TABLE chains ADD COLUMN consumer TEXT NOT NULL DEFAULT '';`, fn: batchConsumers},
	// A chain's page lists a step's earlier attempts in the order they
	// ended, a resumed run's after the run before it (its attempts count
	// from 1 again): by order of insertion, which SQLite's rowid holds
	// already; MariaDB gets the column seq that rowid means there.
	{version: 14, name: "earlier attempts in their order of insertion", fn: func(context.Context, *sql.Tx) error { return nil }},
	// Counts of what the daemons did (inputs linked again, ...), read by
	// /metrics in another process (counters.go).
	{version: 15, name: "counters of daemon work", sql: `CREATE TABLE IF NOT EXISTS counters (
	name TEXT PRIMARY KEY,
	n    INTEGER NOT NULL
);`},
	// A step a submission records as creating names the process that
	// recorded it, whose lease says whether it still runs: the creator
	// takes over the steps of a process gone within seconds (processlease.go)
	// instead of after an hour.
	{version: 16, name: "owner of each creating step, process leases", sql: schemaV16},
	// A delivery in flight names the notifier that claimed it, whose
	// process lease says whether it still runs: the claims of a notifier
	// killed mid-call are taken again at once (on its host) or when its
	// lease runs out (another host), not after the whole claim (notify.go).
	{version: 17, name: "claimer of each notification in flight", sql: `ALTER TABLE notify_outbox ADD COLUMN claimed_by TEXT NOT NULL DEFAULT '';`},
	// The names of the batches retired in the last RetiredBatchDays: a
	// retirement sent again after its answer was lost (HTCondor's GAHP
	// retries) is answered as done (batches.go).
	{version: 18, name: "names of retired batches", sql: `CREATE TABLE IF NOT EXISTS retired_batches (
	user_id INTEGER NOT NULL,
	name    TEXT NOT NULL,
	retired INTEGER NOT NULL,
	PRIMARY KEY (user_id, name)
);
CREATE INDEX IF NOT EXISTS retired_batches_time ON retired_batches(retired);`},
	// The job names of those batches, with the retirement they went with:
	// an abort of such a job (HTCondor's gridmanager after a lease ended)
	// is answered as done, as BOINC answers it (batches.go).
	{version: 19, name: "job names of retired batches", sql: `CREATE TABLE IF NOT EXISTS retired_jobs (
	user_id INTEGER NOT NULL,
	name    TEXT NOT NULL,     -- the job's name
	batch   TEXT NOT NULL,     -- its batch's name
	retired INTEGER NOT NULL,  -- the batch's retirement (retired_batches.retired)
	PRIMARY KEY (user_id, name)
);
CREATE INDEX IF NOT EXISTS retired_jobs_time ON retired_jobs(retired);`},
}

const schemaV16 = `ALTER TABLE steps ADD COLUMN owner TEXT NOT NULL DEFAULT '';
CREATE INDEX IF NOT EXISTS steps_creating ON steps(owner) WHERE state = 'creating';
CREATE TABLE IF NOT EXISTS process_leases (
	id      TEXT PRIMARY KEY,  -- random, one per process
	host    TEXT NOT NULL,     -- boot id and pid namespace: where pid means this process
	pid     INTEGER NOT NULL,
	started INTEGER NOT NULL,  -- the process's start, in clock ticks since boot
	expires INTEGER NOT NULL   -- by the database's clock, seconds since the epoch
);`

// batchConsumers gives the chains of batches their consumer, the GAHP.
func batchConsumers(ctx context.Context, tx *sql.Tx) error {
	_, err := tx.ExecContext(ctx, `UPDATE chains SET consumer = 'batch' WHERE EXISTS
		(SELECT 1 FROM batches b WHERE b.user_id = chains.user_id AND b.grp = chains.grp)`)
	return err
}

const schemaV11 = `CREATE TABLE IF NOT EXISTS pool_owners (
	user_id INTEGER NOT NULL REFERENCES users(id),
	md5     TEXT NOT NULL,
	PRIMARY KEY (user_id, md5)
);
CREATE INDEX IF NOT EXISTS pool_owners_md5 ON pool_owners(md5);
INSERT OR IGNORE INTO pool_owners(user_id, md5) SELECT DISTINCT c.user_id, ci.md5 FROM chain_inputs ci JOIN chains c ON c.id = ci.chain_id WHERE ci.md5 != '';
INSERT OR IGNORE INTO pool_owners(user_id, md5) SELECT DISTINCT c.user_id, si.md5 FROM step_inputs si JOIN steps s ON s.wu_name = si.wu_name JOIN chains c ON c.id = s.chain_id WHERE si.md5 != '';`

const schemaV10 = `CREATE TABLE IF NOT EXISTS notify_emails (
	user_id INTEGER NOT NULL,
	address TEXT NOT NULL,
	how     TEXT NOT NULL, -- 'confirmed' (the user gave back the code mailed there) or 'admin'
	created INTEGER NOT NULL,
	PRIMARY KEY (user_id, address)
);
CREATE TABLE IF NOT EXISTS notify_email_codes (
	id        INTEGER PRIMARY KEY,
	user_id   INTEGER NOT NULL,
	address   TEXT NOT NULL,
	code_hash TEXT NOT NULL, -- salt:sha256, '' once used
	expires   INTEGER NOT NULL,
	attempts  INTEGER NOT NULL DEFAULT 0,
	created   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS notify_email_codes_user ON notify_email_codes(user_id, created);
CREATE INDEX IF NOT EXISTS notify_email_codes_address ON notify_email_codes(address, created);`

const schemaV12 = `CREATE TABLE IF NOT EXISTS long_polls (
	id      INTEGER PRIMARY KEY,
	user_id INTEGER NOT NULL,
	expires INTEGER NOT NULL -- seconds since the epoch: the poll has surely ended by then
);
CREATE INDEX IF NOT EXISTS long_polls_user ON long_polls(user_id, expires);`

const schemaV5 = `ALTER TABLE chains ADD COLUMN max_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN attempts INTEGER NOT NULL DEFAULT 1;
ALTER TABLE steps ADD COLUMN not_before INTEGER NOT NULL DEFAULT 0;
ALTER TABLE steps ADD COLUMN late INTEGER NOT NULL DEFAULT 0;
CREATE TABLE IF NOT EXISTS step_attempts (
	wu_name  TEXT PRIMARY KEY,
	chain_id INTEGER NOT NULL REFERENCES chains(id),
	step     INTEGER NOT NULL,
	attempt  INTEGER NOT NULL,
	reason   TEXT NOT NULL,
	ended    INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS step_attempts_chain ON step_attempts(chain_id, step);
CREATE TABLE IF NOT EXISTS events (
	id      INTEGER PRIMARY KEY AUTOINCREMENT,
	time    INTEGER NOT NULL,
	user_id INTEGER NOT NULL,
	type    TEXT NOT NULL,
	grp     TEXT NOT NULL,
	name    TEXT NOT NULL,
	step    INTEGER NOT NULL,
	reason  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS events_user ON events(user_id, id);
CREATE INDEX IF NOT EXISTS events_time ON events(time);`

const schemaV7 = `ALTER TABLE chains ADD COLUMN args TEXT NOT NULL DEFAULT '';
CREATE TABLE IF NOT EXISTS batches (
	id      INTEGER PRIMARY KEY,
	user_id INTEGER NOT NULL REFERENCES users(id),
	name    TEXT NOT NULL,
	grp     TEXT NOT NULL,
	queue   TEXT NOT NULL,
	created INTEGER NOT NULL,
	lease   INTEGER NOT NULL DEFAULT 0, -- absolute, seconds since the epoch; 0: none
	UNIQUE (user_id, name),
	UNIQUE (user_id, grp)
);
CREATE INDEX IF NOT EXISTS batches_lease ON batches(lease) WHERE lease != 0;
CREATE TABLE IF NOT EXISTS batch_jobs (
	batch_id INTEGER NOT NULL REFERENCES batches(id),
	user_id  INTEGER NOT NULL,
	name     TEXT NOT NULL,  -- the job's name as the submitter gave it
	chain    TEXT NOT NULL,  -- its chain in the batch's group
	UNIQUE (user_id, name)
);
CREATE INDEX IF NOT EXISTS batch_jobs_batch ON batch_jobs(batch_id);`

const schemaV6 = `ALTER TABLE users ADD COLUMN notify_secret TEXT NOT NULL DEFAULT '';
CREATE TABLE IF NOT EXISTS notify_targets (
	id      INTEGER PRIMARY KEY,
	user_id INTEGER NOT NULL REFERENCES users(id),
	grp     TEXT NOT NULL DEFAULT '',   -- '': every group of the user
	kind    TEXT NOT NULL,              -- webhook, email
	address TEXT NOT NULL,
	event_types TEXT NOT NULL,          -- comma-separated, or all
	created INTEGER NOT NULL,
	UNIQUE (user_id, grp, kind, address)
);
CREATE TABLE IF NOT EXISTS notify_outbox (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	target_id  INTEGER NOT NULL,
	event_id   INTEGER NOT NULL,
	payload    TEXT NOT NULL,
	attempts   INTEGER NOT NULL DEFAULT 0,
	next_try   INTEGER NOT NULL,
	last_error TEXT NOT NULL DEFAULT '',
	created    INTEGER NOT NULL,
	UNIQUE (target_id, event_id)
);
CREATE INDEX IF NOT EXISTS notify_outbox_due ON notify_outbox(next_try);
CREATE TABLE IF NOT EXISTS notify_cursor (
	id         INTEGER PRIMARY KEY CHECK (id = 1),
	last_event INTEGER NOT NULL
);
INSERT INTO notify_cursor(id, last_event) SELECT 1, COALESCE(max(id), 0) FROM events;`
const schemaV8 = `ALTER TABLE users ADD COLUMN admin INTEGER NOT NULL DEFAULT 0;
CREATE INDEX IF NOT EXISTS steps_done_finished ON steps(finished, chain_id, created) WHERE state = 'done';
CREATE TABLE IF NOT EXISTS latency (
	kind   TEXT NOT NULL,
	bucket INTEGER NOT NULL,
	n      INTEGER NOT NULL,
	sum    REAL NOT NULL,
	PRIMARY KEY (kind, bucket)
);`
