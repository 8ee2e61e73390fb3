package boincdb

import (
	"context"
	"fmt"
	"strings"

	"github.com/rboinc/rboinc/internal/sqldb"
)

// createColumns are the columns native creation writes or reads back, by
// table: every workunit column create_work sets, and the assignment row of
// targeted work.
func createColumns() map[string][]string {
	wu := []string{"id"}
	for _, c := range strings.Split(workunitCols, ",") {
		wu = append(wu, strings.TrimSpace(c))
	}
	return map[string][]string{
		"workunit":   wu,
		"assignment": {"id", "create_time", "target_id", "target_type", "multi", "workunitid", "resultid"},
	}
}

// MissingCreateColumns lists, as table.column, what native creation needs
// and BOINC's schema lacks (information_schema on MySQL, table_info on
// SQLite); a missing table shows as all its columns. Nothing is changed.
func (d *DB) MissingCreateColumns(ctx context.Context) ([]string, error) {
	var missing []string
	need := createColumns()
	for _, table := range []string{"workunit", "assignment"} {
		have, err := d.columns(ctx, table)
		if err != nil {
			return nil, fmt.Errorf("reading the columns of BOINC's table %s in %s: %w", table, d.Target, err)
		}
		for _, c := range need[table] {
			if !have[c] {
				missing = append(missing, table+"."+c)
			}
		}
	}
	return missing, nil
}

// CheckCreateColumns fails, naming them, when columns native creation
// writes are missing.
func (d *DB) CheckCreateColumns(ctx context.Context) error {
	missing, err := d.MissingCreateColumns(ctx)
	if err != nil {
		return err
	}
	if len(missing) > 0 {
		return fmt.Errorf("BOINC database %s lacks columns that native creation (\"create\": \"native\") writes: %s; use \"create\": \"create_work\" with this BOINC version", d.Target, strings.Join(missing, ", "))
	}
	return nil
}

func (d *DB) columns(ctx context.Context, table string) (map[string]bool, error) {
	q, args := "SELECT name FROM pragma_table_info(?)", []any{table}
	if d.Engine == sqldb.MySQL {
		q = "SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ?"
	}
	rows, err := d.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	have := map[string]bool{}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		have[strings.ToLower(c)] = true
	}
	return have, rows.Err()
}
