package boincdb

import (
	"context"
	"fmt"
	"strings"

	"github.com/beevik/etree"
)

// ReadyWU is a work unit waiting for its assimilator, with its canonical
// result when it has one.
type ReadyWU struct {
	ID, AppID, Batch  int64
	Name              string
	ErrorMask         int
	CanonicalResultID int64
	// Canonical is the canonical result; nil when the work unit has none
	// (canonical_resultid 0, or a row that is gone).
	Canonical *CanonicalResult
}

// CanonicalResult is what an assimilator reads of the canonical result.
type CanonicalResult struct {
	ID          int64
	Name        string
	XMLDocIn    string
	ElapsedTime float64
}

// AppIDs looks the apps up by name; a name not in the app table is an
// error that names it.
func (d *DB) AppIDs(ctx context.Context, names []string) (map[string]int64, error) {
	out := map[string]int64{}
	if len(names) == 0 {
		return out, nil
	}
	rows, err := d.QueryContext(ctx, "SELECT id, name FROM app WHERE name IN "+inList(len(names)), anys(names)...)
	if err != nil {
		return nil, fmt.Errorf("reading BOINC's app table: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var name string
		if err := rows.Scan(&id, &name); err != nil {
			return nil, err
		}
		out[name] = id
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, n := range names {
		if _, ok := out[n]; !ok {
			return out, fmt.Errorf("BOINC's app table has no app %q", n)
		}
	}
	return out, nil
}

// ReadyWUs reads up to limit work units of the apps whose assimilate_state
// is ready, with ids above after, in id order, and their canonical
// results: two queries per batch.
func (d *DB) ReadyWUs(ctx context.Context, appIDs []int64, after int64, limit int) ([]ReadyWU, error) {
	if len(appIDs) == 0 {
		return nil, nil
	}
	args := append(anys(appIDs), AssimilateReady, after, limit)
	rows, err := d.QueryContext(ctx, `SELECT id, appid, batch, name, error_mask, canonical_resultid FROM workunit
		WHERE appid IN `+inList(len(appIDs))+` AND assimilate_state = ? AND id > ? ORDER BY id LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("reading work units ready for assimilation: %w", err)
	}
	var out []ReadyWU
	var canon []int64
	for rows.Next() {
		var w ReadyWU
		if err := rows.Scan(&w.ID, &w.AppID, &w.Batch, &w.Name, &w.ErrorMask, &w.CanonicalResultID); err != nil {
			rows.Close()
			return nil, err
		}
		if w.CanonicalResultID != 0 {
			canon = append(canon, w.CanonicalResultID)
		}
		out = append(out, w)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(canon) == 0 {
		return out, nil
	}
	rows, err = d.QueryContext(ctx, "SELECT id, name, xml_doc_in, elapsed_time FROM result WHERE id IN "+inList(len(canon)), anys(canon)...)
	if err != nil {
		return nil, fmt.Errorf("reading canonical results: %w", err)
	}
	defer rows.Close()
	byID := map[int64]*CanonicalResult{}
	for rows.Next() {
		var r CanonicalResult
		var doc []byte
		if err := rows.Scan(&r.ID, &r.Name, &doc, &r.ElapsedTime); err != nil {
			return nil, err
		}
		r.XMLDocIn = string(doc)
		byID[r.ID] = &r
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Canonical = byID[out[i].CanonicalResultID]
	}
	return out, nil
}

// MarkAssimilated is the assimilator framework's last step for a batch:
// assimilate_state done and transition_time now, so that the transitioner
// hands the work units' files to the file deleter. Work units no longer
// ready (assimilated already) are left alone.
func (d *DB) MarkAssimilated(ctx context.Context, ids []int64) error {
	for len(ids) > 0 {
		n := min(len(ids), 500)
		args := append([]any{AssimilateDone, now()}, anys(ids[:n])...)
		args = append(args, AssimilateReady)
		if _, err := d.ExecContext(ctx, `UPDATE workunit SET assimilate_state = ?, transition_time = ?
			WHERE id IN `+inList(n)+` AND assimilate_state = ?`, args...); err != nil {
			return fmt.Errorf("marking %d work units assimilated: %w", n, err)
		}
		ids = ids[n:]
	}
	return nil
}

// OutputFile is one output of a result, as the assimilator framework
// reads it from the result's xml_doc_in (its <file_ref>s).
type OutputFile struct {
	Name, OpenName string
	Optional       bool
}

// OutputFiles reads a result's outputs from its xml_doc_in: each
// <result>'s <file_ref> (file_name, open_name), optional when the
// <file_ref> or its <file_info> says <optional/>.
func OutputFiles(xmlDocIn string) ([]OutputFile, error) {
	if out, err, ok := scanOutputFiles(xmlDocIn); ok {
		return out, err
	}
	return parseOutputFiles(xmlDocIn)
}

// parseOutputFiles is OutputFiles by a full XML parser.
func parseOutputFiles(xmlDocIn string) ([]OutputFile, error) {
	doc := etree.NewDocument()
	doc.ReadSettings.Permissive = true
	if err := doc.ReadFromString("<doc>" + xmlDocIn + "</doc>"); err != nil {
		return nil, fmt.Errorf("result XML: %w", err)
	}
	optional := map[string]bool{}
	for _, fi := range doc.FindElements("//file_info") {
		if n := fi.SelectElement("name"); n != nil && fi.SelectElement("optional") != nil {
			optional[strings.TrimSpace(n.Text())] = true
		}
	}
	var out []OutputFile
	for _, fr := range doc.FindElements("//file_ref") {
		o := OutputFile{Optional: fr.SelectElement("optional") != nil}
		if e := fr.SelectElement("file_name"); e != nil {
			o.Name = strings.TrimSpace(e.Text())
		}
		if e := fr.SelectElement("open_name"); e != nil {
			o.OpenName = strings.TrimSpace(e.Text())
		}
		if o.Name == "" {
			return nil, errNoFileName
		}
		o.Optional = o.Optional || optional[o.Name]
		out = append(out, o)
	}
	return out, nil
}
