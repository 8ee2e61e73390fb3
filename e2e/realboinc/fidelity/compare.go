package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/internal/naming"
)

// tableSpec is one BOINC table compared: how its rows are read and paired,
// and the columns left out of the comparison, each with the reason.
type tableSpec struct {
	name string
	// from is the FROM clause: the table as t, and its work unit as w
	// (the table itself for workunit).
	from string
	// wuName and label select the work unit's name (the pairing) and the
	// row's own name (what a difference is reported under).
	wuName, label string
	// ignore: the columns that can only differ by a name, an id or a time.
	ignore map[string]string
	// normalise: columns holding the row's names, compared with the result
	// name replaced by {RESULT} and the work unit's by {WU}.
	normalise map[string]bool
	// byMeaning: time columns compared by what they tell BOINC's daemons
	// (see when), relative to the row's create_time.
	byMeaning map[string]bool
	// whetherSet: columns compared only by whether they are set (not 0,
	// not INT_MAX), for rows compared once their work is over (-settled):
	// the canonical result's id, the credit it was granted (from its run's
	// CPU time), the transitioner's last time.
	whetherSet map[string]bool
}

// settled is s for rows of work units that are over: what BOINC's daemons
// wrote while the work ran is compared by whether it is set, since two runs
// never end at the same moment or with the same ids.
func settled(s tableSpec) tableSpec {
	if s.name != "workunit" {
		return s
	}
	s.whetherSet = map[string]bool{"canonical_resultid": true, "canonical_credit": true, "transition_time": true}
	return s
}

// tables are the rows native creation must write as create_work does
// (workunit, assignment for targeted work), and those BOINC's transitioner
// then makes from them (result).
var tables = map[string]tableSpec{
	"workunit": {name: "workunit", from: "workunit t", wuName: "t.name", label: "t.name",
		ignore: map[string]string{
			"id":          "row id",
			"name":        "the work unit's name: chain, group and random tag",
			"create_time": "time of the insert",
			"mod_time":    "time of the last update (a TIMESTAMP)",
		},
		byMeaning: map[string]bool{"transition_time": true}},
	"assignment": {name: "assignment", from: "assignment t JOIN workunit w ON w.id = t.workunitid", wuName: "w.name", label: "w.name",
		ignore: map[string]string{
			"id":          "row id",
			"create_time": "time of the insert",
			"workunitid":  "id of the work unit (the pairing is by the work unit's name)",
		}},
	"result": {name: "result", from: "result t JOIN workunit w ON w.id = t.workunitid", wuName: "w.name", label: "t.name",
		ignore: map[string]string{
			"id":          "row id",
			"name":        "the result's name: its work unit's and a number",
			"create_time": "time of the insert",
			"mod_time":    "time of the last update (a TIMESTAMP)",
			"workunitid":  "id of the work unit (the pairing is by the work unit's name)",
			"random":      "the transitioner's random number (lrand48) for the feeder's order",
		},
		normalise: map[string]bool{"xml_doc_in": true}},
}

// row is one row read: the key it is paired by, the name it is reported
// under, and its columns (NULL: Valid false).
type row struct {
	key, label, wu string
	vals           map[string]sql.NullString
}

// cellDiff is one column of a pair of rows that differs.
type cellDiff struct {
	key, column string
	a, b        row
}

// tableDiff is what comparing one table found.
type tableDiff struct {
	pairs        int
	diffs        []cellDiff
	onlyA, onlyB []string // labels of rows without a partner
}

func runCompare(ctx context.Context, args []string) int {
	fs := flag.NewFlagSet("fidelity compare", flag.ContinueOnError)
	project := fs.String("project", "", "the BOINC project directory (its config.xml names the database)")
	groupsA := fs.String("a", "", "comma-separated groups of the first submission")
	groupsB := fs.String("b", "", "comma-separated groups of the second submission, in the same order")
	labelA := fs.String("label-a", "a", "what the first submission is called in the report")
	labelB := fs.String("label-b", "b", "what the second submission is called in the report")
	tableList := fs.String("tables", "workunit,assignment", "tables to compare: workunit, assignment, result")
	settle := fs.Bool("settled", false, "the work units are over: compare workunit's canonical_resultid and transition_time by whether they are set (results are not compared: their run differs)")
	wantList := fs.String("want", "", "table=N,...: at least N pairs of rows that table must have (so that nothing compared is no pass)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	ga, gb := splitList(*groupsA), splitList(*groupsB)
	if *project == "" || len(ga) == 0 || len(ga) != len(gb) || fs.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "fidelity compare: -project, and -a and -b with as many groups each, are required")
		return 2
	}
	want := map[string]int{}
	for _, w := range splitList(*wantList) {
		t, n, ok := strings.Cut(w, "=")
		v, err := strconv.Atoi(n)
		if !ok || err != nil || v < 0 {
			fmt.Fprintf(os.Stderr, "fidelity compare: -want %q: want table=N\n", w)
			return 2
		}
		want[t] = v
	}
	var specs []tableSpec
	for _, t := range splitList(*tableList) {
		s, ok := tables[t]
		if !ok {
			fmt.Fprintf(os.Stderr, "fidelity compare: unknown table %q\n", t)
			return 2
		}
		if *settle {
			if s.name == "result" {
				fmt.Fprintln(os.Stderr, "fidelity compare: -settled compares no results (their hosts' runs differ)")
				return 2
			}
			s = settled(s)
		}
		specs = append(specs, s)
	}
	p, err := boinc.LoadProject(*project)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fidelity compare: %v\n", err)
		return 2
	}
	target, err := boincdb.ForProject(p, false)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fidelity compare: %v\n", err)
		return 2
	}
	db, err := boincdb.Open(ctx, target)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fidelity compare: %v\n", err)
		return 2
	}
	defer db.Close()
	bad := false
	for _, s := range specs {
		cols, err := columns(ctx, db.DB, s.name)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fidelity compare: %v\n", err)
			return 2
		}
		rows, err := readRows(ctx, db.DB, s, cols)
		if err != nil {
			fmt.Fprintf(os.Stderr, "fidelity compare: %v\n", err)
			return 2
		}
		a, b := split(rows, ga, gb)
		d := compareRows(s, cols, a, b)
		report(os.Stdout, s, cols, d, ga, gb, *labelA, *labelB)
		if n, ok := want[s.name]; ok && d.pairs < n {
			fmt.Printf("FAIL %s: %d pairs of rows compared, want at least %d\n", s.name, d.pairs, n)
			bad = true
		}
		bad = bad || len(d.diffs) > 0 || len(d.onlyA) > 0 || len(d.onlyB) > 0
	}
	if bad {
		return 1
	}
	return 0
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// columns lists the table's columns as the database has them, in order.
func columns(ctx context.Context, db *sql.DB, table string) ([]string, error) {
	rs, err := db.QueryContext(ctx, `SELECT column_name FROM information_schema.columns
		WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position`, table)
	if err != nil {
		return nil, fmt.Errorf("reading the columns of BOINC's table %s: %w", table, err)
	}
	defer rs.Close()
	var cols []string
	for rs.Next() {
		var c string
		if err := rs.Scan(&c); err != nil {
			return nil, fmt.Errorf("reading the columns of BOINC's table %s: %w", table, err)
		}
		cols = append(cols, c)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("reading the columns of BOINC's table %s: %w", table, err)
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("BOINC's database has no table %s", table)
	}
	return cols, nil
}

// readRows reads every row of the table with its work unit's name and its
// own; split then keeps those of the compared groups.
func readRows(ctx context.Context, db *sql.DB, s tableSpec, cols []string) ([]row, error) {
	sel := []string{s.wuName, s.label}
	for _, c := range cols {
		sel = append(sel, "t.`"+c+"`")
	}
	rs, err := db.QueryContext(ctx, "SELECT "+strings.Join(sel, ", ")+" FROM "+s.from+" ORDER BY t.id")
	if err != nil {
		return nil, fmt.Errorf("reading BOINC's table %s: %w", s.name, err)
	}
	defer rs.Close()
	var out []row
	for rs.Next() {
		vals := make([]sql.NullString, len(cols))
		var wu, label string
		ptrs := []any{&wu, &label}
		for i := range vals {
			ptrs = append(ptrs, &vals[i])
		}
		if err := rs.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("reading BOINC's table %s: %w", s.name, err)
		}
		r := row{label: label, wu: wu, vals: map[string]sql.NullString{}}
		for i, c := range cols {
			r.vals[c] = vals[i]
		}
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("reading BOINC's table %s: %w", s.name, err)
	}
	return out, nil
}

// split keeps the rows of work units of groups ga (side a) and gb (side b)
// and gives each its pairing key: the position of its group in the list,
// the chain's name, step and number of steps, whether the work is assigned
// (the name's _asgn), and the row's place under its work unit (a result's
// suffix, an assignment's ordinal). Names that are no rboinc work unit's
// are skipped.
func split(rows []row, ga, gb []string) (a, b []row) {
	seen := map[string]int{}
	for _, r := range rows {
		w, err := naming.ParseWU(r.wu)
		if err != nil {
			continue
		}
		side, idx := 0, slices.Index(ga, w.Group)
		if idx < 0 {
			side, idx = 1, slices.Index(gb, w.Group)
		}
		if idx < 0 {
			continue
		}
		_, asgn := strings.CutSuffix(w.Tag, "_asgn")
		base := fmt.Sprintf("%d/%s/step %d of %d", idx, w.Name, w.Step, w.NSteps)
		if asgn {
			base += "/assigned"
		}
		if sfx, ok := strings.CutPrefix(r.label, r.wu); ok && sfx != "" {
			base += "/" + sfx
		}
		n := seen[fmt.Sprint(side, base)]
		seen[fmt.Sprint(side, base)]++
		if n > 0 {
			base += "#" + strconv.Itoa(n)
		}
		r.key = base
		if side == 0 {
			a = append(a, r)
		} else {
			b = append(b, r)
		}
	}
	return a, b
}

// outputRandom is the random number BOINC's transitioner puts in the names
// of a result's output files (RESULT_r<lrand48>_<k>), once the result's
// name is {RESULT}.
var outputRandom = regexp.MustCompile(`\{RESULT\}_r[0-9]+_`)

// when says what time column c of r tells BOINC's daemons: never
// (INT_MAX: create_work's transition_time for assigned work, the
// transitioner's once a work unit is over), at the row's creation (within
// a minute of its create_time: the transitioner looks at once), or so many
// hours after it (the transitioner's ten-day safety net, a deadline).
func when(r row, c string) sql.NullString {
	v := r.vals[c]
	t, err1 := strconv.ParseInt(v.String, 10, 64)
	created, err2 := strconv.ParseInt(r.vals["create_time"].String, 10, 64)
	switch {
	case !v.Valid || err1 != nil || err2 != nil:
		return v
	case t == math.MaxInt32:
		return sql.NullString{String: "never (INT_MAX)", Valid: true}
	case t-created >= -60 && t-created <= 60:
		return sql.NullString{String: "at its creation (within a minute of create_time)", Valid: true}
	}
	return sql.NullString{String: fmt.Sprintf("%+d hours from its creation", int64(math.Round(float64(t-created)/3600))), Valid: true}
}

// value is column c of r as compared: with the row's names (and the
// random part of its output files' names) replaced in the columns the spec
// normalises, and time columns by their meaning.
func value(s tableSpec, r row, c string) sql.NullString {
	if v := r.vals[c]; s.whetherSet[c] && v.Valid {
		if f, err := strconv.ParseFloat(v.String, 64); err == nil && (f == 0 || f == math.MaxInt32) {
			return sql.NullString{String: "unset (" + v.String + ")", Valid: true}
		}
		return sql.NullString{String: "set", Valid: true}
	}
	if s.byMeaning[c] {
		return when(r, c)
	}
	v := r.vals[c]
	if s.normalise[c] && v.Valid {
		if r.label != r.wu {
			v.String = strings.ReplaceAll(v.String, r.label, "{RESULT}")
			v.String = outputRandom.ReplaceAllString(v.String, "{RESULT}_r{RANDOM}_")
		}
		v.String = strings.ReplaceAll(v.String, r.wu, "{WU}")
	}
	return v
}

// compareRows pairs a's rows with b's by key and lists every column, of
// those not ignored, whose values differ.
func compareRows(s tableSpec, cols []string, a, b []row) tableDiff {
	var d tableDiff
	byKey := map[string]row{}
	for _, r := range b {
		byKey[r.key] = r
	}
	matched := map[string]bool{}
	for _, ra := range a {
		rb, ok := byKey[ra.key]
		if !ok {
			d.onlyA = append(d.onlyA, ra.label)
			continue
		}
		matched[ra.key] = true
		d.pairs++
		for _, c := range cols {
			if _, skip := s.ignore[c]; skip {
				continue
			}
			if value(s, ra, c) != value(s, rb, c) {
				d.diffs = append(d.diffs, cellDiff{key: ra.key, column: c, a: ra, b: rb})
			}
		}
	}
	for _, r := range b {
		if !matched[r.key] {
			d.onlyB = append(d.onlyB, r.label)
		}
	}
	return d
}

// report prints what compareRows found: a summary line, then each
// difference with both values (multi-line values as a line diff).
func report(w io.Writer, s tableSpec, cols []string, d tableDiff, ga, gb []string, la, lb string) {
	var ignored []string
	for c := range s.ignore {
		if slices.Contains(cols, c) {
			ignored = append(ignored, c)
		}
	}
	sort.Strings(ignored)
	verdict := "no difference"
	if n := len(d.diffs) + len(d.onlyA) + len(d.onlyB); n > 0 {
		verdict = fmt.Sprintf("%d DIFFERENCES", n)
	}
	fmt.Fprintf(w, "%s: %d pairs of rows (%s: groups %s; %s: groups %s), %d of %d columns compared: %s\n",
		s.name, d.pairs, la, strings.Join(ga, ","), lb, strings.Join(gb, ","), len(cols)-len(ignored), len(cols), verdict)
	for _, c := range ignored {
		fmt.Fprintf(w, "    not compared: %s (%s)\n", c, s.ignore[c])
	}
	for c := range s.byMeaning {
		fmt.Fprintf(w, "    compared by meaning: %s (never = INT_MAX; at its creation = within a minute of create_time; else hours after create_time)\n", c)
	}
	for c := range s.normalise {
		fmt.Fprintf(w, "    compared with the row's names replaced: %s (the result's name by {RESULT}, the random number in its output files' names, RESULT_r<n>_k, by {RANDOM}, the work unit's name by {WU})\n", c)
	}
	for _, x := range d.diffs {
		va, vb := value(s, x.a, x.column), value(s, x.b, x.column)
		fmt.Fprintf(w, "DIFF %s.%s (%s)\n", s.name, x.column, x.key)
		if strings.Contains(va.String, "\n") || strings.Contains(vb.String, "\n") {
			fmt.Fprintf(w, "    --- %s %s\n    +++ %s %s\n", la, x.a.label, lb, x.b.label)
			for _, l := range lineDiff(va.String, vb.String) {
				fmt.Fprintf(w, "    %s\n", l)
			}
			continue
		}
		fmt.Fprintf(w, "    %-11s %s: %s\n", la, x.a.label, show(va))
		fmt.Fprintf(w, "    %-11s %s: %s\n", lb, x.b.label, show(vb))
	}
	for _, l := range d.onlyA {
		fmt.Fprintf(w, "ONLY %s: %s row of %s has no partner in %s\n", la, s.name, l, lb)
	}
	for _, l := range d.onlyB {
		fmt.Fprintf(w, "ONLY %s: %s row of %s has no partner in %s\n", lb, s.name, l, la)
	}
}

func show(v sql.NullString) string {
	if !v.Valid {
		return "NULL"
	}
	return strconv.Quote(v.String)
}

// lineDiff is a minimal line diff of a and b (longest common subsequence):
// common lines with "  ", lines only in a with "- ", only in b with "+ ",
// each with its line number in its own text.
func lineDiff(a, b string) []string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	n, m := len(la), len(lb)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if la[i] == lb[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && la[i] == lb[j]:
			out = append(out, fmt.Sprintf("  %3d %s", i+1, la[i]))
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, fmt.Sprintf("- %3d %s", i+1, strconv.Quote(la[i])))
			i++
		default:
			out = append(out, fmt.Sprintf("+ %3d %s", j+1, strconv.Quote(lb[j])))
			j++
		}
	}
	return out
}
