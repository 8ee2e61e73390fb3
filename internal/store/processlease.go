package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"time"
)

// A submission records its chains' step 0 as "creating" and only then runs
// create_work; a process killed in between leaves steps nobody creates. Each
// such step names its owner, the process that recorded it, whose row in
// process_leases it renews while it lives. A step whose owner's lease ran
// out (by the database's clock, which every host reads alike) or whose
// owner is a dead process of this host is handed to the batch creator
// (ReviveCreating): within seconds of the owner's death, never while it
// lives, however slow its create_work.

// LeaseTTL is how long a process's lease lasts unrenewed; it is renewed
// every LeaseTTL/3. A variable for the tests.
var LeaseTTL = 30 * time.Second

// processLease is this process's lease: registered with its first
// submission (in that submission's transaction), renewed until Close.
type processLease struct {
	once sync.Once
	id   string
	stop chan struct{}
	done chan struct{}

	// What a submission of this process left creating when recording its
	// end failed (the database away): released to the creator at the next
	// renewal, since this process, alive, would hold it for good.
	mu              sync.Mutex
	abandonedWUs    []string
	abandonedChains []int64

	// renewed is when the last renewal that committed began (zero: none
	// since the lease was taken; under mu).
	renewed time.Time
}

// abandon sets steps aside for release (see processLease).
func (d *DB) abandon(wus []string, chains []int64) {
	d.lease.mu.Lock()
	defer d.lease.mu.Unlock()
	d.lease.abandonedWUs = append(d.lease.abandonedWUs, wus...)
	d.lease.abandonedChains = append(d.lease.abandonedChains, chains...)
}

// HandToCreator hands the steps of work units wus that this process
// recorded as creating to the creator (pending, no owner) at its lease's
// next renewal, and at each one after until the state database takes the
// change: for a submission that could neither finish its steps nor undo
// them (both databases away), whose steps nobody would create while this
// process lives. The creator records the work units BOINC has and makes
// the others.
func (d *DB) HandToCreator(wus []string) { d.abandon(wus, nil) }

// releaseAbandoned hands the steps set aside by abandon to the creator
// (pending, no owner); those that moved on meanwhile are left alone.
func (d *DB) releaseAbandoned(ctx context.Context) error {
	d.lease.mu.Lock()
	wus, chains := d.lease.abandonedWUs, d.lease.abandonedChains
	d.lease.abandonedWUs, d.lease.abandonedChains = nil, nil
	d.lease.mu.Unlock()
	if len(wus) == 0 && len(chains) == 0 {
		return nil
	}
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		for start := 0; start < len(wus); start += maxListArgs {
			part := wus[start:min(start+maxListArgs, len(wus))]
			if _, err := tx.ExecContext(ctx, `UPDATE steps SET state = 'pending', owner = '' WHERE state = 'creating' AND owner = ? AND wu_name IN `+inList(len(part)),
				append([]any{d.lease.id}, anys(part)...)...); err != nil {
				return err
			}
		}
		for start := 0; start < len(chains); start += maxListArgs {
			part := chains[start:min(start+maxListArgs, len(chains))]
			args := []any{d.lease.id}
			for _, id := range part {
				args = append(args, id)
			}
			if _, err := tx.ExecContext(ctx, `UPDATE steps SET state = 'pending', owner = '' WHERE state = 'creating' AND owner = ? AND step = 0 AND chain_id IN `+inList(len(part)), args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		d.abandon(wus, chains) // at the next renewal
	}
	return err
}

// leaseID returns this process's owner id, made once.
func (d *DB) leaseID() string {
	d.lease.once.Do(func() {
		b := make([]byte, 12)
		rand.Read(b)
		d.lease.id = hex.EncodeToString(b)
	})
	return d.lease.id
}

// takeLease records (or renews) this process's lease within tx, the
// transaction that records the steps it will own, and starts renewing it.
func (d *DB) takeLease(ctx context.Context, ex execer) (string, error) {
	id := d.leaseID()
	self := thisProcess()
	if _, err := ex.ExecContext(ctx, `INSERT INTO process_leases(id, host, pid, started, expires) VALUES (?, ?, ?, ?, unixepoch() + ?)
		ON CONFLICT(id) DO UPDATE SET expires = excluded.expires`, id, self.host, self.pid, self.started, leaseSeconds()); err != nil {
		return "", fmt.Errorf("recording the submitting process's lease: %w", err)
	}
	d.leaseMu.Lock()
	if d.lease.stop == nil {
		d.lease.stop, d.lease.done = make(chan struct{}), make(chan struct{})
		go d.renewLease(d.lease.stop, d.lease.done)
	}
	d.leaseMu.Unlock()
	return id, nil
}

// leaseHeld is takeLease for a transaction that needs the lease only to
// exist while it commits and after (a notifier's claims): a lease renewed
// lately is left alone, where takeLease would write it again (a statement
// of each claim, two a work unit in the long soak). Fresh is less than
// half of LeaseTTL (less its expiry's rounding to the second) since the
// last renewal began: its expiry, by the database's clock, is still at
// least half of LeaseTTL ahead, and nobody (of any host) can have removed
// it, since it runs out only then. Both clocks must say so: the monotonic
// one stops while the machine sleeps, the database's does not.
func (d *DB) leaseHeld(ctx context.Context, ex execer) (string, error) {
	d.lease.mu.Lock()
	renewed := d.lease.renewed
	d.lease.mu.Unlock()
	fresh := LeaseTTL/2 - time.Second
	if !renewed.IsZero() && time.Since(renewed) < fresh && time.Now().Round(0).Sub(renewed.Round(0)) < fresh {
		return d.leaseID(), nil
	}
	return d.takeLease(ctx, ex)
}

func leaseSeconds() int64 { return max(1, int64(LeaseTTL/time.Second)) }

// renewLease renews the lease every LeaseTTL/3 until stop closes. A
// renewal that fails (the database away for a moment) is tried again at
// the next tick: the lease has two more before it runs out.
func (d *DB) renewLease(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(max(LeaseTTL/3, 100*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), LeaseTTL/3)
		self := thisProcess()
		began := time.Now()
		// An upsert: a lease that ran out (a process frozen for longer
		// than LeaseTTL) was removed by ReviveCreating, whose steps are
		// the creator's now; the steps this process records next are
		// leased again. Not behind the write lock (ownRow): renewals
		// waiting for a writer that held it longer than LeaseTTL (a
		// purge, 35 s to 3 min in the 1,000,000-work-unit run) let every
		// live process's lease run out, and the first claim after it took
		// a live notifier's deliveries, sent and waiting to be recorded,
		// and sent them again.
		err := d.dialect.ownRow(ctx, d, func(tx execer) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO process_leases(id, host, pid, started, expires) VALUES (?, ?, ?, ?, unixepoch() + ?)
				ON CONFLICT(id) DO UPDATE SET expires = excluded.expires`, d.lease.id, self.host, self.pid, self.started, leaseSeconds())
			return err
		})
		d.lease.mu.Lock()
		if err == nil {
			d.lease.renewed = began
		}
		d.lease.mu.Unlock()
		d.releaseAbandoned(ctx)
		cancel()
	}
}

// endLease stops renewing and removes the lease: the steps this process
// still owns (a submission cut short by the close) are anybody's now.
func (d *DB) endLease() {
	d.leaseMu.Lock()
	stop, done := d.lease.stop, d.lease.done
	d.lease.stop = nil
	d.leaseMu.Unlock()
	if stop == nil {
		return
	}
	close(stop)
	<-done
	d.lease.mu.Lock()
	d.lease.renewed = time.Time{}
	d.lease.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d.Tx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM process_leases WHERE id = ?`, d.lease.id)
		return err
	})
}

// processIdentity names a process so that another process can tell
// whether it still runs: host is the machine and pid namespace (pids of
// the same host are comparable), started the process's start time (a pid
// reused by another process has another).
type processIdentity struct {
	host    string
	pid     int
	started int64
}

var (
	selfOnce sync.Once
	self     processIdentity
)

func thisProcess() processIdentity {
	selfOnce.Do(func() {
		self = processIdentity{host: hostKey(), pid: os.Getpid(), started: processStart(os.Getpid())}
	})
	return self
}

// leaseRow is a lease as ReviveCreating reads it.
type leaseRow struct {
	id      string
	proc    processIdentity
	expires int64
}

// deadOwner tells whether a lease's process is gone: its lease ran out, or
// it is a process of this host that no longer runs.
func (l leaseRow) dead(now int64, here processIdentity) bool {
	if l.expires <= now {
		return true
	}
	if l.proc.host == "" || l.proc.host != here.host {
		return false // another host's: its lease says
	}
	s := processStart(l.proc.pid)
	if s == startUnknown {
		return false // it runs; whether it is the same process its lease says
	}
	return s != l.proc.started
}

// startUnknown is processStart's answer for a process that runs but whose
// start this process may not read.
const startUnknown = -2

// ReviveCreating hands to the batch creator the steps left "creating" by
// a process that is gone, and returns how many: a submission stopped (a
// crash, a kill) between recording its chains and recording their work
// units as created leaves them so. The creator then creates their work
// units, or finds them in BOINC already (create_work refuses a name it
// holds: alreadyCreated), or fails the chain with create_work's reason. A
// step whose owner still runs is left alone, however long it takes. Steps
// with no owner (recorded by an earlier version, or by a hook of one) are
// taken once they are older than legacyCutoff, as before leases.
func (d *DB) ReviveCreating(ctx context.Context, legacyCutoff time.Time) (int64, error) {
	here := thisProcess()
	var n int64
	err := d.Tx(ctx, func(tx *sql.Tx) error {
		owners, err := scanStrings(tx.QueryContext(ctx, `SELECT DISTINCT owner FROM steps WHERE state = 'creating'`))
		if err != nil {
			return err
		}
		rows, err := tx.QueryContext(ctx, `SELECT id, host, pid, started, expires, unixepoch() FROM process_leases`)
		if err != nil {
			return err
		}
		live := map[string]bool{}
		var gone []any
		for rows.Next() {
			var l leaseRow
			var now int64
			if err := rows.Scan(&l.id, &l.proc.host, &l.proc.pid, &l.proc.started, &l.expires, &now); err != nil {
				rows.Close()
				return err
			}
			if l.dead(now, here) {
				gone = append(gone, l.id)
			} else {
				live[l.id] = true
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		var orphans []any
		for _, o := range owners {
			if o != "" && !live[o] {
				orphans = append(orphans, o)
			}
		}
		if len(orphans) > 0 {
			res, err := tx.ExecContext(ctx, `UPDATE steps SET state = 'pending', owner = '' WHERE state = 'creating' AND owner IN `+inList(len(orphans)), orphans...)
			if err != nil {
				return err
			}
			m, _ := res.RowsAffected()
			n += m
		}
		res, err := tx.ExecContext(ctx, `UPDATE steps SET state = 'pending' WHERE state = 'creating' AND owner = '' AND created < ?`, legacyCutoff.Unix())
		if err != nil {
			return err
		}
		m, _ := res.RowsAffected()
		n += m
		// The leases of processes gone go too: a process of CGI requests
		// dies with each, and a killed one cannot remove its own.
		if len(gone) > 0 {
			if _, err := tx.ExecContext(ctx, `DELETE FROM process_leases WHERE id IN `+inList(len(gone)), gone...); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}

// Leases counts the process leases recorded (live or not yet collected).
func (d *DB) Leases(ctx context.Context) (int, error) {
	var n int
	err := d.sql.QueryRowContext(ctx, `SELECT count(*) FROM process_leases`).Scan(&n)
	return n, err
}
