package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Writers of an SQLite state database take turns, first come first
// served across processes. SQLite alone does not queue them: a writer that
// finds the write lock taken sleeps (its busy handler, up to 100 ms at a
// time) and tries again, while a process that commits and begins again at
// once takes the lock back in the microseconds between. Beside a busy
// server, another process's writer (the native assimilator's pass of a
// 100,000-work-unit run) so waited out the whole busy timeout behind a
// stream of transactions each far shorter than it, and failed with
// SQLITE_BUSY.
//
// So each write transaction first passes a turnstile: it locks byte 0 of
// the file <database>-writers (the turnstile), then byte 1 (the turn),
// lets the turnstile go, and holds the turn until it ends. A writer waiting
// for the turn holds the turnstile, which the writer ending must pass
// before it writes again: the two alternate, and no stream of writers
// passes one that waits. The locks are open file description locks: the
// kernel drops them when their process dies, however it dies.

// sqliteBusyTimeout is how long a writer waits for its turn (and SQLite's
// own busy timeout) before it fails.
var sqliteBusyTimeout = 20 * time.Second

// errWriteTurn is a writer that waited the busy timeout for its turn.
var errWriteTurn = errors.New("database is locked: other writers held the state database's write lock all the time")

// writeTurnPoll bounds the wait between two tries of a lock that is
// taken: the first retries are quick, as most transactions are short.
const writeTurnPoll = 2 * time.Millisecond

// takeWriteTurn waits for the turn of a write transaction on the SQLite
// database at path; release ends it. Where the system has no such locks,
// it returns at once (SQLite's busy handler alone then orders writers).
func takeWriteTurn(ctx context.Context, path string) (release func(), err error) {
	t, err := openTurns(path)
	if err != nil {
		return nil, fmt.Errorf("opening the state database's turn file: %w", err)
	}
	if t == nil {
		return func() {}, nil
	}
	deadline := time.Now().Add(sqliteBusyTimeout)
	if err := t.wait(ctx, turnstileByte, deadline); err != nil {
		t.close()
		return nil, err
	}
	err = t.wait(ctx, turnByte, deadline)
	t.unlock(turnstileByte)
	if err != nil {
		t.close()
		return nil, err
	}
	return t.close, nil // closing the file drops the turn
}

const (
	turnstileByte = 0
	turnByte      = 1
)

// wait takes lock byte b, trying again until deadline.
func (t *turnFile) wait(ctx context.Context, b int64, deadline time.Time) error {
	pause := 50 * time.Microsecond
	for {
		ok, err := t.tryLock(b)
		if err != nil {
			return fmt.Errorf("taking a turn to write the state database: %w", err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("waited %s: %w", sqliteBusyTimeout, errWriteTurn)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, writeTurnPoll)
	}
}
