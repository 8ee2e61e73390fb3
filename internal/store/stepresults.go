package store

import "context"

// StepResults is the results of step n of a chain not yet acknowledged,
// as its record wrote them.
func (d *DB) StepResults(ctx context.Context, chainID int64, step int) ([]Result, error) {
	rows, err := d.query(ctx, `SELECT idx, file, md5, size FROM results WHERE chain_id = ? AND step = ? AND acked = 0`, chainID, step)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Result
	for rows.Next() {
		r := Result{ChainID: chainID, Step: step}
		if err := rows.Scan(&r.Index, &r.File, &r.MD5, &r.Size); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
