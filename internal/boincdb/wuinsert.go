package boincdb

import (
	"context"
	"strings"
)

// insertChunk is the rows per multi-row INSERT: some hundreds, so that
// a statement's placeholders (33 per work unit) stay well within SQLite's
// 32,766 and MySQL's 65,535, and its text within max_allowed_packet.
const insertChunk = 500

// InsertWorkunits adds the rows, many per statement, every column named,
// as create_work --stdin's insert_batch does. IDs are not set: read them
// back by name (WorkunitIDs) where needed.
func InsertWorkunits(ctx context.Context, ex Execer, wus []*Workunit) error {
	one := inList(strings.Count(workunitCols, ",") + 1)
	for start := 0; start < len(wus); start += insertChunk {
		part := wus[start:min(start+insertChunk, len(wus))]
		var q strings.Builder
		q.WriteString("INSERT INTO workunit (" + workunitCols + ") VALUES ")
		args := make([]any, 0, len(part)*33)
		for i, w := range part {
			if i > 0 {
				q.WriteByte(',')
			}
			q.WriteString(one)
			args = append(args, w.values()...)
		}
		if _, err := ex.ExecContext(ctx, q.String(), args...); err != nil {
			return err
		}
	}
	return nil
}

// WorkunitIDs returns the IDs of the named work units that exist.
func WorkunitIDs(ctx context.Context, ex Execer, names []string) (map[string]int64, error) {
	out := make(map[string]int64, len(names))
	for start := 0; start < len(names); start += insertChunk {
		part := names[start:min(start+insertChunk, len(names))]
		rows, err := ex.QueryContext(ctx, "SELECT id, name FROM workunit WHERE name IN "+inList(len(part)), anys(part)...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id int64
			var name string
			if err := rows.Scan(&id, &name); err != nil {
				rows.Close()
				return nil, err
			}
			out[name] = id
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Assignment is a row of BOINC's assignment table as create_work writes
// it (resultid 0: no result sent yet).
type Assignment struct {
	CreateTime int64
	TargetID   int
	TargetType int
	Multi      bool
	WorkunitID int64
}

// InsertAssignments adds the rows, many per statement.
func InsertAssignments(ctx context.Context, ex Execer, as []Assignment) error {
	for start := 0; start < len(as); start += insertChunk {
		part := as[start:min(start+insertChunk, len(as))]
		var q strings.Builder
		q.WriteString("INSERT INTO assignment (create_time, target_id, target_type, multi, workunitid, resultid) VALUES ")
		args := make([]any, 0, len(part)*5)
		for i, a := range part {
			if i > 0 {
				q.WriteByte(',')
			}
			q.WriteString("(?, ?, ?, ?, ?, 0)")
			multi := 0
			if a.Multi {
				multi = 1
			}
			args = append(args, a.CreateTime, a.TargetID, a.TargetType, multi, a.WorkunitID)
		}
		if _, err := ex.ExecContext(ctx, q.String(), args...); err != nil {
			return err
		}
	}
	return nil
}
