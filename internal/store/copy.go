package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/rboinc/rboinc/internal/words"
)

// TableCopy is one table of a copied state: its rows and a checksum of
// their content, the same on both databases when the copy is whole.
type TableCopy struct {
	Table string
	Rows  int64
	Sum   string // SHA-256 over the rows in a fixed order, hex
}

// copyBatch is the rows of one INSERT in a copy.
const copyBatch = 200

// CopyTo copies every row of d into dst, an empty database at the same
// schema version (the migration of an SQLite state into MariaDB), then
// compares each table's row count and checksum on both. d's write lock is
// held throughout: nothing changes it during the copy. verify is called
// with the comparison before the lock is released, and an error from it
// fails the copy (migrate switches rboinc.json there, so that no write to
// d can come between the copy and the switch). The schema's own history
// is dst's.
func (d *DB) CopyTo(ctx context.Context, dst *DB, verify func([]TableCopy) error) ([]TableCopy, error) {
	sv, err := d.Version(ctx)
	if err != nil {
		return nil, err
	}
	dv, err := dst.Version(ctx)
	if err != nil {
		return nil, err
	}
	if sv != dv {
		return nil, fmt.Errorf("the source is at schema version %d, the target at %d: run the same rboinc on both", sv, dv)
	}
	var out []TableCopy
	copied := false // rows were written into dst: undo them on failure
	err = d.Tx(ctx, func(tx *sql.Tx) error {
		for _, t := range copyTables() {
			var n int64
			if err := dst.sql.QueryRowContext(ctx, `SELECT count(*) FROM `+t).Scan(&n); err != nil {
				return fmt.Errorf("%s: table %s: %w", dst, t, err)
			}
			if n > 0 && !seeded[t] {
				return fmt.Errorf("%s: table %s has %s already: copy only into an empty database", dst, t, words.Count64(n, "row", "rows"))
			}
		}
		out = out[:0]
		copied = true
		for _, t := range copyTables() {
			if seeded[t] {
				if _, err := dst.sql.ExecContext(ctx, `DELETE FROM `+t); err != nil {
					return fmt.Errorf("%s: table %s: %w", dst, t, err)
				}
			}
			cols, err := copyTable(ctx, tx, dst, t)
			if err != nil {
				return fmt.Errorf("copying table %s: %w", t, err)
			}
			src, err := tableSum(ctx, tx, t, cols)
			if err != nil {
				return fmt.Errorf("%s: table %s: %w", d, t, err)
			}
			got, err := tableSum(ctx, dst.sql, t, cols)
			if err != nil {
				return fmt.Errorf("%s: table %s: %w", dst, t, err)
			}
			if got != src {
				return fmt.Errorf("table %s: the copy differs (%d rows, checksum %.12s; the source has %d rows, checksum %.12s): nothing switched",
					t, got.Rows, got.Sum, src.Rows, src.Sum)
			}
			out = append(out, src)
		}
		if verify != nil {
			return verify(out)
		}
		return nil
	})
	if err != nil {
		if copied {
			err = errors.Join(err, dst.empty(context.WithoutCancel(ctx)))
		}
		return nil, err
	}
	return out, nil
}

// empty deletes every row of a failed copy, children first: the target
// was empty before it, and a second attempt needs it so.
func (d *DB) empty(ctx context.Context) error {
	ts := copyTables()
	return d.Tx(ctx, func(tx *sql.Tx) error {
		for i := len(ts) - 1; i >= 0; i-- {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+ts[i]); err != nil {
				return fmt.Errorf("emptying %s after the failed copy: %w", ts[i], err)
			}
		}
		return nil
	})
}

// seeded are the tables a migration fills (a new database has their row):
// a copy replaces their rows with the source's.
var seeded = map[string]bool{"notify_cursor": true}

// copyTables are the tables a copy moves: every one but the schema's
// history and the long polls in progress (none while the state moves)
// (tables lists them parents first).
func copyTables() []string {
	var out []string
	for _, t := range tables {
		if t != "schema_history" && t != "long_polls" {
			out = append(out, t)
		}
	}
	return out
}

// copyTable inserts table t's rows, read through tx in the order of their
// insertion, into dst, and returns the columns copied (the source's).
func copyTable(ctx context.Context, tx *sql.Tx, dst *DB, t string) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT * FROM `+t+` ORDER BY rowid`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var batch []any
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		q := `INSERT INTO ` + t + `(` + strings.Join(cols, ", ") + `) VALUES ` + valueRows(n, len(cols))
		err := dst.Tx(ctx, func(dtx *sql.Tx) error {
			_, err := dtx.ExecContext(ctx, q, batch...)
			return err
		})
		batch, n = batch[:0], 0
		return err
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		batch = append(batch, vals...)
		if n++; n == copyBatch {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return cols, flush()
}

// tableSum counts table t's rows and hashes cols of each, in the order of
// all of them (which both engines sort alike: numbers by value, text by
// bytes; each table's first columns are unique).
func tableSum(ctx context.Context, q querier, t string, cols []string) (TableCopy, error) {
	list := strings.Join(cols, ", ")
	rows, err := q.QueryContext(ctx, `SELECT `+list+` FROM `+t+` ORDER BY `+list)
	if err != nil {
		return TableCopy{}, err
	}
	defer rows.Close()
	h := sha256.New()
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	tc := TableCopy{Table: t}
	var lenBuf [8]byte
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return tc, err
		}
		for _, v := range vals {
			if !v.Valid {
				h.Write([]byte{0})
				continue
			}
			h.Write([]byte{1})
			binary.BigEndian.PutUint64(lenBuf[:], uint64(len(v.String)))
			h.Write(lenBuf[:])
			h.Write([]byte(v.String))
		}
		tc.Rows++
	}
	if err := rows.Err(); err != nil {
		return tc, err
	}
	tc.Sum = hex.EncodeToString(h.Sum(nil))
	return tc, nil
}
