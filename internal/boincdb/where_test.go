package boincdb

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"
)

// Where tells each work unit's place in BOINC from its results: all
// unsent (or none yet) waits, one in progress runs since its sent time,
// results back and not validated are being validated; decided work units
// and those BOINC does not hold are left out.
func TestWhere(t *testing.T) {
	engines(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		app, _ := AddApp(ctx, db, "rbtest")
		wu := func(name string) int64 {
			w := &Workunit{CreateTime: 1000, AppID: app, Name: name, SizeClass: -1, TransitionTime: Never}
			if err := w.Insert(ctx, db); err != nil {
				t.Fatal(err)
			}
			return w.ID
		}
		res := func(wu int64, name string, state, outcome, validate int, sent int64) int64 {
			r := &Result{WorkunitID: wu, Name: name, ServerState: state, Outcome: outcome, ValidateState: validate, SentTime: sent, SizeClass: -1}
			if err := r.Insert(ctx, db); err != nil {
				t.Fatal(err)
			}
			return r.ID
		}
		res(wu("unsent"), "unsent_0", ServerUnsent, OutcomeInit, ValidateInit, 0)
		wu("nores")
		run := wu("run")
		res(run, "run_0", ServerInProgress, OutcomeInit, ValidateInit, 5000)
		res(run, "run_1", ServerInProgress, OutcomeInit, ValidateInit, 4000)
		res(run, "run_2", ServerOver, OutcomeClientError, ValidateInit, 3000)
		val := wu("val")
		res(val, "val_0", ServerOver, OutcomeSuccess, ValidateInit, 3000)
		if _, err := db.ExecContext(ctx, `UPDATE workunit SET need_validate = 1 WHERE id = ?`, val); err != nil {
			t.Fatal(err)
		}
		retry := wu("retry") // a replica back unvalidated, another one unsent
		res(retry, "retry_0", ServerOver, OutcomeSuccess, ValidateInit, 3000)
		res(retry, "retry_1", ServerUnsent, OutcomeInit, ValidateInit, 0)
		done := wu("done")
		c := res(done, "done_0", ServerOver, OutcomeSuccess, ValidateValid, 3000)
		if _, err := db.ExecContext(ctx, `UPDATE workunit SET canonical_resultid = ? WHERE id = ?`, c, done); err != nil {
			t.Fatal(err)
		}
		got, err := db.Where(ctx, []string{"unsent", "nores", "run", "val", "retry", "done", "not-in-boinc"})
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]Place{
			"unsent": {State: PlaceUnsent}, "nores": {State: PlaceUnsent},
			"run": {State: PlaceInProgress, Since: 4000}, "val": {State: PlaceValidating},
			"retry": {State: PlaceUnsent},
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("Where = %v, want %v", got, want)
		}
	})
}

// Ten thousand chains' work units are read in a few batched queries, in
// bounded time.
func TestWhereMany(t *testing.T) {
	engines(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		app, _ := AddApp(ctx, db, "rbtest")
		const n = 10000
		names := make([]string, n)
		err := db.Tx(ctx, func(tx *sql.Tx) error {
			ex := &preparedTx{Tx: tx, stmts: map[string]*sql.Stmt{}}
			defer ex.close()
			for i := range names {
				names[i] = fmt.Sprintf("wu-%d", i)
				w := &Workunit{CreateTime: 1000, AppID: app, Name: names[i], SizeClass: -1, TransitionTime: Never}
				if err := w.Insert(ctx, ex); err != nil {
					return err
				}
				r := &Result{WorkunitID: w.ID, Name: names[i] + "_0", ServerState: ServerInProgress, SentTime: int64(2000 + i), SizeClass: -1}
				if err := r.Insert(ctx, ex); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		got, err := db.Where(ctx, names)
		took := time.Since(start)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("where of %d work units: %v", n, took)
		if len(got) != n || got["wu-9999"].Since != 2000+9999 {
			t.Errorf("Where of %d work units: %d, wu-9999 %+v", n, len(got), got["wu-9999"])
		}
		if took > 10*time.Second {
			t.Errorf("Where of %d work units took %v", n, took)
		}
	})
}

// preparedTx is a transaction that prepares each statement once: the rows
// of a test's setup by the ten thousand, inserted as the code inserts
// them, without parsing the same INSERT ten thousand times (slow under
// -race with the pure-Go SQLite).
type preparedTx struct {
	*sql.Tx
	stmts map[string]*sql.Stmt
}

func (p *preparedTx) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, ok := p.stmts[query]
	if !ok {
		var err error
		if st, err = p.PrepareContext(ctx, query); err != nil {
			return nil, err
		}
		p.stmts[query] = st
	}
	return st.ExecContext(ctx, args...)
}

func (p *preparedTx) close() {
	for _, st := range p.stmts {
		st.Close()
	}
}
