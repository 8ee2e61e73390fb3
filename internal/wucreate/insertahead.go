package wucreate

import (
	"database/sql"
)

// aheadRows is how many prepared jobs an insert ahead waits for: one
// multi-row statement's worth (boincdb.InsertWorkunits).
const aheadRows = 500

// AheadTail is how many of a run's last jobs (Expect) are inserted ahead.
// The transaction ahead holds BOINC's database's write lock from its first
// insert to Finish: begun at the start of a run of 15,000 jobs it held it
// 4.7 s (0.7 s without inserts ahead), beyond the stand-in's daemons'
// 10 s busy timeout from about 30,000 (a submission takes up to 100,000).
// Begun this close to the end, it holds it for the rest of the recording,
// the files' durability and Finish, whatever the run's size; the jobs
// before go in its first statements at once.
const AheadTail = 5000

// InsertAhead makes the run insert its jobs into BOINC's database while
// they are still being added, a statement's worth at a time, in one
// transaction that Finish commits and Abort rolls back. Nothing is
// visible in BOINC before Finish, as without it, but the inserts run
// beside whatever the caller does meanwhile (a submission: recording its
// chains), and Finish is left the rest and the commit. The transaction
// holds BOINC's database's write lock from the first insert (SQLite) or
// the new rows' locks (MariaDB) until Finish or Abort. A failed insert
// ahead is rolled back and forgotten: Finish then inserts every job in a
// transaction of its own, as without InsertAhead, and answers for it.
func (r *Run) InsertAhead() { r.ahead.on = true }

// Expect says how many jobs the run will be given, so that only the last
// AheadTail are inserted ahead (see AheadTail). Called before the first
// Add; without it every job may be.
func (r *Run) Expect(n int) { r.ahead.expect = n }

// aheadTx is a run's transaction of jobs inserted ahead.
type aheadTx struct {
	on     bool
	tx     *sql.Tx
	done   int // r.rows[:done] are inserted in tx
	expect int // the jobs the run will have (Expect); 0: not known
}

// insertDue inserts the jobs prepared since the last insert once there
// are a statement's worth.
func (a *aheadTx) insertDue(r *Run) {
	if !a.on || len(r.rows)-a.done < aheadRows || len(r.rows) < a.expect-AheadTail {
		return
	}
	if a.tx == nil {
		tx, err := r.db.BeginTx(r.ctx, nil)
		if err != nil {
			a.off()
			return
		}
		a.tx = tx
	}
	if err := StoreAll(r.ctx, a.tx, r.appID, r.rows[a.done:]); err != nil {
		a.off()
		return
	}
	a.done = len(r.rows)
}

// commit inserts the jobs left and commits; false when there was no
// transaction ahead or it failed (rolled back then: Finish inserts every
// job itself). StoreAll skips names that exist, so a commit that failed
// after all (a connection lost during COMMIT) is safe to follow with
// Finish's own insert.
func (a *aheadTx) commit(r *Run) bool {
	if a.tx == nil {
		return false
	}
	if err := StoreAll(r.ctx, a.tx, r.appID, r.rows[a.done:]); err != nil {
		a.off()
		return false
	}
	err := a.tx.Commit()
	a.tx = nil
	a.on = false
	return err == nil
}

// rollback drops what was inserted ahead, if anything.
func (a *aheadTx) rollback() {
	if a.tx != nil {
		a.tx.Rollback()
	}
	a.tx, a.done = nil, 0
}

// off rolls back and inserts nothing more ahead.
func (a *aheadTx) off() {
	a.rollback()
	a.on = false
}

// InsertedAhead tells whether the run holds jobs inserted ahead in its
// open transaction: Finish then takes no lock it does not hold already,
// it inserts the rest there and commits. Asked between Add and Finish.
func (r *Run) InsertedAhead() bool { return r.ahead.tx != nil }
