package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
)

// traceMissing prints, for events that never reached the webhook, where
// each one stopped: not recorded at all, recorded but not queued (after
// the notifier's cursor), or queued (its delivery's attempts, claim and
// last error), with the notifier's cursor and the head of each target's
// queue, which holds up the rest of that target's events. A loss is then
// told apart from a slow or blocked delivery without the run's database.
func (s *soak) traceMissing(missing []string) {
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	st, err := engine.OpenCurrentState(ctx, s.root)
	if err != nil {
		fmt.Printf("missing events: cannot open the state: %v\n", err)
		return
	}
	defer st.Close()
	traceEvents(ctx, os.Stdout, st.SQL(), missing)
}

// traceEvents writes traceMissing's account of the missing events
// (user/group/chain/type) to w.
func traceEvents(ctx context.Context, w io.Writer, db *sql.DB, missing []string) {
	now := time.Now().Unix()
	var cursor int64
	if err := db.QueryRowContext(ctx, `SELECT last_event FROM notify_cursor WHERE id = 1`).Scan(&cursor); err != nil {
		fmt.Fprintf(w, "missing events: the notifier's cursor: %v\n", err)
	}
	fmt.Fprintf(w, "missing events: the notifier's cursor is at event %d\n", cursor)
	for _, k := range missing[:min(10, len(missing))] {
		p := strings.SplitN(k, "/", 4)
		if len(p) != 4 {
			continue
		}
		var id, at int64
		err := db.QueryRowContext(ctx, `SELECT e.id, e.time FROM events e JOIN users u ON u.id = e.user_id
			WHERE u.name = ? AND e.grp = ? AND e.name = ? AND e.type = ? ORDER BY e.id LIMIT 1`, p[0], p[1], p[2], p[3]).Scan(&id, &at)
		if errors.Is(err, sql.ErrNoRows) {
			fmt.Fprintf(w, "  %s: not in the events table\n", k)
			continue
		}
		if err != nil {
			fmt.Fprintf(w, "  %s: %v\n", k, err)
			continue
		}
		var attempts, nextTry int64
		var by, last string
		err = db.QueryRowContext(ctx, `SELECT attempts, next_try, claimed_by, last_error FROM notify_outbox WHERE event_id = ?`, id).
			Scan(&attempts, &nextTry, &by, &last)
		switch {
		case errors.Is(err, sql.ErrNoRows) && id > cursor:
			fmt.Fprintf(w, "  %s: event %d (%d s ago), not queued yet (after the cursor)\n", k, id, now-at)
		case errors.Is(err, sql.ErrNoRows):
			fmt.Fprintf(w, "  %s: event %d (%d s ago), behind the cursor and not in the outbox: queued for no target, or deleted undelivered\n", k, id, now-at)
		case err != nil:
			fmt.Fprintf(w, "  %s: event %d: %v\n", k, id, err)
		default:
			fmt.Fprintf(w, "  %s: event %d (%d s ago) in the outbox: %d attempts, due in %d s, claimed by %q, last error %q\n",
				k, id, now-at, attempts, nextTry-now, by, last)
		}
	}
	rows, err := db.QueryContext(ctx, `SELECT o.target_id, o.event_id, o.attempts, o.next_try, o.claimed_by, o.last_error, n.waiting
		FROM notify_outbox o JOIN (SELECT target_id, min(id) AS head, count(*) AS waiting FROM notify_outbox GROUP BY target_id) n ON o.id = n.head`)
	if err != nil {
		fmt.Fprintf(w, "missing events: the outbox: %v\n", err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var target, ev, attempts, nextTry, waiting int64
		var by, last string
		if err := rows.Scan(&target, &ev, &attempts, &nextTry, &by, &last, &waiting); err != nil {
			fmt.Fprintf(w, "missing events: the outbox: %v\n", err)
			return
		}
		fmt.Fprintf(w, "  target %d: %d deliveries waiting; its first (event %d): %d attempts, due in %d s, claimed by %q, last error %q\n",
			target, waiting, ev, attempts, nextTry-now, by, last)
	}
}
