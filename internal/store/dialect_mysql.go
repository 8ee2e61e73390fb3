package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/rboinc/rboinc/internal/sqldb"
)

// MariaDB (or MySQL) as the state database, for projects that run on
// several hosts. Its tables are the SQLite schema's, each named with the
// prefix rboinc_ so that they can live in the project's own database.
// Queries are rewritten on their way to the server (mysqlQuery), so the
// rest of the package keeps one text of each.

// TablePrefix names rboinc's tables on MariaDB.
const TablePrefix = "rboinc_"

// tables are the names the queries use, each the table rboinc_<name> on
// MariaDB.
var tables = []string{"users", "chains", "chain_inputs", "steps", "step_inputs", "results", "pool", "uploads", "step_attempts", "events", "schema_history",
	"notify_targets", "notify_outbox", "notify_cursor", "batches", "batch_jobs", "latency", "pool_owners", "notify_emails", "notify_email_codes", "long_polls", "counters", "process_leases", "retired_batches", "retired_jobs"}

// mysqlTable matches a table name where a query names a table (not after
// a dot: a column qualified by an alias).
var mysqlTable = regexp.MustCompile(`(^|[^.\w])(` + strings.Join(tables, "|") + `)\b`)

// mysqlWords are the SQLite phrases with another spelling on MariaDB.
var mysqlWords = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`(?i)\bINSERT OR IGNORE\b`), "INSERT IGNORE"},
	{regexp.MustCompile(`(?i)\bON CONFLICT\s*\([^)]*\)\s*DO UPDATE SET\b`), "ON DUPLICATE KEY UPDATE"},
	{regexp.MustCompile(`(?i)\bexcluded\.(\w+)`), "VALUES($1)"},
	// SQLite's max and min of two or more values (one is the aggregate).
	{regexp.MustCompile(`(?i)\bmax\(([^(),]+),`), "GREATEST($1,"},
	{regexp.MustCompile(`(?i)\bmin\(([^(),]+),`), "LEAST($1,"},
	// SQLite takes a list of row values only as VALUES, MariaDB only
	// as a list (its VALUES names columns by the first row's values).
	{regexp.MustCompile(`(?i)\bIN \(VALUES\b`), "IN ("},
	// steps keep their order of insertion in seq (SQLite's rowid).
	{regexp.MustCompile(`\browid\b`), "seq"},
	// The database's clock, in seconds since the epoch.
	{regexp.MustCompile(`(?i)\bunixepoch\(\)`), "UNIX_TIMESTAMP()"},
}

// mysqlCache holds each query's MariaDB text: the same few hundred
// queries run again and again.
var mysqlCache sync.Map

// mysqlQuery rewrites q, a query in SQLite's words, for MariaDB: table
// names prefixed, and the phrases of mysqlWords. String literals are left
// as they are. (|| concatenates: the session's sql_mode has
// PIPES_AS_CONCAT.)
func mysqlQuery(q string) string {
	if v, ok := mysqlCache.Load(q); ok {
		return v.(string)
	}
	var b strings.Builder
	for i := 0; i < len(q); {
		j := strings.IndexByte(q[i:], '\'')
		if j < 0 {
			b.WriteString(mysqlCode(q[i:]))
			break
		}
		b.WriteString(mysqlCode(q[i : i+j]))
		// The literal, '' inside it included.
		k := i + j + 1
		for k < len(q) {
			if q[k] == '\'' {
				if k+1 < len(q) && q[k+1] == '\'' {
					k += 2
					continue
				}
				break
			}
			k++
		}
		end := min(k+1, len(q))
		b.WriteString(q[i+j : end])
		i = end
	}
	out := b.String()
	mysqlCache.Store(q, out)
	return out
}

func mysqlCode(s string) string {
	s = mysqlTable.ReplaceAllString(s, "${1}"+TablePrefix+"${2}")
	for _, w := range mysqlWords {
		s = w.re.ReplaceAllString(s, w.repl)
	}
	return s
}

// mysqlSchema is each migration's DDL on MariaDB, by version: the same
// tables, columns and guarantees as the SQLite migration of that version.
// Each statement may run again after a crash (IF NOT EXISTS): DDL commits
// on its own there, so a migration is not one transaction. Partial
// indexes become generated columns that are NULL where SQLite's index
// had no row (a unique key ignores NULLs), or plain indexes. Text is
// compared as bytes (utf8mb4_nopad_bin, as SQLite compares), but user
// names case-insensitively (NOCASE). A migration appended in migrations.go
// needs its entry here.
var mysqlSchema = map[int][]string{
	1: {
		`CREATE TABLE IF NOT EXISTS rboinc_users (
	id         BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	name       VARCHAR(255) COLLATE utf8mb4_general_nopad_ci NOT NULL UNIQUE,
	token_hash VARCHAR(255) NOT NULL UNIQUE,
	disabled   INT NOT NULL DEFAULT 0,
	created    BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`,
		`CREATE TABLE IF NOT EXISTS rboinc_chains (
	id         BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	user_id    BIGINT NOT NULL,
	grp        VARCHAR(255) NOT NULL,
	name       VARCHAR(255) NOT NULL,
	queue      VARCHAR(255) NOT NULL,
	app        VARCHAR(255) NOT NULL,
	tag        VARCHAR(64) NOT NULL,
	nsteps     BIGINT NOT NULL,
	priority   BIGINT NOT NULL,
	params     LONGTEXT NOT NULL,
	wu_tmpl    TEXT NOT NULL,
	res_tmpl   TEXT NOT NULL,
	layout     LONGTEXT NOT NULL,
	state      VARCHAR(16) NOT NULL,
	steps_done BIGINT NOT NULL DEFAULT 0,
	error      MEDIUMTEXT NOT NULL DEFAULT '',
	created    BIGINT NOT NULL,
	updated    BIGINT NOT NULL,
	live       TINYINT AS (IF(state <> 'purged', 1, NULL)) VIRTUAL,
	UNIQUE KEY chains_live (user_id, grp, name, live),
	KEY chains_group (user_id, grp),
	FOREIGN KEY (user_id) REFERENCES rboinc_users(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`,
		`CREATE TABLE IF NOT EXISTS rboinc_chain_inputs (
	chain_id BIGINT NOT NULL,
	pos      INT NOT NULL,
	md5      VARCHAR(128) NOT NULL,
	PRIMARY KEY (chain_id, pos),
	KEY chain_inputs_md5 (md5),
	FOREIGN KEY (chain_id) REFERENCES rboinc_chains(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`,
		`CREATE TABLE IF NOT EXISTS rboinc_steps (
	chain_id BIGINT NOT NULL,
	step     INT NOT NULL,
	wu_name  VARCHAR(255) NOT NULL UNIQUE,
	state    VARCHAR(16) NOT NULL,
	created  BIGINT NOT NULL,
	finished BIGINT NOT NULL DEFAULT 0,
	seq      BIGINT NOT NULL AUTO_INCREMENT UNIQUE,
	PRIMARY KEY (chain_id, step),
	KEY steps_pending (state),
	FOREIGN KEY (chain_id) REFERENCES rboinc_chains(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`,
		`CREATE TABLE IF NOT EXISTS rboinc_step_inputs (
	wu_name VARCHAR(255) NOT NULL,
	pos     INT NOT NULL,
	md5     VARCHAR(128) NOT NULL,
	PRIMARY KEY (wu_name, pos),
	KEY step_inputs_md5 (md5)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`,
		`CREATE TABLE IF NOT EXISTS rboinc_results (
	id       BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	chain_id BIGINT NOT NULL,
	step     INT NOT NULL,
	idx      INT NOT NULL,
	file     VARCHAR(255) NOT NULL,
	md5      VARCHAR(128) NOT NULL,
	size     BIGINT NOT NULL,
	acked    INT NOT NULL DEFAULT 0,
	UNIQUE KEY (chain_id, step, idx),
	KEY results_pending (chain_id, acked),
	KEY results_file (file),
	FOREIGN KEY (chain_id) REFERENCES rboinc_chains(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`,
		`CREATE TABLE IF NOT EXISTS rboinc_pool (
	md5     VARCHAR(128) NOT NULL PRIMARY KEY,
	size    BIGINT NOT NULL,
	touched BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`,
		`CREATE TABLE IF NOT EXISTS rboinc_uploads (
	id      VARCHAR(255) NOT NULL PRIMARY KEY,
	user_id BIGINT NOT NULL,
	created BIGINT NOT NULL,
	FOREIGN KEY (user_id) REFERENCES rboinc_users(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`,
	},
	2: {`CREATE INDEX IF NOT EXISTS steps_queued ON rboinc_steps(state, created)`},
	3: {`ALTER TABLE rboinc_chains ADD COLUMN IF NOT EXISTS digest VARCHAR(255) NOT NULL DEFAULT ''`},
	4: {
		`ALTER TABLE rboinc_users ADD COLUMN IF NOT EXISTS boinc_user_id BIGINT NOT NULL DEFAULT 0`,
		`ALTER TABLE rboinc_users ADD COLUMN IF NOT EXISTS boinc_key BIGINT AS (NULLIF(boinc_user_id, 0)) VIRTUAL`,
		`CREATE UNIQUE INDEX IF NOT EXISTS users_boinc ON rboinc_users(boinc_key)`,
	},
	5: {
		`ALTER TABLE rboinc_chains ADD COLUMN IF NOT EXISTS max_attempts BIGINT NOT NULL DEFAULT 0`,
		`ALTER TABLE rboinc_steps ADD COLUMN IF NOT EXISTS attempts BIGINT NOT NULL DEFAULT 1,
	ADD COLUMN IF NOT EXISTS not_before BIGINT NOT NULL DEFAULT 0,
	ADD COLUMN IF NOT EXISTS late INT NOT NULL DEFAULT 0`,
		`CREATE TABLE IF NOT EXISTS rboinc_step_attempts (
	wu_name  VARCHAR(255) NOT NULL PRIMARY KEY,
	chain_id BIGINT NOT NULL,
	step     INT NOT NULL,
	attempt  BIGINT NOT NULL,
	reason   MEDIUMTEXT NOT NULL,
	ended    BIGINT NOT NULL,
	KEY step_attempts_chain (chain_id, step),
	FOREIGN KEY (chain_id) REFERENCES rboinc_chains(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`,
		`CREATE TABLE IF NOT EXISTS rboinc_events (
	id      BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	time    BIGINT NOT NULL,
	user_id BIGINT NOT NULL,
	type    VARCHAR(64) NOT NULL,
	grp     VARCHAR(255) NOT NULL,
	name    VARCHAR(255) NOT NULL,
	step    BIGINT NOT NULL,
	reason  MEDIUMTEXT NOT NULL DEFAULT '',
	KEY events_user (user_id, id),
	KEY events_time (time)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`,
	},
	6: {
		`ALTER TABLE rboinc_users ADD COLUMN IF NOT EXISTS notify_secret VARCHAR(128) NOT NULL DEFAULT ''`,
		// An address may be longer than a key can hold: the key takes its hash.
		`CREATE TABLE IF NOT EXISTS rboinc_notify_targets (
	id           BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	user_id      BIGINT NOT NULL,
	grp          VARCHAR(255) NOT NULL DEFAULT '',
	kind         VARCHAR(16) NOT NULL,
	address      VARCHAR(2048) NOT NULL,
	event_types  VARCHAR(1024) NOT NULL,
	created      BIGINT NOT NULL,
	address_hash BINARY(32) AS (UNHEX(SHA2(address, 256))) STORED,
	UNIQUE KEY notify_targets_one (user_id, grp, kind, address_hash),
	FOREIGN KEY (user_id) REFERENCES rboinc_users(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`,
		`CREATE TABLE IF NOT EXISTS rboinc_notify_outbox (
	id         BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	target_id  BIGINT NOT NULL,
	event_id   BIGINT NOT NULL,
	payload    MEDIUMTEXT NOT NULL,
	attempts   BIGINT NOT NULL DEFAULT 0,
	next_try   BIGINT NOT NULL,
	last_error MEDIUMTEXT NOT NULL DEFAULT '',
	created    BIGINT NOT NULL,
	UNIQUE KEY notify_outbox_one (target_id, event_id),
	KEY notify_outbox_due (next_try)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`,
		`CREATE TABLE IF NOT EXISTS rboinc_notify_cursor (
	id         INT NOT NULL PRIMARY KEY,
	last_event BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`,
		`INSERT IGNORE INTO rboinc_notify_cursor(id, last_event) SELECT 1, COALESCE(max(id), 0) FROM rboinc_events`,
	},
	7: {
		`ALTER TABLE rboinc_chains ADD COLUMN IF NOT EXISTS args MEDIUMTEXT NOT NULL DEFAULT ''`,
		`CREATE TABLE IF NOT EXISTS rboinc_batches (
	id      BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	user_id BIGINT NOT NULL,
	name    VARCHAR(512) NOT NULL,
	grp     VARCHAR(255) NOT NULL,
	queue   VARCHAR(255) NOT NULL,
	created BIGINT NOT NULL,
	lease   BIGINT NOT NULL DEFAULT 0,
	UNIQUE KEY batches_name (user_id, name),
	UNIQUE KEY batches_grp (user_id, grp),
	KEY batches_lease (lease),
	FOREIGN KEY (user_id) REFERENCES rboinc_users(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`,
		`CREATE TABLE IF NOT EXISTS rboinc_batch_jobs (
	batch_id BIGINT NOT NULL,
	user_id  BIGINT NOT NULL,
	name     VARCHAR(512) NOT NULL,
	chain    VARCHAR(255) NOT NULL,
	UNIQUE KEY batch_jobs_name (user_id, name),
	KEY batch_jobs_batch (batch_id),
	FOREIGN KEY (batch_id) REFERENCES rboinc_batches(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`,
	},
	8: {
		`ALTER TABLE rboinc_users ADD COLUMN IF NOT EXISTS admin INT NOT NULL DEFAULT 0`,
		`CREATE INDEX IF NOT EXISTS steps_done_finished ON rboinc_steps(state, finished, chain_id, created)`,
		`CREATE TABLE IF NOT EXISTS rboinc_latency (
	kind   VARCHAR(64) NOT NULL,
	bucket BIGINT NOT NULL,
	n      BIGINT NOT NULL,
	sum    DOUBLE NOT NULL,
	PRIMARY KEY (kind, bucket)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`,
	},
	9: {`CREATE INDEX IF NOT EXISTS chains_running ON rboinc_chains(user_id, grp, state)`},
	10: {
		`CREATE TABLE IF NOT EXISTS rboinc_notify_emails (
	user_id BIGINT NOT NULL,
	address VARCHAR(254) NOT NULL,
	how     VARCHAR(16) NOT NULL,
	created BIGINT NOT NULL,
	PRIMARY KEY (user_id, address)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`,
		`CREATE TABLE IF NOT EXISTS rboinc_notify_email_codes (
	id        BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	user_id   BIGINT NOT NULL,
	address   VARCHAR(254) NOT NULL,
	code_hash VARCHAR(160) NOT NULL,
	expires   BIGINT NOT NULL,
	attempts  BIGINT NOT NULL DEFAULT 0,
	created   BIGINT NOT NULL,
	KEY notify_email_codes_user (user_id, created),
	KEY notify_email_codes_address (address, created)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`,
	},
	11: {
		`CREATE TABLE IF NOT EXISTS rboinc_pool_owners (
	user_id BIGINT NOT NULL,
	md5     VARCHAR(128) NOT NULL,
	PRIMARY KEY (user_id, md5),
	KEY pool_owners_md5 (md5),
	FOREIGN KEY (user_id) REFERENCES rboinc_users(id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`,
		`INSERT IGNORE INTO rboinc_pool_owners(user_id, md5) SELECT DISTINCT c.user_id, ci.md5 FROM rboinc_chain_inputs ci JOIN rboinc_chains c ON c.id = ci.chain_id WHERE ci.md5 <> ''`,
		`INSERT IGNORE INTO rboinc_pool_owners(user_id, md5) SELECT DISTINCT c.user_id, si.md5 FROM rboinc_step_inputs si JOIN rboinc_steps s ON s.wu_name = si.wu_name JOIN rboinc_chains c ON c.id = s.chain_id WHERE si.md5 <> ''`,
	},
	12: {`CREATE TABLE IF NOT EXISTS rboinc_long_polls (
	id      BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
	user_id BIGINT NOT NULL,
	expires BIGINT NOT NULL,
	KEY long_polls_user (user_id, expires)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`},
	13: {`ALTER TABLE rboinc_chains ADD COLUMN IF NOT EXISTS consumer VARCHAR(16) NOT NULL DEFAULT ''`},
	// The earlier attempts there are get their numbers in the order they
	// ended; new ones are numbered as they come.
	14: {
		`ALTER TABLE rboinc_step_attempts ADD COLUMN IF NOT EXISTS seq BIGINT NULL`,
		`UPDATE rboinc_step_attempts a JOIN (SELECT wu_name, ROW_NUMBER() OVER (ORDER BY ended, chain_id, step, attempt) AS n FROM rboinc_step_attempts) o
	ON o.wu_name = a.wu_name SET a.seq = o.n WHERE a.seq IS NULL`,
		`ALTER TABLE rboinc_step_attempts MODIFY COLUMN seq BIGINT NOT NULL AUTO_INCREMENT UNIQUE`,
	},
	15: {`CREATE TABLE IF NOT EXISTS rboinc_counters (
	name VARCHAR(64) NOT NULL PRIMARY KEY,
	n    BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`},
	// The creating steps are found by steps_queued (state, created).
	16: {
		`ALTER TABLE rboinc_steps ADD COLUMN IF NOT EXISTS owner VARCHAR(64) NOT NULL DEFAULT ''`,
		`CREATE TABLE IF NOT EXISTS rboinc_process_leases (
	id      VARCHAR(64) NOT NULL PRIMARY KEY,
	host    VARCHAR(255) NOT NULL,
	pid     BIGINT NOT NULL,
	started BIGINT NOT NULL,
	expires BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`,
	},
	17: {`ALTER TABLE rboinc_notify_outbox ADD COLUMN IF NOT EXISTS claimed_by VARCHAR(64) NOT NULL DEFAULT ''`},
	18: {`CREATE TABLE IF NOT EXISTS rboinc_retired_batches (
	user_id BIGINT NOT NULL,
	name    VARCHAR(512) NOT NULL,
	retired BIGINT NOT NULL,
	PRIMARY KEY (user_id, name),
	KEY retired_batches_time (retired)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`},
	19: {`CREATE TABLE IF NOT EXISTS rboinc_retired_jobs (
	user_id BIGINT NOT NULL,
	name    VARCHAR(512) NOT NULL,
	batch   VARCHAR(512) NOT NULL,
	retired BIGINT NOT NULL,
	PRIMARY KEY (user_id, name),
	KEY retired_jobs_time (retired)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin`},
}

// The schema version is the one row of rboinc_schema; writers lock that
// row (SELECT ... FOR UPDATE) to write one at a time, as on SQLite.
const (
	mysqlSchemaTable = `CREATE TABLE IF NOT EXISTS rboinc_schema (
	id      INT NOT NULL PRIMARY KEY,
	version INT NOT NULL
) ENGINE=InnoDB`
	mysqlSchemaRow  = `INSERT IGNORE INTO rboinc_schema(id, version) VALUES (1, 0)`
	mysqlVersion    = `SELECT version FROM rboinc_schema WHERE id = 1`
	mysqlWriteLock  = mysqlVersion + ` FOR UPDATE`
	mysqlSetVersion = `UPDATE rboinc_schema SET version = ? WHERE id = 1`
)

// mysqlDialect is a MariaDB or MySQL database.
type mysqlDialect struct{ target sqldb.Target }

func openMySQL(t sqldb.Target) (*sql.DB, dialect, error) {
	cfg, err := mysql.ParseDSN(t.DSN)
	if err != nil {
		return nil, nil, fmt.Errorf("state database %s: %w", t, err)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	// RowsAffected counts the rows matched, as SQLite does.
	cfg.ClientFoundRows = true
	// A query's arguments are written into its text by the driver (escaped
	// for the connection's character set, utf8mb4), one round trip: not
	// three (prepare, execute, close), which were 34 of a work unit's
	// 93 requests to MariaDB in the long soak. Statements prepared on
	// purpose (stmtCache) stay prepared.
	cfg.InterpolateParams = true
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	cfg.Params["sql_mode"] = "'STRICT_TRANS_TABLES,PIPES_AS_CONCAT,NO_ENGINE_SUBSTITUTION'"
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("state database %s: %w", t, err)
	}
	db := sql.OpenDB(rewriter{conn})
	db.SetMaxOpenConns(16)
	// As many kept as may be open: with 4 kept, the server's bursts of
	// requests (retrievals) opened and closed a connection 10 times a
	// second in the long soak, each a connect, two SETs and a quit.
	// Unused ones go after a minute.
	db.SetMaxIdleConns(16)
	db.SetConnMaxIdleTime(time.Minute)
	// Renewed now and then, well within wait_timeout (8 hours).
	db.SetConnMaxLifetime(time.Hour)
	return db, mysqlDialect{target: t}, nil
}

func (m mysqlDialect) String() string { return TablePrefix + "* tables in " + m.target.String() }

// begin: READ COMMITTED (each connection's session level, set by
// rewriter.Connect), so that each statement reads what the writers before
// committed, as in SQLite's immediate transaction; the lock on the schema
// row makes writers (of every process and host) run one at a time. It is
// a lock, not a check of the version: its value is not looked at.
func (mysqlDialect) begin(ctx context.Context, db *sql.DB) (*sql.Tx, func(), error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, err
	}
	var v int
	if err := tx.QueryRowContext(ctx, mysqlWriteLock).Scan(&v); err != nil {
		tx.Rollback()
		return nil, nil, fmt.Errorf("taking the write lock: %w", err)
	}
	return tx, func() {}, nil
}

// ownRow: one statement committed by itself, under InnoDB's lock of the
// row alone: it waits for no writer but one writing that row, and holds
// no other lock that a writer could wait for.
func (mysqlDialect) ownRow(ctx context.Context, d *DB, fn func(execer) error) error {
	return fn(d.sql)
}

func (mysqlDialect) version(ctx context.Context, q rowQuerier) (int, error) {
	var v int
	err := q.QueryRowContext(ctx, mysqlVersion).Scan(&v)
	var me *mysql.MySQLError
	if errors.As(err, &me) && me.Number == 1146 || errors.Is(err, sql.ErrNoRows) { // no such table: empty
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("reading the schema version: %w", err)
	}
	return v, nil
}

// sync: InnoDB makes each commit durable itself.
func (mysqlDialect) sync() error { return nil }

// migrate runs the migrations due one by one under a named lock (DDL
// commits by itself on MariaDB: there is no one transaction for all):
// each migration's DDL may run again after a crash, and its history row
// and the new version are committed together.
func (m mysqlDialect) migrate(ctx context.Context, d *DB, list []migration) (MigrationReport, error) {
	known := latest(list)
	rep := MigrationReport{To: known}
	v, err := m.version(ctx, d.sql)
	if err != nil {
		return rep, err
	}
	rep.From = v
	if v == known {
		return rep, nil
	}
	if v > known {
		return rep, d.tooNew(v, known)
	}
	conn, err := d.sql.Conn(ctx)
	if err != nil {
		return rep, err
	}
	defer conn.Close()
	var got sql.NullInt64
	if err := conn.QueryRowContext(ctx, `SELECT GET_LOCK(CONCAT('rboinc_schema.', DATABASE()), 600)`).Scan(&got); err != nil {
		return rep, fmt.Errorf("taking the schema upgrade's lock: %w", err)
	}
	if got.Int64 != 1 {
		return rep, fmt.Errorf("another process has been upgrading the schema for 10 minutes: is one stuck?")
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), `DO RELEASE_LOCK(CONCAT('rboinc_schema.', DATABASE()))`)
	for _, q := range []string{mysqlSchemaTable, mysqlSchemaRow, historySQL} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return rep, fmt.Errorf("making the schema tables: %w", err)
		}
	}
	if v, err = m.version(ctx, conn); err != nil {
		return rep, err
	}
	rep.From = v
	if v > known {
		return rep, d.tooNew(v, known)
	}
	for _, mg := range list {
		if mg.version <= v {
			continue
		}
		if err := m.apply(ctx, conn, mg); err != nil {
			return MigrationReport{From: rep.From, To: v}, fmt.Errorf("upgrading the schema to version %d (%s): %w", mg.version, mg.name, err)
		}
		v = mg.version
		rep.Applied = append(rep.Applied, MigrationRecord{Version: mg.version, Name: mg.name, By: buildVersion()})
	}
	return rep, nil
}

func (m mysqlDialect) apply(ctx context.Context, conn *sql.Conn, mg migration) error {
	ddl, ok := mysqlSchema[mg.version]
	if !ok && mg.sql != "" {
		return fmt.Errorf("this rboinc has no MariaDB form of the migration")
	}
	for _, q := range ddl {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return err
		}
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if mg.fn != nil {
		if err := mg.fn(ctx, tx); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_history(version, name, applied, rboinc) VALUES (?, ?, ?, ?)`,
		mg.version, mg.name, time.Now().Unix(), buildVersion()); err != nil {
		return fmt.Errorf("recording the schema version: %w", err)
	}
	if _, err := tx.ExecContext(ctx, mysqlSetVersion, mg.version); err != nil {
		return fmt.Errorf("setting the schema version: %w", err)
	}
	return tx.Commit()
}

// rewriter is the MariaDB driver with every query rewritten by mysqlQuery
// on its way: raw queries through DB.SQL and transactions included.
type rewriter struct{ c driver.Connector }

// Connect sets each new connection's isolation level once (a reconnection
// after MariaDB's restart is a new connection): a level given per
// transaction is a statement more in each (SET TRANSACTION ISOLATION
// LEVEL before each BEGIN).
func (r rewriter) Connect(ctx context.Context) (driver.Conn, error) {
	c, err := r.c.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := c.(driver.ExecerContext).ExecContext(ctx, sessionIsolation, nil); err != nil {
		c.Close()
		return nil, fmt.Errorf("setting the session's isolation level: %w", err)
	}
	return rconn{c}, nil
}

// sessionIsolation is every state transaction's level (MariaDB's and
// MySQL's words alike).
const sessionIsolation = `SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED`

func (r rewriter) Driver() driver.Driver { return r.c.Driver() }

// rconn passes everything to the driver's connection, which implements
// each of these interfaces (go-sql-driver/mysql does).
type rconn struct{ driver.Conn }

func (c rconn) Prepare(q string) (driver.Stmt, error) { return c.Conn.Prepare(mysqlQuery(q)) }

func (c rconn) PrepareContext(ctx context.Context, q string) (driver.Stmt, error) {
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, mysqlQuery(q))
}

func (c rconn) ExecContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Result, error) {
	return c.Conn.(driver.ExecerContext).ExecContext(ctx, mysqlQuery(q), args)
}

func (c rconn) QueryContext(ctx context.Context, q string, args []driver.NamedValue) (driver.Rows, error) {
	return c.Conn.(driver.QueryerContext).QueryContext(ctx, mysqlQuery(q), args)
}

func (c rconn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c rconn) Ping(ctx context.Context) error { return c.Conn.(driver.Pinger).Ping(ctx) }

func (c rconn) ResetSession(ctx context.Context) error {
	return c.Conn.(driver.SessionResetter).ResetSession(ctx)
}

func (c rconn) IsValid() bool { return c.Conn.(driver.Validator).IsValid() }

func (c rconn) CheckNamedValue(nv *driver.NamedValue) error {
	return c.Conn.(driver.NamedValueChecker).CheckNamedValue(nv)
}
