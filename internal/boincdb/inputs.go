package boincdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// InputFile is an input a work unit's xml_doc names (a <file_info>).
type InputFile struct {
	Name  string
	MD5   string
	Bytes int64
	// Gzipped: served compressed (<gzipped_url>, from <gzip/> in the
	// template): volunteers download Name.gz.
	Gzipped bool
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
// sequence of elements as create_work writes them, not one document). It
// scans for the few tags it needs rather than decoding XML: the input
// check reads thousands of these a minute. Text is taken as it is (no
// entities decoded): rboinc's own names have none, and names with any are
// not rboinc's. An entry cut short ends the list.
func ParseInputs(doc string) []InputFile {
	var out []InputFile
	for {
		i := strings.Index(doc, "<file_info>")
		if i < 0 {
			return out
		}
		doc = doc[i+len("<file_info>"):]
		j := strings.Index(doc, "</file_info>")
		if j < 0 {
			return out
		}
		body := doc[:j]
		doc = doc[j+len("</file_info>"):]
		f := InputFile{Name: tagText(body, "name"), MD5: tagText(body, "md5_cksum"), Gzipped: strings.Contains(body, "<gzipped_url>")}
		if n, err := strconv.ParseFloat(tagText(body, "nbytes"), 64); err == nil && n >= 0 && n < 1<<62 {
			f.Bytes = int64(n)
		}
		out = append(out, f)
	}
}

// tagText is the trimmed text of the first <tag>...</tag> in s ("" when
// there is none).
func tagText(s, tag string) string {
	i := strings.Index(s, "<"+tag+">")
	if i < 0 {
		return ""
	}
	s = s[i+len(tag)+2:]
	j := strings.Index(s, "</"+tag+">")
	if j < 0 {
		return ""
	}
	return strings.TrimSpace(s[:j])
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
