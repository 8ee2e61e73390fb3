package standin

import (
	"context"
	"os"
	"strings"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
)

// deleteFiles is file_deleter's pass: the inputs of work units whose
// file_delete_state the transitioner made ready (each without <no_delete/>,
// with its .md5; none when the WU name contains "nodelete"), and the
// outputs of results made ready, each row then marked done.
func (s *sim) deleteFiles(ctx context.Context, p *boinc.Project) error {
	type doc struct {
		id         int64
		name, body string
	}
	read := func(q string) ([]doc, error) {
		rows, err := s.db.QueryContext(ctx, q, boincdb.FileDeleteReady)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		var out []doc
		for rows.Next() {
			var d doc
			var body []byte
			if err := rows.Scan(&d.id, &d.name, &body); err != nil {
				return nil, err
			}
			d.body = string(body)
			out = append(out, d)
		}
		return out, rows.Err()
	}
	wus, err := read(`SELECT id, name, xml_doc FROM workunit WHERE file_delete_state = ? ORDER BY id LIMIT 1000`)
	if err != nil {
		return err
	}
	for _, w := range wus {
		if !strings.Contains(w.name, "nodelete") {
			for _, f := range parseWUDoc(w.body).files {
				if f.noDelete || badPhysicalName(f.name) {
					continue
				}
				path := boinc.HierPath(p.DownloadDir, f.name, p.Fanout)
				os.Remove(path)
				os.Remove(path + ".gz") // as BOINC's, the compressed copy a <gzip/> input is served as
				os.Remove(path + ".md5")
			}
		}
		if _, err := s.db.ExecContext(ctx, `UPDATE workunit SET file_delete_state = ? WHERE id = ?`, boincdb.FileDeleteDone, w.id); err != nil {
			return err
		}
	}
	results, err := read(`SELECT id, name, xml_doc_in FROM result WHERE file_delete_state = ? ORDER BY id LIMIT 1000`)
	if err != nil {
		return err
	}
	for _, r := range results {
		deleteOutputs(p, r.body)
		if _, err := s.db.ExecContext(ctx, `UPDATE result SET file_delete_state = ? WHERE id = ?`, boincdb.FileDeleteDone, r.id); err != nil {
			return err
		}
	}
	return nil
}
