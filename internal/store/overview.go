package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Read-only summaries for the status page, the metrics and the report.
// Each is one aggregate query, so that a user with 10,000 chains costs a
// few milliseconds, not a row per chain.

// GroupCount is how many chains of one user's group are in one state, and
// their steps.
type GroupCount struct {
	User      string // upper case, as chains carry it
	Group     string
	State     string
	Chains    int
	StepsDone int
	Steps     int // the chains' steps in all (nsteps)
}

// GroupCounts counts the chains (not purged) of a user, by group and
// state; userID 0 counts every user's.
func (d *DB) GroupCounts(ctx context.Context, userID int64) ([]GroupCount, error) {
	q := `SELECT u.name, c.grp, c.state, count(*), sum(c.steps_done), sum(c.nsteps)
		FROM chains c JOIN users u ON u.id = c.user_id WHERE c.state != 'purged'`
	var args []any
	if userID != 0 {
		q += ` AND c.user_id = ?`
		args = append(args, userID)
	}
	q += ` GROUP BY u.name, c.grp, c.state ORDER BY u.name, c.grp, c.state`
	rows, err := d.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("counting chains by group: %w", err)
	}
	defer rows.Close()
	var out []GroupCount
	for rows.Next() {
		var g GroupCount
		if err := rows.Scan(&g.User, &g.Group, &g.State, &g.Chains, &g.StepsDone, &g.Steps); err != nil {
			return nil, err
		}
		g.User = strings.ToUpper(g.User)
		out = append(out, g)
	}
	return out, rows.Err()
}

// FinishedStep is when one done step was made and finished (Unix seconds).
type FinishedStep struct {
	Group    string
	Created  int64
	Finished int64
}

// FinishedSteps lists the done steps of a user's chains (userID 0: every
// user's) finished at or after since, oldest first.
func (d *DB) FinishedSteps(ctx context.Context, userID, since int64) ([]FinishedStep, error) {
	q := `SELECT c.grp, s.created, s.finished FROM steps s JOIN chains c ON c.id = s.chain_id
		WHERE s.state = 'done' AND s.finished >= ? AND c.state != 'purged'`
	args := []any{since}
	if userID != 0 {
		q += ` AND c.user_id = ?`
		args = append(args, userID)
	}
	q += ` ORDER BY s.finished`
	rows, err := d.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("listing finished steps: %w", err)
	}
	defer rows.Close()
	var out []FinishedStep
	for rows.Next() {
		var f FinishedStep
		if err := rows.Scan(&f.Group, &f.Created, &f.Finished); err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, rows.Err()
}

// FailedChain is a failed chain with the reason, in words.
type FailedChain struct {
	User, Group, Name, Reason string
	StepsDone, Steps          int
	Updated                   int64
}

// FailedChains lists up to limit failed chains of a user (userID 0: every
// user's), the latest first, and how many there are in all.
func (d *DB) FailedChains(ctx context.Context, userID int64, limit int) ([]FailedChain, int, error) {
	where := `c.state = 'failed'`
	args := []any{}
	if userID != 0 {
		where += ` AND c.user_id = ?`
		args = append(args, userID)
	}
	var total int
	if err := d.sql.QueryRowContext(ctx, `SELECT count(*) FROM chains c WHERE `+where, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("counting failed chains: %w", err)
	}
	rows, err := d.sql.QueryContext(ctx, `SELECT u.name, c.grp, c.name, c.error, c.steps_done, c.nsteps, c.updated
		FROM chains c JOIN users u ON u.id = c.user_id WHERE `+where+` ORDER BY c.updated DESC, c.grp, c.name LIMIT ?`, append(args, limit)...)
	if err != nil {
		return nil, 0, fmt.Errorf("listing failed chains: %w", err)
	}
	defer rows.Close()
	var out []FailedChain
	for rows.Next() {
		var f FailedChain
		if err := rows.Scan(&f.User, &f.Group, &f.Name, &f.Reason, &f.StepsDone, &f.Steps, &f.Updated); err != nil {
			return nil, 0, err
		}
		f.User = strings.ToUpper(f.User)
		out = append(out, f)
	}
	return out, total, rows.Err()
}

// ChainRow is one chain of a group's listing.
type ChainRow struct {
	Name, State, Reason string
	StepsDone, Steps    int
	Updated             int64
}

// GroupChains lists a user's chains (not purged) of one group by name.
func (d *DB) GroupChains(ctx context.Context, userID int64, group string) ([]ChainRow, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT name, state, error, steps_done, nsteps, updated FROM chains
		WHERE user_id = ? AND grp = ? AND state != 'purged' ORDER BY name`, userID, group)
	if err != nil {
		return nil, fmt.Errorf("listing the chains of group %s: %w", group, err)
	}
	defer rows.Close()
	var out []ChainRow
	for rows.Next() {
		var c ChainRow
		if err := rows.Scan(&c.Name, &c.State, &c.Reason, &c.StepsDone, &c.Steps, &c.Updated); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// StepRow is one step of a chain, for its page.
type StepRow struct {
	Step     int
	WU       string
	State    string
	Created  int64
	Finished int64 // 0: not finished
	Attempts int
}

// Attempt is an earlier work unit of a step, which BOINC gave up on.
type Attempt struct {
	Step    int
	WU      string
	Attempt int
	Reason  string
	Ended   int64
}

// ChainSteps returns a chain's steps and the earlier attempts of them, in
// the order they ended. The step a done chain keeps recorded after its
// last (held for -extend) is not one of its steps and is left out.
func (d *DB) ChainSteps(ctx context.Context, chainID int64) ([]StepRow, []Attempt, error) {
	rows, err := d.sql.QueryContext(ctx, `SELECT s.step, s.wu_name, s.state, s.created, s.finished, s.attempts FROM steps s JOIN chains c ON c.id = s.chain_id
		WHERE s.chain_id = ? AND s.step < c.nsteps ORDER BY s.step`, chainID)
	if err != nil {
		return nil, nil, fmt.Errorf("listing the steps of chain %d: %w", chainID, err)
	}
	var steps []StepRow
	for rows.Next() {
		var s StepRow
		if err := rows.Scan(&s.Step, &s.WU, &s.State, &s.Created, &s.Finished, &s.Attempts); err != nil {
			rows.Close()
			return nil, nil, err
		}
		steps = append(steps, s)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	rows, err = d.sql.QueryContext(ctx, `SELECT step, wu_name, attempt, reason, ended FROM step_attempts WHERE chain_id = ? AND attempt > 0 ORDER BY step, rowid`, chainID)
	if err != nil {
		return nil, nil, fmt.Errorf("listing the earlier attempts of chain %d: %w", chainID, err)
	}
	defer rows.Close()
	var atts []Attempt
	for rows.Next() {
		var a Attempt
		if err := rows.Scan(&a.Step, &a.WU, &a.Attempt, &a.Reason, &a.Ended); err != nil {
			return nil, nil, err
		}
		atts = append(atts, a)
	}
	return steps, atts, rows.Err()
}

// Totals are server-wide figures for the metrics and the administrator.
type Totals struct {
	StepsCreated    int64 // work units made: steps and their earlier attempts
	StepsDone       int64
	StepsLate       int64
	PoolFiles       int64
	PoolBytes       int64
	UploadsOpen     int64
	ResultFiles     int64 // result files waiting for their users
	ResultBytes     int64
	ChainsByState   map[string]int64
	StepsByState    map[string]int64
	Users, Disabled int64
}

// ServerTotals reads the server-wide figures, each one aggregate.
func (d *DB) ServerTotals(ctx context.Context) (Totals, error) {
	t := Totals{ChainsByState: map[string]int64{}, StepsByState: map[string]int64{}}
	var attempts int64
	one := []struct {
		q    string
		dest []any
	}{
		{`SELECT count(*) FROM step_attempts`, []any{&attempts}},
		{`SELECT count(*) FROM steps WHERE late != 0 AND state IN ('queued', 'pending', 'creating')`, []any{&t.StepsLate}},
		{`SELECT count(*), COALESCE(sum(size), 0) FROM pool`, []any{&t.PoolFiles, &t.PoolBytes}},
		{`SELECT count(*) FROM uploads`, []any{&t.UploadsOpen}},
		{`SELECT count(*), COALESCE(sum(size), 0) FROM results`, []any{&t.ResultFiles, &t.ResultBytes}},
		{`SELECT count(*), COALESCE(sum(disabled != 0), 0) FROM users`, []any{&t.Users, &t.Disabled}},
	}
	for _, o := range one {
		if err := d.sql.QueryRowContext(ctx, o.q).Scan(o.dest...); err != nil {
			return t, fmt.Errorf("reading server totals: %w", err)
		}
	}
	for _, m := range []struct {
		q   string
		out map[string]int64
	}{
		{`SELECT state, count(*) FROM chains GROUP BY state`, t.ChainsByState},
		{`SELECT state, count(*) FROM steps GROUP BY state`, t.StepsByState},
	} {
		if err := countBy(ctx, d.sql, m.q, m.out); err != nil {
			return t, fmt.Errorf("reading server totals: %w", err)
		}
	}
	for _, n := range t.StepsByState {
		t.StepsCreated += n
	}
	t.StepsCreated += attempts
	t.StepsDone = t.StepsByState["done"]
	return t, nil
}

func countBy(ctx context.Context, db *sql.DB, q string, out map[string]int64) error {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			return err
		}
		out[k] = n
	}
	return rows.Err()
}

// LateStepRow is a step of a running chain that BOINC has held longer
// than its deadline (marked late by the watcher).
type LateStepRow struct {
	User, Group, Name, WU string
	Created               int64
}

// LateStepsOf lists the late steps of a user (userID 0: every user's).
func (d *DB) LateStepsOf(ctx context.Context, userID int64, limit int) ([]LateStepRow, error) {
	q := `SELECT u.name, c.grp, c.name, s.wu_name, s.created FROM steps s JOIN chains c ON c.id = s.chain_id JOIN users u ON u.id = c.user_id
		WHERE s.late != 0 AND s.state IN ('queued', 'pending', 'creating') AND c.state = 'running'`
	args := []any{}
	if userID != 0 {
		q += ` AND c.user_id = ?`
		args = append(args, userID)
	}
	q += ` ORDER BY s.created LIMIT ?`
	rows, err := d.sql.QueryContext(ctx, q, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("listing late steps: %w", err)
	}
	defer rows.Close()
	var out []LateStepRow
	for rows.Next() {
		var l LateStepRow
		if err := rows.Scan(&l.User, &l.Group, &l.Name, &l.WU, &l.Created); err != nil {
			return nil, err
		}
		l.User = strings.ToUpper(l.User)
		out = append(out, l)
	}
	return out, rows.Err()
}

// DiskOf is what a user's chains hold on disk: result files waiting for
// them, and the pool contents their chains refer to.
func (d *DB) DiskOf(ctx context.Context, userID int64) (results, pool int64, err error) {
	if err := d.sql.QueryRowContext(ctx, `SELECT COALESCE(sum(r.size), 0) FROM results r JOIN chains c ON c.id = r.chain_id WHERE c.user_id = ?`, userID).Scan(&results); err != nil {
		return 0, 0, fmt.Errorf("adding up result files: %w", err)
	}
	pool, err = poolBytesOf(ctx, d.sql, userID)
	return results, pool, err
}

// FailureReasons lists the reason of every failed chain of a user (userID
// 0: every user's).
func (d *DB) FailureReasons(ctx context.Context, userID int64) ([]string, error) {
	q := `SELECT error FROM chains WHERE state = 'failed'`
	var args []any
	if userID != 0 {
		q += ` AND user_id = ?`
		args = append(args, userID)
	}
	rows, err := d.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("reading the reasons of failed chains: %w", err)
	}
	return scanStrings(rows, err)
}

// StepCounts are done steps counted in SQL (the page of a user with
// 10,000 chains reads a few hundred rows, not every step).
type StepCounts struct {
	// Turnaround counts steps per bin of the edges given (seconds; len+1
	// bins), PerHour per hour back from now (index 0: the last hour).
	Turnaround []int
	PerHour    []int
	// Rates: per group, the steps finished since the rate cut and the
	// earliest creation among them (not before the cut).
	Rates map[string]GroupRate
}

// GroupRate is what a group's finishing rate is measured from.
type GroupRate struct {
	N     int
	Start int64
}

// CountSteps counts the done steps of a user (userID 0: every user's; a
// group: that group's only) finished at or after since.
func (d *DB) CountSteps(ctx context.Context, userID int64, group string, since, now int64, edges []int64, hours int, rateCut int64) (StepCounts, error) {
	sc := StepCounts{Turnaround: make([]int, len(edges)+1), PerHour: make([]int, hours), Rates: map[string]GroupRate{}}
	var bin strings.Builder
	bin.WriteString("CASE")
	for i, e := range edges {
		fmt.Fprintf(&bin, " WHEN s.finished - s.created < %d THEN %d", e, i)
	}
	fmt.Fprintf(&bin, " ELSE %d END", len(edges))
	// The hour back from now, as a ladder too: integer division is spelt
	// differently by the two engines (MariaDB's / gives a decimal).
	var hour strings.Builder
	hour.WriteString("CASE WHEN s.finished > ? THEN -1")
	args := []any{now}
	for k := 1; k <= hours; k++ {
		fmt.Fprintf(&hour, " WHEN ? - s.finished < %d THEN %d", 3600*k, k-1)
		args = append(args, now)
	}
	fmt.Fprintf(&hour, " ELSE %d END", hours)
	q := `SELECT c.grp, ` + bin.String() + `, ` + hour.String() + `,
		count(*), min(CASE WHEN s.finished >= ? THEN max(s.created, ?) END), sum(s.finished >= ?)
		FROM steps s JOIN chains c ON c.id = s.chain_id
		WHERE s.state = 'done' AND s.finished >= ? AND c.state != 'purged'`
	args = append(args, rateCut, rateCut, rateCut, since)
	if userID != 0 {
		q += ` AND c.user_id = ?`
		args = append(args, userID)
	}
	if group != "" {
		q += ` AND c.grp = ?`
		args = append(args, group)
	}
	q += ` GROUP BY 1, 2, 3`
	rows, err := d.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return sc, fmt.Errorf("counting finished steps: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var grp string
		var b, h, n, recent int
		var st sql.NullInt64
		if err := rows.Scan(&grp, &b, &h, &n, &st, &recent); err != nil {
			return sc, err
		}
		start := st.Int64
		sc.Turnaround[b] += n
		if h >= 0 && h < hours {
			sc.PerHour[h] += n
		}
		if recent > 0 {
			r, ok := sc.Rates[grp]
			if !ok || start < r.Start {
				r.Start = start
			}
			r.N += recent
			sc.Rates[grp] = r
		}
	}
	return sc, rows.Err()
}
