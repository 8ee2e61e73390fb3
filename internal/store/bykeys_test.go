package store

import (
	"context"
	"fmt"
	"testing"
)

// rowsRead is how many rows MariaDB's handlers have read in all (scans and
// index range reads); 0 on SQLite, which has no such count.
func rowsRead(t *testing.T, d *DB) int64 {
	t.Helper()
	if !onMariaDB() {
		return 0
	}
	var total int64
	rows, err := d.sql.Query(`SHOW GLOBAL STATUS WHERE Variable_name IN ('Handler_read_next', 'Handler_read_rnd_next', 'Handler_read_prev')`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var n int64
		if err := rows.Scan(&name, &n); err != nil {
			t.Fatal(err)
		}
		total += n
	}
	return total
}

// A purge, a deletion of chains, a chain marked for attention and a
// removed webhook read the rows they change, not the whole of a long
// project's tables: on MariaDB 10.11 a DELETE or UPDATE whose WHERE has
// IN (SELECT ...) read every row of step_inputs (or of the outbox) for
// each chain purged. Not parallel: it reads the server's global counts.
func TestSubqueryWritesReadOnlyTheirRows(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	const others = 20000
	var args []any
	for i := range others {
		args = append(args, fmt.Sprintf("other-%d", i/4), i%4, md5n(i))
	}
	if err := insertValues(ctx, db.sql, `INSERT INTO step_inputs(wu_name, pos, md5) VALUES `, 3, args); err != nil {
		t.Fatal(err)
	}
	if err := db.AddNotifyTarget(ctx, NotifyTarget{UserID: u.ID, Kind: NotifyWebhook, Address: "http://a.example/x", Events: []string{"all"}}); err != nil {
		t.Fatal(err)
	}
	if err := db.AddNotifyTarget(ctx, NotifyTarget{UserID: u.ID, Kind: NotifyWebhook, Address: "http://b.example/y", Events: []string{"all"}}); err != nil {
		t.Fatal(err)
	}
	targets, err := db.NotifyTargets(ctx, u.ID)
	if err != nil || len(targets) != 2 {
		t.Fatalf("targets %v: %v", targets, err)
	}
	args = args[:0]
	for i := range others / 4 {
		args = append(args, targets[0].ID, i, "{}", 0, 0)
	}
	if err := insertValues(ctx, db.sql, `INSERT INTO notify_outbox(target_id, event_id, payload, next_try, created) VALUES `, 5, args); err != nil {
		t.Fatal(err)
	}
	var ncs []NewChain
	for i := range 3000 {
		ncs = append(ncs, batchChain("g", fmt.Sprint("c", i), md5n(100000+i)))
	}
	created, err := db.CreateChains(ctx, u, ncs)
	if err != nil {
		t.Fatal(err)
	}

	type op struct {
		name, others string
		do           func() error
	}
	ops := []op{
		{"purge of one chain", "20,000 step inputs, 3,000 chains", func() error { _, _, err := db.Purge(ctx, u.ID, "g", "c0"); return err }},
		{"deletion of one chain", "20,000 step inputs, 3,000 chains", func() error { return db.DeleteChains(ctx, []int64{created[1].ID}) }},
		{"chain marked for attention", "3,000 chains", func() error {
			n, err := db.MarkAttention(ctx, "CAROL", "g", "c2", "a test")
			if err == nil && n != 1 {
				err = fmt.Errorf("marked %d chains, want 1", n)
			}
			return err
		}},
		{"webhook removed", "5,000 deliveries to another target", func() error {
			found, err := db.RemoveNotifyTargets(ctx, u.ID, NotifyWebhook, "http://b.example/y")
			if err == nil && !found {
				err = fmt.Errorf("the target was not found")
			}
			return err
		}},
	}
	for _, o := range ops {
		before := rowsRead(t, db)
		if err := o.do(); err != nil {
			t.Fatalf("%s: %v", o.name, err)
		}
		// A few rows of its own; the tables hold thousands of others.
		if n := rowsRead(t, db) - before; n > 1000 {
			t.Errorf("%s read %d rows beside %s", o.name, n, o.others)
		}
	}
	var left int
	if err := db.sql.QueryRow(`SELECT count(*) FROM step_inputs`).Scan(&left); err != nil || left != others {
		t.Fatalf("%d step inputs left, want the %d of other steps (%v)", left, others, err)
	}
	if err := db.sql.QueryRow(`SELECT count(*) FROM notify_outbox`).Scan(&left); err != nil || left != others/4 {
		t.Fatalf("%d deliveries left, want the %d of the other target (%v)", left, others/4, err)
	}
}
