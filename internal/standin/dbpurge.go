package standin

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/internal/sqldb"
)

// The stand-in's db_purge: BOINC's sched/db_purge.cpp, one pass. A
// project runs it to keep its database small: every work unit whose files
// the file deleter removed (file_delete_state done; the transitioner makes
// that ready only once the work unit was assimilated or given up), with
// its results, is written to XML archives under <project>/archives and
// deleted. As in BOINC:
//   - --min_age_days: only rows whose mod_time is older (PurgeOptions.MinAge);
//   - work units named with "nodelete" are kept;
//   - each pass writes wu_archive_<T>.xml, result_archive_<T>.xml and the
//     indexes wu_index_<T>.xml, result_index_<T>.xml ("<id>     <T>    <name>"
//     a line), T the pass's start in Unix seconds, new for every pass;
//   - a work unit's results are archived and deleted before it; its
//     assignment rows go with it when <enable_assignment> is set;
//   - xml_doc, xml_doc_in and xml_doc_out are written as stored, stderr_out
//     XML-escaped.
// Deviations: no compression (--gzip, --zip), --daily_dir, --batch, --mod,
// --app or --max_wu_per_file; each work unit and its results go in one
// transaction (BOINC deletes row by row); on the stand-in's SQLite,
// mod_time is the row's creation (SQLite does not update it on UPDATE as
// MariaDB does), so MinAge counts from then.

// PurgeOptions are the db_purge flags the stand-in keeps.
type PurgeOptions struct {
	MinAge    time.Duration // --min_age_days
	NoArchive bool          // --no_archive: delete without writing archives
	Max       int           // --max N: purge at most N work units this pass (0: all)
}

// Purged is what a pass archived and deleted, and the archive files it
// wrote (none when nothing was purged or NoArchive).
type Purged struct {
	Workunits, Results int
	Files              []string
}

const purgeBatch = 1000 // DB_QUERY_LIMIT

// PurgeDB runs one pass of db_purge on the project's database.
func PurgeDB(ctx context.Context, projectDir string, o PurgeOptions) (out Purged, err error) {
	p, err := boinc.LoadProject(projectDir)
	if err != nil {
		return out, err
	}
	db, err := openProjectDB(ctx, p)
	if err != nil {
		return out, err
	}
	defer db.Close()
	var ar *archives
	defer func() {
		if ar != nil {
			if cerr := ar.close(); cerr != nil && err == nil {
				err = cerr
			}
			out.Files = ar.paths
		}
	}()
	for {
		ids, err := purgeable(ctx, db, o.MinAge)
		if err != nil {
			return out, err
		}

		if len(ids) == 0 {
			return out, nil
		}
		for _, id := range ids {
			if ar == nil && !o.NoArchive {
				if ar, err = openArchives(filepath.Join(p.Dir, "archives")); err != nil {
					return out, err
				}
			}
			nres, err := purgeWorkunit(ctx, db, p, id, ar)
			if err != nil {
				return out, fmt.Errorf("purging work unit %d: %w", id, err)
			}
			out.Workunits++
			out.Results += nres
			if o.Max > 0 && out.Workunits >= o.Max {
				return out, nil
			}
		}
		if len(ids) < purgeBatch {
			return out, nil
		}
	}
}

// purgeable are the ids of work units db_purge takes.
func purgeable(ctx context.Context, db *boincdb.DB, minAge time.Duration) ([]int64, error) {
	q := `SELECT id FROM workunit WHERE file_delete_state = ? AND name NOT LIKE '%nodelete%'`
	args := []any{boincdb.FileDeleteDone}
	if minAge > 0 {
		if db.Engine == sqldb.SQLite {
			q += ` AND mod_time < datetime('now', ?)`
			args = append(args, fmt.Sprintf("-%d seconds", int64(minAge.Seconds())))
		} else {
			q += ` AND mod_time < current_timestamp() - interval ? second`
			args = append(args, int64(minAge.Seconds()))
		}
	}
	q += fmt.Sprintf(` ORDER BY id LIMIT %d`, purgeBatch)
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("finding the work units to purge: %w", err)
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// purgeWorkunit archives and deletes work unit id's results, then it.
func purgeWorkunit(ctx context.Context, db *boincdb.DB, p *boinc.Project, id int64, ar *archives) (int, error) {
	n := 0
	err := db.Tx(ctx, func(tx *sql.Tx) error {
		n = 0
		res, err := readRows(ctx, tx, `SELECT `+strings.Join(resultArchiveCols, ", ")+` FROM result WHERE workunitid = ? ORDER BY id`, id)
		if err != nil {
			return err
		}
		wu, err := readRows(ctx, tx, `SELECT `+strings.Join(wuArchiveCols, ", ")+` FROM workunit WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if len(wu) != 1 {
			return nil // purged meanwhile
		}
		if ar != nil {
			for _, r := range res {
				if err := ar.result(r); err != nil {
					return err
				}
			}
			if err := ar.workunit(wu[0]); err != nil {
				return err
			}
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM result WHERE workunitid = ?`, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM workunit WHERE id = ?`, id); err != nil {
			return err
		}
		if p.EnableAssignment {
			if _, err := tx.ExecContext(ctx, `DELETE FROM assignment WHERE workunitid = ?`, id); err != nil {
				return err
			}
		}
		n = len(res)
		return nil
	})
	return n, err
}

// row is one archived row: its columns' values as db_purge prints them.
type row map[string]string

// readRows reads the rows of q as text (numbers as BOINC's printf formats
// them: see archiveValue).
func readRows(ctx context.Context, tx *sql.Tx, q string, args ...any) ([]row, error) {
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out []row
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		r := row{}
		for i, c := range cols {
			r[c] = archiveValue(c, vals[i])
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// floatCols are printed "%.15e" by db_purge, opaque "%f"; the rest are
// integers or text.
var floatCols = map[string]bool{"rsc_fpops_est": true, "rsc_fpops_bound": true, "rsc_memory_bound": true, "rsc_disk_bound": true,
	"canonical_credit": true, "cpu_time": true, "claimed_credit": true, "granted_credit": true}

func archiveValue(col string, v any) string {
	var f float64
	isNum := true
	switch x := v.(type) {
	case nil:
		return ""
	case int64:
		f = float64(x)
		if !floatCols[col] && col != "opaque" {
			return fmt.Sprint(x)
		}
	case float64:
		f = x
	case time.Time:
		return x.UTC().Format(time.DateTime)
	case []byte:
		isNum = false
		v = string(x)
	default:
		isNum = false
	}
	s := fmt.Sprint(v)
	if !isNum {
		if (floatCols[col] || col == "opaque") && s != "" {
			if _, err := fmt.Sscan(s, &f); err != nil {
				return s
			}
		} else {
			return s
		}
	}
	switch {
	case floatCols[col]:
		return fmt.Sprintf("%.15e", f)
	case col == "opaque":
		return fmt.Sprintf("%f", f)
	}
	return fmt.Sprintf("%d", int64(f))
}

// The archives' fields, in db_purge's order (WU_ARCHIVE_DATA and
// RESULT_ARCHIVE_DATA).
var wuArchiveCols = []string{"id", "create_time", "appid", "name", "xml_doc", "batch", "rsc_fpops_est", "rsc_fpops_bound",
	"rsc_memory_bound", "rsc_disk_bound", "need_validate", "canonical_resultid", "canonical_credit", "transition_time",
	"delay_bound", "error_mask", "file_delete_state", "assimilate_state", "hr_class", "opaque", "min_quorum",
	"target_nresults", "max_error_results", "max_total_results", "max_success_results", "result_template_file",
	"priority", "mod_time"}

var resultArchiveCols = []string{"id", "create_time", "workunitid", "server_state", "outcome", "client_state", "hostid",
	"userid", "report_deadline", "sent_time", "received_time", "name", "cpu_time", "xml_doc_in", "xml_doc_out",
	"stderr_out", "batch", "file_delete_state", "validate_state", "claimed_credit", "granted_credit", "opaque", "random",
	"app_version_num", "app_version_id", "appid", "exit_status", "teamid", "priority", "mod_time"}

// archives are one pass's four files.
type archives struct {
	t                  int64
	wu, res, wuX, resX *os.File
	w                  map[*os.File]*bufio.Writer
	paths              []string
}

// openArchives creates the pass's files, named for a second no earlier
// pass used (db_purge waits for a new second likewise).
func openArchives(dir string) (*archives, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for {
		t := time.Now().Unix()
		a := &archives{t: t, w: map[*os.File]*bufio.Writer{}}
		var err error
		open := func(prefix string) *os.File {
			if err != nil {
				return nil
			}
			p := filepath.Join(dir, fmt.Sprintf("%s_%d.xml", prefix, t))
			var f *os.File
			f, err = os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if err == nil {
				a.paths = append(a.paths, p)
				a.w[f] = bufio.NewWriter(f)
			}
			return f
		}
		a.wu, a.res, a.resX, a.wuX = open("wu_archive"), open("result_archive"), open("result_index"), open("wu_index")
		if errors.Is(err, os.ErrExist) {
			a.abandon()
			time.Sleep(time.Until(time.Unix(t+1, 0)))
			continue
		}
		if err != nil {
			a.abandon()
			return nil, fmt.Errorf("opening db_purge's archives: %w", err)
		}
		a.print(a.wu, "<archive>\n")
		a.print(a.res, "<archive>\n")
		return a, nil
	}
}

// abandon removes the files of a pass that could not open them all.
func (a *archives) abandon() {
	for f := range a.w {
		f.Close()
		os.Remove(f.Name())
	}
	a.paths = nil
}

func (a *archives) print(f *os.File, format string, args ...any) error {
	_, err := fmt.Fprintf(a.w[f], format, args...)
	return err
}

func (a *archives) record(f, index *os.File, tag string, cols []string, r row) error {
	var b strings.Builder
	fmt.Fprintf(&b, "<%s>\n", tag)
	for _, c := range cols {
		v := r[c]
		if c == "stderr_out" {
			v = purgeEscape(v)
		}
		fmt.Fprintf(&b, "  <%s>%s</%s>\n", c, v, c)
	}
	fmt.Fprintf(&b, "</%s>\n", tag)
	if err := a.print(f, "%s", b.String()); err != nil {
		return err
	}
	return a.print(index, "%s     %d    %s\n", r["id"], a.t, r["name"])
}

func (a *archives) result(r row) error {
	return a.record(a.res, a.resX, "result_archive", resultArchiveCols, r)
}

func (a *archives) workunit(r row) error {
	return a.record(a.wu, a.wuX, "workunit_archive", wuArchiveCols, r)
}

// close ends the archives and makes them durable.
func (a *archives) close() error {
	a.print(a.wu, "</archive>\n")
	a.print(a.res, "</archive>\n")
	var errs []error
	for f, w := range a.w {
		errs = append(errs, w.Flush(), f.Sync(), f.Close())
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("writing db_purge's archives: %w", err)
	}
	return nil
}

// purgeEscape is BOINC's xml_escape (lib/parse.cpp), which db_purge
// applies to stderr_out: < and & as entities, tab, newline, carriage
// return and bytes over 127 as numeric references, other control
// characters dropped, "]]>" as "]]&gt;".
func purgeEscape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '<':
			b.WriteString("&lt;")
		case c == '&':
			b.WriteString("&amp;")
		case c > 127, c == 9, c == 10, c == 13:
			fmt.Fprintf(&b, "&#%d;", c)
		case c < 32:
		case c == ']' && strings.HasPrefix(s[i:], "]]>"):
			b.WriteString("]]&gt;")
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
