package boincdb

import (
	"context"
	"testing"
)

// TestCancelCountsWhatItChanged: Cancel reports the work units it
// cancelled, not those cancelled before: an -abort or -purge sent again
// (its answer lost) told the scientist, and the metrics, of cancellations
// that did not happen. What the first left (a result made unsent since)
// still ends.
func TestCancelCountsWhatItChanged(t *testing.T) {
	engines(t, func(t *testing.T, db *DB) {
		ctx := context.Background()
		app, err := AddApp(ctx, db, "rbtest")
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, name := range []string{"a", "b", "c"} {
			w := &Workunit{CreateTime: 1, AppID: app, Name: name, XMLDoc: "<x/>", TransitionTime: Never,
				MinQuorum: 1, TargetNResults: 1, MaxErrorResults: 1, MaxTotalResults: 1, MaxSuccessResults: 1,
				ResultTemplateFile: "templates/r", SizeClass: -1, AssimilateState: AssimilateInit}
			if err := w.Insert(ctx, db); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, w.ID)
		}
		unsent := func(wu int64, name string) int64 {
			r := &Result{WorkunitID: wu, Name: name, ServerState: ServerUnsent, AppID: app, SizeClass: -1}
			if err := r.Insert(ctx, db); err != nil {
				t.Fatal(err)
			}
			return r.ID
		}
		unsent(ids[0], "a_0")
		unsent(ids[1], "b_0")
		if n, err := db.Cancel(ctx, ids[:2]); err != nil || n != 2 {
			t.Fatalf("the first cancel: %d, %v; want 2", n, err)
		}
		// Sent again, with a work unit not cancelled yet and a result of a
		// cancelled one made unsent since.
		late := unsent(ids[0], "a_1")
		if _, err := db.ExecContext(ctx, `UPDATE workunit SET transition_time = ? WHERE id = ?`, Never, ids[0]); err != nil {
			t.Fatal(err)
		}
		if n, err := db.Cancel(ctx, ids); err != nil || n != 1 {
			t.Errorf("the cancel sent again: %d, %v; want 1 (c alone is cancelled anew)", n, err)
		}
		var state, outcome int
		if err := db.QueryRowContext(ctx, `SELECT server_state, outcome FROM result WHERE id = ?`, late).Scan(&state, &outcome); err != nil {
			t.Fatal(err)
		}
		if state != ServerOver || outcome != OutcomeDidntNeed {
			t.Errorf("the result made unsent since the first cancel: server_state %d outcome %d, want %d %d", state, outcome, ServerOver, OutcomeDidntNeed)
		}
		for _, id := range ids {
			var mask int
			var tt int64
			if err := db.QueryRowContext(ctx, `SELECT error_mask, transition_time FROM workunit WHERE id = ?`, id).Scan(&mask, &tt); err != nil {
				t.Fatal(err)
			}
			if mask != ErrCancelled || tt >= Never {
				t.Errorf("work unit %d: error_mask %d, transition_time %d; want %d and due", id, mask, tt, ErrCancelled)
			}
		}
		if n, err := db.Cancel(ctx, ids); err != nil || n != 0 {
			t.Errorf("the cancel sent a third time: %d, %v; want 0", n, err)
		}
	})
}
