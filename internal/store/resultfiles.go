package store

import "context"

// LiveResultFiles tells which of the result files (<wu>_<k>, with wus[i]
// the work unit of files[i]) something still refers to: a result not yet
// acknowledged, or a step still waiting for its outputs (its record may be
// taking them right now) in a chain not purged. One statement per part,
// so it sees one snapshot: a record's commit (results and the step done,
// together) is either wholly seen or not at all.
func (d *DB) LiveResultFiles(ctx context.Context, files, wus []string) (map[string]bool, error) {
	live := map[string]bool{}
	for start := 0; start < len(files); start += maxListArgs / 2 {
		end := min(start+maxListArgs/2, len(files))
		fs, ws := files[start:end], wus[start:end]
		args := append(anys(fs), anys(ws)...)
		rows, err := d.sql.QueryContext(ctx, `SELECT file, '' FROM results WHERE file IN `+inList(len(fs))+`
			UNION ALL SELECT '', s.wu_name FROM steps s JOIN chains c ON c.id = s.chain_id
			WHERE s.wu_name IN `+inList(len(ws))+` AND s.state NOT IN ('done', 'failed') AND c.state != 'purged'`, args...)
		if err != nil {
			return nil, err
		}
		waiting := map[string]bool{}
		for rows.Next() {
			var f, wu string
			if err := rows.Scan(&f, &wu); err != nil {
				rows.Close()
				return nil, err
			}
			if f != "" {
				live[f] = true
			} else {
				waiting[wu] = true
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		for i, f := range fs {
			if waiting[ws[i]] {
				live[f] = true
			}
		}
	}
	return live, nil
}
