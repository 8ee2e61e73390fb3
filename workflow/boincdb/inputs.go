package boincdb

import (
	"context"
	"database/sql"
	"encoding/xml"
	"errors"
	"fmt"
	"strings"
)

// InputFile is an input a work unit's xml_doc names (a <file_info>).
type InputFile struct {
	Name  string
	MD5   string
	Bytes int64
}

// OpenInputs reads, in batches, the inputs of the work units of these
// names that BOINC has not decided yet (no canonical result, no error):
// those a volunteer may still download. Work units BOINC does not hold are
// left out.
func (d *DB) OpenInputs(ctx context.Context, names []string) (map[string][]InputFile, error) {
	out := map[string][]InputFile{}
	for len(names) > 0 {
		n := min(len(names), 500)
		rows, err := d.QueryContext(ctx, `SELECT name, xml_doc FROM workunit
			WHERE canonical_resultid = 0 AND error_mask = 0 AND name IN `+inList(n), anys(names[:n])...)
		if err != nil {
			return nil, fmt.Errorf("reading work units: %w", err)
		}
		for rows.Next() {
			var name, doc string
			if err := rows.Scan(&name, &doc); err != nil {
				rows.Close()
				return nil, err
			}
			out[name] = ParseInputs(doc)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("reading work units: %w", err)
		}
		names = names[n:]
	}
	return out, nil
}

// Inputs reads the inputs of one work unit, whatever its state; found is
// false when BOINC does not hold it.
func (d *DB) Inputs(ctx context.Context, wu string) (files []InputFile, found bool, err error) {
	var doc string
	err = d.QueryRowContext(ctx, `SELECT xml_doc FROM workunit WHERE name = ?`, wu).Scan(&doc)
	if err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("reading work unit %s: %w", wu, err)
	}
	return ParseInputs(doc), true, nil
}

// ParseInputs lists the <file_info> entries of a work unit's xml_doc (a
// sequence of elements, not one document). What cannot be parsed ends the
// list: an xml_doc create_work wrote parses whole.
func ParseInputs(doc string) []InputFile {
	var out []InputFile
	dec := xml.NewDecoder(strings.NewReader(doc))
	dec.Strict = false
	for {
		tok, err := dec.Token()
		if err != nil { // io.EOF, or a doc cut short
			return out
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "file_info" {
			continue
		}
		var fi struct {
			Name  string  `xml:"name"`
			MD5   string  `xml:"md5_cksum"`
			Bytes float64 `xml:"nbytes"`
		}
		if err := dec.DecodeElement(&fi, &se); err != nil {
			return out
		}
		out = append(out, InputFile{Name: strings.TrimSpace(fi.Name), MD5: strings.TrimSpace(fi.MD5), Bytes: int64(fi.Bytes)})
	}
}

// ClientDownloading is a reported result's client_state when the client
// gave up while it downloaded the inputs (BOINC's RESULT_FILES_DOWNLOADING);
// its exit_status is then ErrResultDownload.
const (
	ClientDownloading = 1
	ErrResultDownload = -186
)

// DownloadFailed tells whether every error result of a work unit failed
// while its client downloaded the inputs, and there is at least one; n is
// how many. A real client reports such a result with client_state
// RESULT_FILES_DOWNLOADING and exit_status ERR_RESULT_DOWNLOAD (-186) when
// a download stays missing (HTTP 404) or fails its MD5 check
// (CLIENT_STATE::report_result_error), and the scheduler records outcome
// CLIENT_ERROR for it.
func (d *DB) DownloadFailed(ctx context.Context, wu string) (all bool, n int, err error) {
	rows, err := d.QueryContext(ctx, `SELECT r.client_state, r.exit_status FROM result r JOIN workunit w ON w.id = r.workunitid
		WHERE w.name = ? AND r.server_state = ? AND r.outcome = ?`, wu, ServerOver, OutcomeClientError)
	if err != nil {
		return false, 0, fmt.Errorf("reading the results of %s: %w", wu, err)
	}
	defer rows.Close()
	all = true
	for rows.Next() {
		var cs, exit int
		if err := rows.Scan(&cs, &exit); err != nil {
			return false, 0, err
		}
		n++
		if cs != ClientDownloading {
			all = false
		}
	}
	if err := rows.Err(); err != nil {
		return false, 0, err
	}
	return all && n > 0, n, nil
}
