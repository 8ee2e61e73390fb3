package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// columnsSQL lists every table's columns, as SQLite understands them
// (comments and spacing of the CREATE statements aside).
const columnsSQL = `SELECT m.name, p.name, p.type, p."notnull", coalesce(p.dflt_value, ''), p.pk
	FROM sqlite_master m, pragma_table_info(m.name) p
	WHERE m.type = 'table' AND m.name != 'schema_history' ORDER BY m.name, p.cid`

// checkAdopted makes sure a database without a schema version that the
// baseline adopted has the baseline's tables, column for column: the
// baseline's CREATE ... IF NOT EXISTS leaves existing tables as they are,
// so a database of some other program or a development snapshot would
// otherwise pass as version 1 and fail later, somewhere less clear.
func checkAdopted(ctx context.Context, tx *sql.Tx) error {
	want, err := baselineColumns(ctx)
	if err != nil {
		return err
	}
	got, err := tableColumns(ctx, tx)
	if err != nil {
		return err
	}
	for table, cols := range want {
		if got[table] != cols {
			return fmt.Errorf("%w: it has tables but no schema version, and its table %s is not the previous release's (%s, expected %s); restore a backup made by rboinc, or move it aside to start empty",
				errNotRboinc, table, orNone(got[table]), cols)
		}
	}
	return nil
}

// baselineColumns are the columns of the baseline schema, made in a
// throwaway in-memory database.
func baselineColumns(ctx context.Context) (map[string]string, error) {
	mem, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		return nil, err
	}
	defer mem.Close()
	mem.SetMaxOpenConns(1) // each connection to :memory: is a database of its own
	if _, err := mem.ExecContext(ctx, schemaV1); err != nil {
		return nil, fmt.Errorf("making the baseline schema: %w", err)
	}
	return tableColumns(ctx, mem)
}

func tableColumns(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, columnsSQL)
	if err != nil {
		return nil, fmt.Errorf("reading the tables' columns: %w", err)
	}
	defer rows.Close()
	cols := map[string][]string{}
	for rows.Next() {
		var table, name, typ, dflt string
		var notNull, pk int
		if err := rows.Scan(&table, &name, &typ, &notNull, &dflt, &pk); err != nil {
			return nil, err
		}
		c := name + " " + typ
		if notNull != 0 {
			c += " NOT NULL"
		}
		if dflt != "" {
			c += " DEFAULT " + dflt
		}
		if pk != 0 {
			c += fmt.Sprintf(" pk%d", pk)
		}
		cols[table] = append(cols[table], c)
	}
	out := map[string]string{}
	for t, cs := range cols {
		out[t] = strings.Join(cs, ", ")
	}
	return out, rows.Err()
}

func orNone(s string) string {
	if s == "" {
		return "missing"
	}
	return s
}
