package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rboinc/rboinc/internal/notifytarget"
)

// Notification target kinds.
const (
	NotifyWebhook = notifytarget.Webhook
	NotifyEmail   = notifytarget.Email
)

// DefaultNotifyEvents are the events a target gets unless its user chose.
var DefaultNotifyEvents = []string{EvChainDone, EvChainFailed, EvGroupDone}

// EventTypes lists every event type, for checking a user's choice.
var EventTypes = []string{EvStepCreated, EvStepDone, EvStepRetried, EvChainDone, EvChainFailed,
	EvChainStopped, EvChainResumed, EvChainExtended, EvChainAborted, EvGroupDone}

// NotifyTarget is where a user's events are sent.
type NotifyTarget struct {
	ID     int64
	UserID int64
	// Group limits the target to one group's events ("" for all): a
	// submission's -notify registers its group's.
	Group   string
	Kind    string // NotifyWebhook or NotifyEmail
	Address string // the webhook's URL or the e-mail address
	Events  []string
}

func (t NotifyTarget) wants(e Event) bool {
	if t.Group != "" && t.Group != e.Group {
		return false
	}
	return slices.Contains(t.Events, "all") || slices.Contains(t.Events, e.Type)
}

// ErrTooManyTargets refuses a target past the user's bound.
var ErrTooManyTargets = errors.New("too many notification targets")

// ErrEmailUnconfirmed refuses an e-mail target whose address the user has
// not confirmed and the administrator has not registered.
var ErrEmailUnconfirmed = errors.New("e-mail address not confirmed")

// AddNotifyTarget registers one target (AddNotifyTargets, no bound).
func (d *DB) AddNotifyTarget(ctx context.Context, t NotifyTarget) error {
	return d.AddNotifyTargets(ctx, []NotifyTarget{t}, 0)
}

// AddNotifyTargets registers targets, or changes the events of the same
// ones (user, group, kind, address), all or none. In the same transaction
// each user gets a webhook signing secret if they had none, so that no
// event is ever signed with an empty one. An e-mail target's address must
// be one its user confirmed or the administrator registered
// (ErrEmailUnconfirmed); limit > 0 bounds each user's targets
// (ErrTooManyTargets).
func (d *DB) AddNotifyTargets(ctx context.Context, ts []NotifyTarget, limit int) error {
	return d.Tx(ctx, func(tx *sql.Tx) error {
		users := map[int64]bool{}
		for _, t := range ts {
			if t.Kind == NotifyEmail {
				ok, err := emailConfirmed(ctx, tx, t.UserID, t.Address)
				if err != nil {
					return err
				}
				if !ok {
					return fmt.Errorf("%w: %s", ErrEmailUnconfirmed, t.Address)
				}
			}
			ev := strings.Join(t.Events, ",")
			res, err := tx.ExecContext(ctx, `UPDATE notify_targets SET event_types = ? WHERE user_id = ? AND grp = ? AND kind = ? AND address = ?`,
				ev, t.UserID, t.Group, t.Kind, t.Address)
			if err != nil {
				return err
			}
			if n, _ := res.RowsAffected(); n == 0 {
				if _, err := tx.ExecContext(ctx, `INSERT INTO notify_targets(user_id, grp, kind, address, event_types, created) VALUES (?,?,?,?,?,?)`,
					t.UserID, t.Group, t.Kind, t.Address, ev, now()); err != nil {
					return err
				}
			}
			users[t.UserID] = true
		}
		for u := range users {
			if _, err := tx.ExecContext(ctx, `UPDATE users SET notify_secret = ? WHERE id = ? AND notify_secret = ''`, newSecret(), u); err != nil {
				return fmt.Errorf("making the signing secret: %w", err)
			}
			if limit <= 0 {
				continue
			}
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM notify_targets WHERE user_id = ?`, u).Scan(&n); err != nil {
				return err
			}
			if n > limit {
				return fmt.Errorf("%w: that would make %d, at most %d are allowed", ErrTooManyTargets, n, limit)
			}
		}
		return nil
	})
}

// RemoveNotifyTargets removes a user's targets of that address (of every
// group scope) with what waits in their outbox; false when there was none.
func (d *DB) RemoveNotifyTargets(ctx context.Context, userID int64, kind, address string) (bool, error) {
	var found bool
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		ids, err := column(ctx, tx, `SELECT id FROM notify_targets WHERE user_id = ? AND kind = ? AND address = ?`, userID, kind, address)
		if err != nil {
			return err
		}
		if err := deleteByKeys(ctx, tx, "notify_outbox", "target_id", anys(ids)); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM notify_targets WHERE user_id = ? AND kind = ? AND address = ?`, userID, kind, address)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		found = n > 0
		return nil
	})
	return found, err
}

// NotifyTargets lists a user's targets (userID 0: everyone's).
func (d *DB) NotifyTargets(ctx context.Context, userID int64) ([]NotifyTarget, error) {
	q := `SELECT id, user_id, grp, kind, address, event_types FROM notify_targets`
	var args []any
	if userID != 0 {
		q += ` WHERE user_id = ?`
		args = append(args, userID)
	}
	rows, err := d.sql.QueryContext(ctx, q+` ORDER BY user_id, grp, kind, address`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scanTargets(rows)
}

func scanTargets(rows *sql.Rows) ([]NotifyTarget, error) {
	var out []NotifyTarget
	for rows.Next() {
		var t NotifyTarget
		var ev string
		if err := rows.Scan(&t.ID, &t.UserID, &t.Group, &t.Kind, &t.Address, &ev); err != nil {
			return nil, err
		}
		t.Events = strings.Split(ev, ",")
		out = append(out, t)
	}
	return out, rows.Err()
}

// NotifySecret is the user's webhook signing secret, made at the first ask.
func (d *DB) NotifySecret(ctx context.Context, userID int64) (string, error) {
	var secret string
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		if err := tx.QueryRowContext(ctx, `SELECT notify_secret FROM users WHERE id = ?`, userID).Scan(&secret); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return fmt.Errorf("user %d: %w", userID, ErrNotFound)
			}
			return err
		}
		if secret != "" {
			return nil
		}
		secret = newSecret()
		_, err := tx.ExecContext(ctx, `UPDATE users SET notify_secret = ? WHERE id = ?`, secret, userID)
		return err
	})
	return secret, err
}

// RotateNotifySecret gives the user a new signing secret.
func (d *DB) RotateNotifySecret(ctx context.Context, userID int64) (string, error) {
	secret := newSecret()
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE users SET notify_secret = ? WHERE id = ?`, secret, userID)
		return err
	})
	return secret, err
}

func newSecret() string {
	b := make([]byte, 32)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Delivery is one event on its way to one target.
type Delivery struct {
	ID       int64
	Target   NotifyTarget
	EventID  int64
	Payload  []byte // the event as JSON (wire.Event's fields)
	Attempts int
	Created  int64
	Secret   string // the target's user's signing secret
}

// NotifyPayload is the JSON an event is delivered as.
type NotifyPayload struct {
	ID     int64  `json:"id"`
	Time   int64  `json:"time"`
	User   string `json:"user"`
	Type   string `json:"type"`
	Group  string `json:"group"`
	Name   string `json:"name"`
	Step   int    `json:"step"`
	Reason string `json:"reason,omitempty"`
}

// FanOut puts the events after the notification cursor into the outbox of
// each target that wants them, at most limit events per call, and moves
// the cursor, all in one transaction: an event is queued once per target,
// whatever crashes. It returns how many events it read.
func (d *DB) FanOut(ctx context.Context, limit int) (int, error) {
	var n int
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		n = 0
		var cursor int64
		if err := tx.QueryRowContext(ctx, `SELECT last_event FROM notify_cursor WHERE id = 1`).Scan(&cursor); err != nil {
			return fmt.Errorf("reading the notification cursor: %w", err)
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, user_id, grp, kind, address, event_types FROM notify_targets`)
		if err != nil {
			return err
		}
		targets, err := scanTargets(rows)
		rows.Close()
		if err != nil {
			return err
		}
		byUser := map[int64][]NotifyTarget{}
		for _, t := range targets {
			byUser[t.UserID] = append(byUser[t.UserID], t)
		}
		rows, err = tx.QueryContext(ctx, `SELECT e.id, e.time, e.user_id, u.name, e.type, e.grp, e.name, e.step, e.reason
			FROM events e JOIN users u ON u.id = e.user_id WHERE e.id > ? ORDER BY e.id LIMIT ?`, cursor, limit)
		if err != nil {
			return err
		}
		type queued struct {
			target NotifyTarget
			ev     NotifyPayload
		}
		var out []queued
		last := cursor
		for rows.Next() {
			var e Event
			var p NotifyPayload
			if err := rows.Scan(&e.ID, &e.Time, &e.UserID, &p.User, &e.Type, &e.Group, &e.Name, &e.Step, &e.Reason); err != nil {
				rows.Close()
				return err
			}
			n++
			last = e.ID
			p.ID, p.Time, p.Type, p.Group, p.Name, p.Step, p.Reason = e.ID, e.Time, e.Type, e.Group, e.Name, e.Step, e.Reason
			// One delivery per address even when a user-wide and a
			// group's target both name it.
			seen := map[string]bool{}
			for _, t := range byUser[e.UserID] {
				if k := t.Kind + " " + t.Address; t.wants(e) && !seen[k] {
					seen[k] = true
					out = append(out, queued{t, p})
				}
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		t := now()
		for _, q := range out {
			body, _ := json.Marshal(q.ev)
			if _, err := tx.ExecContext(ctx, `INSERT INTO notify_outbox(target_id, event_id, payload, next_try, created) VALUES (?,?,?,?,?)`,
				q.target.ID, q.ev.ID, string(body), t, t); err != nil {
				return fmt.Errorf("queueing event %d for %s: %w", q.ev.ID, q.target.Address, err)
			}
		}
		// Moved only from where it was read: a second notifier that read
		// the same cursor rolls back instead of queueing twice.
		res, err := tx.ExecContext(ctx, `UPDATE notify_cursor SET last_event = ? WHERE id = 1 AND last_event = ?`, last, cursor)
		if err != nil {
			return err
		}
		if k, _ := res.RowsAffected(); k != 1 {
			return errors.New("the notification cursor moved under this notifier (another one runs): nothing queued")
		}
		return nil
	})
	return n, err
}

// Claim bounds what ClaimDeliveries takes.
type Claim struct {
	At    int64 // now, seconds since the epoch
	Lease int64 // seconds a claimed delivery is set aside
	// Limit bounds the targets taken (each with its batch of deliveries).
	Limit int
	// Batch bounds the deliveries taken of one target (≤ 1: one), its
	// next ones in event order, sent one after another by one caller.
	Batch int
	// PerUser bounds one user's targets in flight, Busy of them already
	// (0: no bound): one user's slow targets cannot take every slot. A
	// target's batch is sent one call at a time, so targets in flight are
	// the calls in flight.
	PerUser int
	Busy    map[int64]int
	// Flying, when not nil, are the deliveries this process has in
	// flight: never taken again by it, even once their claim ran out (a
	// sender trying on to record their outcome while the database is
	// away), and its other claims are taken again (a claim committed
	// whose answer was lost, the database killed meanwhile, which this
	// process never sent and nobody else would take while it lives).
	Flying map[int64]bool
}

// ClaimDeliveries takes deliveries that are due: the oldest waiting one of
// each target (found by the outbox's (target, event) index, a look-up a
// target: a minimum over the whole outbox made each claim cost as much as
// the backlog), with up to c.Batch-1 of that target's next ones, those due
// right after it in event order (the batch ends before the first that is
// not: one in its back-off, or another notifier's claim), returned
// together in event order. A target gets its events in order, and one that
// fails or hangs holds up no other. Users are taken in turn (each user's
// first target, then each one's second, ...), and what is taken is set
// aside for the lease so that no other notifier sends it meanwhile. Each
// claim names this process (its process lease): a delivery claimed by a
// notifier that is gone (killed mid-call: dead on this host, or its lease
// ran out) is due again at once, not only when the claim ends (90 s,
// during which its target got nothing at all).
func (d *DB) ClaimDeliveries(ctx context.Context, c Claim) ([]Delivery, error) {
	perUser := c.PerUser
	if perUser <= 0 {
		perUser = c.Limit
	}
	var out []Delivery
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		out = out[:0]
		me, err := d.leaseHeld(ctx, tx)
		if err != nil {
			return err
		}
		orphans, err := goneClaimers(ctx, tx, c.At, me)
		if err != nil {
			return err
		}
		var lost []any
		if c.Flying != nil {
			rows, err := tx.QueryContext(ctx, `SELECT id FROM notify_outbox WHERE claimed_by = ? AND next_try > ?`, me, c.At)
			if err != nil {
				return err
			}
			for rows.Next() {
				var id int64
				if err := rows.Scan(&id); err != nil {
					rows.Close()
					return err
				}
				if !c.Flying[id] {
					lost = append(lost, id)
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
		}
		busy := 0
		for _, n := range c.Busy {
			busy += min(n, perUser)
		}
		due := `o.next_try <= ?`
		args := []any{c.At}
		if len(orphans) > 0 {
			due += ` OR o.claimed_by IN ` + inList(len(orphans))
			args = append(args, orphans...)
		}
		if len(lost) > 0 {
			due += ` OR o.id IN ` + inList(len(lost))
			args = append(args, lost...)
		}
		due = "(" + due + ")"
		args = append(args, perUser, c.Limit+busy)
		rows, err := tx.QueryContext(ctx, `SELECT oid, event_id, payload, attempts, ocreated, next_try, claimed_by, tid, uid, grp, kind, address, event_types, secret
			FROM (SELECT o.id AS oid, o.event_id, o.payload, o.attempts, o.created AS ocreated, o.next_try, o.claimed_by,
					t.id AS tid, t.user_id AS uid, t.grp, t.kind, t.address, t.event_types, u.notify_secret AS secret,
					ROW_NUMBER() OVER (PARTITION BY t.user_id ORDER BY o.next_try, o.id) AS turn
				FROM notify_outbox o JOIN notify_targets t ON t.id = o.target_id JOIN users u ON u.id = t.user_id
				WHERE o.id IN (SELECT (SELECT h.id FROM notify_outbox h WHERE h.target_id = ht.id ORDER BY h.event_id LIMIT 1) FROM notify_targets ht) AND `+due+`) due
			WHERE turn <= ? ORDER BY turn, next_try, oid LIMIT ?`, args...)
		if err != nil {
			return err
		}
		type claim struct {
			id, nextTry int64
			by          string
		}
		var claims []claim
		taken := map[int64]int{}
		for rows.Next() {
			var dl Delivery
			var payload, ev, by string
			var nextTry int64
			if err := rows.Scan(&dl.ID, &dl.EventID, &payload, &dl.Attempts, &dl.Created, &nextTry, &by,
				&dl.Target.ID, &dl.Target.UserID, &dl.Target.Group, &dl.Target.Kind, &dl.Target.Address, &ev, &dl.Secret); err != nil {
				rows.Close()
				return err
			}
			if c.Flying[dl.ID] || len(out) == c.Limit || c.Busy[dl.Target.UserID]+taken[dl.Target.UserID] >= perUser {
				continue // in flight here: its outcome not yet recorded (see Flying)
			}
			taken[dl.Target.UserID]++
			dl.Payload, dl.Target.Events = []byte(payload), strings.Split(ev, ",")
			out = append(out, dl)
			claims = append(claims, claim{dl.ID, nextTry, by})
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		dueRow := func(id, nextTry int64, by string) bool {
			if c.Flying[id] {
				return false
			}
			return nextTry <= c.At || slices.Contains(orphans, any(by)) || slices.Contains(lost, any(id))
		}
		heads := out
		out = nil
		for i, head := range heads {
			batch := []Delivery{head}
			rest := []claim{claims[i]}
			if c.Batch > 1 {
				rows, err := tx.QueryContext(ctx, `SELECT id, event_id, payload, attempts, created, next_try, claimed_by
					FROM notify_outbox WHERE target_id = ? AND event_id > ? ORDER BY event_id LIMIT ?`, head.Target.ID, head.EventID, c.Batch-1)
				if err != nil {
					return err
				}
				for rows.Next() {
					dl := Delivery{Target: head.Target, Secret: head.Secret}
					var payload, by string
					var nextTry int64
					if err := rows.Scan(&dl.ID, &dl.EventID, &payload, &dl.Attempts, &dl.Created, &nextTry, &by); err != nil {
						rows.Close()
						return err
					}
					if !dueRow(dl.ID, nextTry, by) {
						break // the batch keeps the event order: nothing past a gap
					}
					dl.Payload = []byte(payload)
					batch = append(batch, dl)
					rest = append(rest, claim{dl.ID, nextTry, by})
				}
				rows.Close()
				if err := rows.Err(); err != nil {
					return err
				}
			}
			for j, cl := range rest {
				res, err := tx.ExecContext(ctx, `UPDATE notify_outbox SET next_try = ?, claimed_by = ? WHERE id = ? AND next_try = ? AND claimed_by = ?`,
					c.At+c.Lease, me, cl.id, cl.nextTry, cl.by)
				if err != nil {
					return err
				}
				if k, _ := res.RowsAffected(); k != 1 {
					batch = batch[:j] // taken meanwhile: the batch ends before it
					break
				}
			}
			out = append(out, batch...)
		}
		return nil
	})
	return out, err
}

// Outcome is what came of one target's claimed batch, recorded at once by
// RecordOutcome.
type Outcome struct {
	Done []int64 // delivered (or dropped): removed from the outbox
	// Failed, when not 0, is the first that failed: its attempt is
	// counted and it waits until NextTry.
	Failed  int64
	NextTry int64
	Reason  string
	// Rest were not tried (after a failure, or the claim near its end, or
	// the notifier stopping): due again at once, in their order, for
	// whoever claims the target next.
	Rest []int64
}

// RecordOutcome records a batch's outcome in one transaction. taken are
// the deliveries of o.Done that were no longer this process's claim (taken
// by another notifier once the claim ran out, or sent and removed by it):
// the receiver may get those again, from the other notifier.
func (d *DB) RecordOutcome(ctx context.Context, o Outcome) (taken []int64, err error) {
	err = d.Tx(ctx, func(tx *sql.Tx) error {
		taken = taken[:0]
		for ids := o.Done; len(ids) > 0; {
			n := min(len(ids), 500)
			mine, err := column(ctx, tx, `SELECT id FROM notify_outbox WHERE claimed_by = ? AND id IN `+inList(n), append([]any{d.leaseID()}, int64s(ids[:n])...)...)
			if err != nil {
				return err
			}
			for _, id := range ids[:n] {
				if !slices.Contains(mine, strconv.FormatInt(id, 10)) {
					taken = append(taken, id)
				}
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM notify_outbox WHERE id IN `+inList(n), int64s(ids[:n])...); err != nil {
				return err
			}
			ids = ids[n:]
		}
		if o.Failed != 0 {
			// Only this process's claim: one taken by another notifier
			// (this one's ran out) is that one's to record.
			if _, err := tx.ExecContext(ctx, `UPDATE notify_outbox SET attempts = attempts + 1, next_try = ?, last_error = ?, claimed_by = '' WHERE id = ? AND claimed_by = ?`,
				o.NextTry, o.Reason, o.Failed, d.leaseID()); err != nil {
				return err
			}
		}
		for ids := o.Rest; len(ids) > 0; {
			n := min(len(ids), 500)
			// Only this process's claims: one that ran out and was taken
			// by another notifier is that one's.
			if _, err := tx.ExecContext(ctx, `UPDATE notify_outbox SET next_try = ?, claimed_by = '' WHERE claimed_by = ? AND id IN `+inList(n),
				append([]any{now(), d.leaseID()}, int64s(ids[:n])...)...); err != nil {
				return err
			}
			ids = ids[n:]
		}
		return nil
	})
	return taken, err
}

func int64s(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// goneClaimers are the notifiers holding claims not yet ended whose
// process is gone (as ReviveCreating tells it: no live lease); me, this
// process, is never among them.
func goneClaimers(ctx context.Context, tx *sql.Tx, at int64, me string) ([]any, error) {
	claimers, err := scanStrings(tx.QueryContext(ctx, `SELECT DISTINCT claimed_by FROM notify_outbox WHERE claimed_by != '' AND next_try > ?`, at))
	if err != nil || len(claimers) == 0 {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT id, host, pid, started, expires, unixepoch() FROM process_leases WHERE id IN `+inList(len(claimers)), anys(claimers)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	here := thisProcess()
	live := map[string]bool{me: true}
	for rows.Next() {
		var l leaseRow
		var now int64
		if err := rows.Scan(&l.id, &l.proc.host, &l.proc.pid, &l.proc.started, &l.expires, &now); err != nil {
			return nil, err
		}
		if !l.dead(now, here) {
			live[l.id] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var gone []any
	for _, c := range claimers {
		if !live[c] {
			gone = append(gone, c)
		}
	}
	return gone, nil
}

// StillClaimed tells whether delivery id is still in the outbox under this
// process's claim: a batch makes no further call once its target was
// removed (its deliveries deleted with it) or its claim was taken by
// another notifier. A read, not a write transaction.
func (d *DB) StillClaimed(ctx context.Context, id int64) (bool, error) {
	var n int
	err := d.sql.QueryRowContext(ctx, `SELECT count(*) FROM notify_outbox WHERE id = ? AND claimed_by = ?`, id, d.leaseID()).Scan(&n)
	return n > 0, err
}

// Delivered removes a delivery that reached its target.
func (d *DB) Delivered(ctx context.Context, id int64) error {
	_, err := d.RecordOutcome(ctx, Outcome{Done: []int64{id}})
	return err
}

// DeliveryFailed records a failed attempt of this process's claim and
// when to try again.
func (d *DB) DeliveryFailed(ctx context.Context, id, nextTry int64, reason string) error {
	_, err := d.RecordOutcome(ctx, Outcome{Failed: id, NextTry: nextTry, Reason: reason})
	return err
}

// OutboxWaiting counts the deliveries not made yet and the oldest one's
// age in seconds (for doctor and metrics).
func (d *DB) OutboxWaiting(ctx context.Context) (n int, oldest int64, err error) {
	var first sql.NullInt64
	err = d.sql.QueryRowContext(ctx, `SELECT count(*), min(created) FROM notify_outbox`).Scan(&n, &first)
	if first.Valid {
		oldest = now() - first.Int64
	}
	return n, oldest, err
}
