package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// finishStep records step of chain c's work unit as the engine's record
// does: its step looked up by name, then completed with one result, whose
// content (chained unless next is false) goes into the pool.
func finishStep(ctx context.Context, t *testing.T, db *DB, wu string, next bool) {
	t.Helper()
	c, s, err := db.StepByWU(ctx, wu)
	if err != nil {
		t.Fatalf("%s: %v", wu, err)
	}
	sum := md5n(int(c.ID)*100 + s.Step + 7)
	results := []Result{{ChainID: c.ID, Step: s.Step, Index: 0, File: fmt.Sprintf("%s_0", wu), MD5: sum, Size: 42}}
	var n *Step
	if next {
		n = &Step{ChainID: c.ID, Step: s.Step + 1, WU: c.WU(s.Step + 1), State: StatePending, Inputs: []string{sum, s.Inputs[1]}}
	}
	if _, _, _, err := db.CompleteStepPooling(ctx, c, s.Step, results, []PoolEntry{{MD5: sum, Size: 42}}, n); err != nil {
		t.Fatalf("%s: %v", wu, err)
	}
}

// groupRecords is what the records of a group left, names of work units
// and times aside: one line per row, in a stable order.
func groupRecords(t *testing.T, db *DB, group string) []string {
	t.Helper()
	var out []string
	add := func(kind, q string, n int) {
		rows, err := db.SQL().Query(q, group)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			v := make([]any, n)
			p := make([]any, n)
			for i := range v {
				p[i] = &v[i]
			}
			if err := rows.Scan(p...); err != nil {
				t.Fatal(err)
			}
			for i, x := range v {
				if b, ok := x.([]byte); ok {
					v[i] = string(b)
				}
			}
			out = append(out, kind+fmt.Sprint(v...))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
	}
	add("chain", `SELECT name, state, steps_done, error FROM chains WHERE grp = ? ORDER BY name`, 4)
	add("step", `SELECT c.name, s.step, s.state, s.attempts, s.finished != 0 FROM steps s JOIN chains c ON c.id = s.chain_id WHERE c.grp = ? ORDER BY c.name, s.step`, 5)
	add("input", `SELECT c.name, s.step, i.pos, i.md5 = '' FROM step_inputs i JOIN steps s ON s.wu_name = i.wu_name JOIN chains c ON c.id = s.chain_id
		WHERE c.grp = ? ORDER BY c.name, s.step, i.pos`, 4)
	add("result", `SELECT c.name, r.step, r.idx, r.size FROM results r JOIN chains c ON c.id = r.chain_id WHERE c.grp = ? ORDER BY c.name, r.step, r.idx`, 4)
	add("pooled", `SELECT c.name, r.step, p.size, EXISTS (SELECT 1 FROM pool_owners o WHERE o.md5 = r.md5 AND o.user_id = c.user_id)
		FROM results r JOIN chains c ON c.id = r.chain_id JOIN pool p ON p.md5 = r.md5 WHERE c.grp = ? ORDER BY c.name, r.step`, 4)
	add("event", `SELECT type, name, step, reason FROM events WHERE grp = ? ORDER BY id`, 4)
	return out
}

// TestBatchRecordsAsOneByOne: the steps a batch records through ReadAhead
// (gathered, written a statement per table) leave the same rows as the
// same records made one at a time, in every case the engine meets: a
// chain that goes on, one that ends (and ends its group), the same work
// unit twice, a missing chained output, a stopped chain.
func TestBatchRecordsAsOneByOne(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	type plan struct {
		wus  []string
		next []bool
	}
	setup := func(group string) plan {
		var ncs []NewChain
		for i := range 6 {
			ncs = append(ncs, batchChain(group, fmt.Sprint("go", i), md5n(1), md5n(2)))
		}
		ncs = append(ncs, batchChain(group, "missing", md5n(1), md5n(2)), batchChain(group, "stopped", md5n(1), md5n(2)))
		one := batchChain(group, "last", md5n(3), md5n(4))
		one.NSteps = 1
		// Stopped while its last step runs: it ends done all the same.
		stopLast := batchChain(group, "stoplast", md5n(3), md5n(4))
		stopLast.NSteps = 1
		ncs = append(ncs, one, stopLast)
		created, err := db.CreateChains(ctx, u, ncs)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"stopped", "stoplast"} {
			if _, err := db.Stop(ctx, u.ID, group, name, "by its user"); err != nil {
				t.Fatal(err)
			}
		}
		// A group whose chains all end in the batch: one group_done.
		var ends []NewChain
		for i := range 3 {
			e := batchChain(group+"-end", fmt.Sprint("end", i), md5n(5), md5n(6))
			e.NSteps = 1
			ends = append(ends, e)
		}
		endc, err := db.CreateChains(ctx, u, ends)
		if err != nil {
			t.Fatal(err)
		}
		wu := map[string]string{}
		for _, c := range append(created, endc...) {
			wu[c.Name] = c.WU(0)
		}
		// Gathered until the second call for go2, whose record, made
		// statement by statement, writes what was gathered first.
		var p plan
		for _, name := range []string{"go0", "go1", "last", "end0", "end1", "end2", "go2", "go2", "go3", "missing", "go4", "stopped", "stoplast", "go5"} {
			p.wus = append(p.wus, wu[name])
			p.next = append(p.next, name != "missing")
		}
		return p
	}
	single, batched := setup("single"), setup("batched")
	for i, wu := range single.wus {
		finishStep(ctx, t, db, wu, single.next[i])
	}
	if err := db.Batch(ctx, func(ctx context.Context) error {
		if err := db.ReadAhead(ctx, batched.wus); err != nil {
			return err
		}
		for i, wu := range batched.wus {
			finishStep(ctx, t, db, wu, batched.next[i])
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"", "-end"} {
		want, got := groupRecords(t, db, "single"+g), groupRecords(t, db, "batched"+g)
		if !slices.Equal(got, want) {
			t.Errorf("group %q: the batch recorded\n%s\none by one:\n%s", g, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	if got := groupRecords(t, db, "batched-end"); !slices.Contains(got, "event"+fmt.Sprint(EvGroupDone, "", -1, "")) {
		t.Errorf("no group_done for a group whose chains all ended in the batch:\n%s", strings.Join(got, "\n"))
	}
	for _, g := range []string{"single", "batched"} {
		for name, want := range map[string]string{"stoplast": "done", "stopped": "stopped"} {
			cs, err := db.Chains(ctx, u.ID, g, name)
			if err != nil || len(cs) != 1 {
				t.Fatalf("chain %s/%s: %v", g, name, err)
			}
			if cs[0].State != want {
				t.Errorf("chain %s/%s, stopped during step 0 of %d, is %s after it: want %s", g, name, cs[0].NSteps, cs[0].State, want)
			}
		}
		if got := groupRecords(t, db, g); !slices.Contains(got, "event"+fmt.Sprint(EvChainDone, "stoplast", 0, "")) {
			t.Errorf("group %s: no chain_done for the chain stopped during its last step:\n%s", g, strings.Join(got, "\n"))
		}
	}
}

// TestBatchGatheredRecordsAllOrNothing: a batch whose gathered records
// cannot be written (a next step's name taken meanwhile) commits none of
// its records, also those written one by one before.
func TestBatchGatheredRecordsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	db, u := openBatchDB(t)
	created, err := db.CreateChains(ctx, u, []NewChain{batchChain("g", "a", md5n(1), md5n(2)), batchChain("g", "b", md5n(1), md5n(2))})
	if err != nil {
		t.Fatal(err)
	}
	err = db.Batch(ctx, func(ctx context.Context) error {
		if err := db.ReadAhead(ctx, []string{created[0].WU(0), created[1].WU(0)}); err != nil {
			return err
		}
		finishStep(ctx, t, db, created[0].WU(0), true)
		// Chain b's next step is already there: its gathered insert fails.
		if err := db.Tx(ctx, func(tx *sql.Tx) error {
			return insertStep(ctx, tx, Step{ChainID: created[1].ID, Step: 1, WU: created[1].WU(1), State: StatePending})
		}); err != nil {
			return err
		}
		c, s, err := db.StepByWU(ctx, created[1].WU(0))
		if err != nil {
			return err
		}
		// The step was read ahead before the insert above: not fresh, so
		// recorded statement by statement, which finds the name taken.
		_, _, _, err = db.CompleteStepPooling(ctx, c, s.Step, nil, nil, &Step{ChainID: c.ID, Step: 1, WU: c.WU(1), State: StatePending})
		return err
	})
	if err == nil {
		t.Fatal("a batch with a failed record committed")
	}
	if s, err := db.StepOf(ctx, created[0], 0); err != nil || s.State == "done" {
		t.Fatalf("chain a's step 0 is %q after the batch failed (%v): its gathered record was committed", s.State, err)
	}
}
