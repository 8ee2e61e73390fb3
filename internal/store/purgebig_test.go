package store

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"
)

// bigGroup fills group g of u with chains chains of steps steps each, as
// a long run leaves them: every step but the last done with two results
// (half of them retrieved), its inputs and, for one step in ten, an
// attempt; the last step in BOINC. It returns the chains' ids.
func bigGroup(t testing.TB, db *DB, u User, g string, chains, steps int) []int64 {
	t.Helper()
	ctx := context.Background()
	var ncs []NewChain
	for i := range chains {
		nc := batchChain(g, fmt.Sprint("c", i), md5n(i), md5n(i+1))
		nc.NSteps = steps
		ncs = append(ncs, nc)
	}
	created, err := db.CreateChains(ctx, u, ncs)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(created))
	var st, in, at, res []any
	for i, c := range created {
		ids[i] = c.ID
		for s := 1; s < steps; s++ {
			wu := fmt.Sprintf("%s_%d_%d", g, c.ID, s)
			state := "done"
			if s == steps-1 {
				state = "queued"
			}
			st = append(st, c.ID, s, wu, state, 1)
			in = append(in, wu, 0, md5n(s), wu, 1, md5n(i))
			if s%10 == 0 {
				at = append(at, wu+"_r", c.ID, s, 0, "a test", 1)
			}
			if state == "done" {
				for k := range 2 {
					res = append(res, c.ID, s, k, fmt.Sprintf("%s_%d", wu, k), md5n(k), 10, (s+k)%2)
				}
			}
		}
	}
	for _, ins := range []struct {
		q    string
		k    int
		args []any
	}{
		{`INSERT INTO steps(chain_id, step, wu_name, state, created) VALUES `, 5, st},
		{`INSERT INTO step_inputs(wu_name, pos, md5) VALUES `, 3, in},
		{`INSERT INTO step_attempts(wu_name, chain_id, step, attempt, reason, ended) VALUES `, 6, at},
		{`INSERT INTO results(chain_id, step, idx, file, md5, size, acked) VALUES `, 7, res},
	} {
		if err := insertValues(ctx, db.sql, ins.q, ins.k, ins.args); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.sql.ExecContext(ctx, `UPDATE chains SET steps_done = ? WHERE user_id = ? AND grp = ?`, steps-1, u.ID, g); err != nil {
		t.Fatal(err)
	}
	return ids
}

// envInt is the integer in environment variable name, or def.
func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

// TestPurgeBigGroupMeasure times the purge of a big group (250 chains of
// 100 steps by default; PURGE_CHAINS, PURGE_STEPS) and reports its
// longest hold of the write lock and, on MariaDB, the rows its statements
// read. A measure, run by hand: PURGE_MEASURE=1 go test -run
// PurgeBigGroupMeasure -v (RBOINC_TEST_STATE_DB=mariadb for MariaDB).
func TestPurgeBigGroupMeasure(t *testing.T) {
	if os.Getenv("PURGE_MEASURE") == "" {
		t.Skip("a measure: PURGE_MEASURE=1")
	}
	ctx := context.Background()
	db, u := openBatchDB(t)
	nc, ns := envInt("PURGE_CHAINS", 250), envInt("PURGE_STEPS", 100)
	bigGroup(t, db, u, "big", nc, ns)
	bigGroup(t, db, u, "other", 50, ns)
	LongestWriteHold(true)
	before, stmts := rowsRead(t, db), statements(t, db)
	t0 := time.Now()
	chains, files, err := db.Purge(ctx, u.ID, "big", "")
	if err != nil {
		t.Fatal(err)
	}
	total, hold := time.Since(t0), LongestWriteHold(false)
	t.Logf("purge of %d chains x %d steps: %d chains, %d files, %v in all, longest write hold %v, rows read %d, statements %d",
		nc, ns, len(chains), len(files), total, hold, rowsRead(t, db)-before, statements(t, db)-stmts)
}

// statements is how many statements MariaDB has run for its clients, this
// one included (0 on SQLite).
func statements(t *testing.T, d *DB) int64 {
	t.Helper()
	if !onMariaDB() {
		return 0
	}
	var name string
	var n int64
	if err := d.sql.QueryRow(`SHOW GLOBAL STATUS LIKE 'Questions'`).Scan(&name, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPurgeExplain prints the plans of a piece's statements on MariaDB
// (PURGE_EXPLAIN=1): a measure, not a check.
func TestPurgeExplain(t *testing.T) {
	if !onMariaDB() || os.Getenv("PURGE_EXPLAIN") == "" {
		t.Skip("a measure on MariaDB")
	}
	db, u := openBatchDB(t)
	ids := bigGroup(t, db, u, "big", 250, 100)
	bigGroup(t, db, u, "other", 50, 100)
	in := inList(20)
	args := make([]any, 20)
	for i := range args {
		args[i] = ids[i]
	}
	for _, q := range []string{
		`SELECT file FROM results WHERE chain_id IN ` + in,
		`DELETE FROM results WHERE chain_id IN ` + in + ` RETURNING file`,
		`DELETE FROM results WHERE chain_id IN ` + in,
		`DELETE FROM step_inputs WHERE wu_name IN ('a', 'b', 'c')`,
		`SELECT wu_name FROM steps WHERE chain_id IN ` + in + ` AND state NOT IN ('creating', 'pending', 'queued')`,
		`DELETE FROM chain_inputs WHERE chain_id IN ` + in,
		`DELETE FROM steps WHERE chain_id IN ` + in + ` AND state = 'held'`,
		`UPDATE chains SET state = 'purged' WHERE id IN ` + in,
	} {
		rows, err := db.sql.Query(`EXPLAIN `+q, args...)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			rows.Scan(ptrs...)
			line := ""
			for i, v := range vals {
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				line += fmt.Sprintf("%s=%v ", cols[i], v)
			}
			t.Logf("%.60s: %s", q, line)
		}
		rows.Close()
	}
}
