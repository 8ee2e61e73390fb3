package boincdb

import (
	"context"
	"fmt"
)

// JobFiles tells which of these download names BOINC's own job-file
// staging (job_file.php, boinc_submit.py, its HTCondor GAHP) has in its
// job_file table. It records a file there when it puts one into download/,
// and also when it finds one already there under the name it gives that
// content (jf_<md5>): its batches then use that file, and its job-file
// deleter decides when it goes.
func (d *DB) JobFiles(ctx context.Context, names []string) (map[string]bool, error) {
	out := map[string]bool{}
	for len(names) > 0 {
		n := min(len(names), 500)
		rows, err := d.QueryContext(ctx, `SELECT name FROM job_file WHERE name IN `+inList(n), anys(names[:n])...)
		if err != nil {
			return nil, fmt.Errorf("reading BOINC's job files: %w", err)
		}
		for rows.Next() {
			var name string
			if err := rows.Scan(&name); err != nil {
				rows.Close()
				return nil, err
			}
			out[name] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("reading BOINC's job files: %w", err)
		}
		names = names[n:]
	}
	return out, nil
}
