package main

import (
	"bytes"
	"database/sql"
	"strings"
	"testing"
)

func mkrow(wu, label string, kv ...string) row {
	r := row{wu: wu, label: label, vals: map[string]sql.NullString{}}
	for i := 0; i+1 < len(kv); i += 2 {
		r.vals[kv[i]] = sql.NullString{String: kv[i+1], Valid: kv[i+1] != "<NULL>"}
	}
	return r
}

// The same work unit made twice, in groups fa and fb: only the ignored
// columns differ, then one compared column does too.
func TestCompareWorkunits(t *testing.T) {
	s := tables["workunit"]
	cols := []string{"id", "name", "create_time", "priority", "xml_doc", "batch", "keywords"}
	wa := "f1-SCI_fa-0-2-RND0001"
	wb := "f1-SCI_fb-0-2-RND0042"
	doc := "<file_info>\n<name>x</name>\n</file_info>\n<workunit>\n</workunit>"
	a, b := split([]row{
		mkrow(wa, wa, "id", "1", "name", wa, "create_time", "100", "priority", "50", "xml_doc", doc, "batch", "7", "keywords", "<NULL>"),
		mkrow(wb, wb, "id", "9", "name", wb, "create_time", "200", "priority", "50", "xml_doc", doc, "batch", "7", "keywords", "<NULL>"),
		mkrow("foreign_1", "foreign_1", "id", "3"),
	}, []string{"fa"}, []string{"fb"})
	if d := compareRows(s, cols, a, b); d.pairs != 1 || len(d.diffs) != 0 || len(d.onlyA)+len(d.onlyB) != 0 {
		t.Fatalf("equal rows: %+v", d)
	}

	b[0].vals["xml_doc"] = sql.NullString{String: strings.Replace(doc, "<name>x</name>", "<name>y</name>", 1), Valid: true}
	b[0].vals["keywords"] = sql.NullString{String: "", Valid: true} // '' is not NULL
	d := compareRows(s, cols, a, b)
	if len(d.diffs) != 2 || d.diffs[0].column != "xml_doc" || d.diffs[1].column != "keywords" {
		t.Fatalf("want xml_doc and keywords to differ, got %+v", d.diffs)
	}
	var out bytes.Buffer
	report(&out, s, cols, d, []string{"fa"}, []string{"fb"}, "create_work", "native")
	for _, want := range []string{
		"2 DIFFERENCES",
		"DIFF workunit.xml_doc (0/f1/step 0 of 2)",
		`-   2 "<name>x</name>"`,
		`+   2 "<name>y</name>"`,
		"DIFF workunit.keywords",
		"create_work f1-SCI_fa-0-2-RND0001: NULL",
		`native      f1-SCI_fb-0-2-RND0042: ""`,
		"not compared: create_time",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// A work unit made on one side only, or assigned on one side only, has no
// partner.
func TestCompareUnpaired(t *testing.T) {
	s := tables["workunit"]
	a, b := split([]row{
		mkrow("t1-SCI_fa-0-1-RND0001_asgn", "t1-SCI_fa-0-1-RND0001_asgn", "priority", "1"),
		mkrow("t1-SCI_fb-0-1-RND0002", "t1-SCI_fb-0-1-RND0002", "priority", "1"),
	}, []string{"fa"}, []string{"fb"})
	d := compareRows(s, []string{"priority"}, a, b)
	if d.pairs != 0 || len(d.onlyA) != 1 || len(d.onlyB) != 1 {
		t.Fatalf("want both rows unpaired, got %+v", d)
	}
}

// Results are paired by their suffix, and their xml_doc_in is compared with
// their own names replaced (and only those).
func TestCompareResults(t *testing.T) {
	s := tables["result"]
	cols := []string{"id", "name", "random", "xml_doc_in", "server_state"}
	wa, wb := "f1-SCI_fa-0-2-RND0001", "f1-SCI_fb-0-2-RND0042"
	in := func(r, rnd string) string {
		return "<file_info>\n<name>" + r + "_r" + rnd + "_0</name>\n<max_nbytes>1000000</max_nbytes>\n</file_info>"
	}
	a, b := split([]row{
		mkrow(wa, wa+"_0", "id", "1", "name", wa+"_0", "random", "17", "xml_doc_in", in(wa+"_0", "997273935"), "server_state", "2"),
		mkrow(wb, wb+"_0", "id", "5", "name", wb+"_0", "random", "99", "xml_doc_in", in(wb+"_0", "1858773394"), "server_state", "2"),
	}, []string{"fa"}, []string{"fb"})
	if d := compareRows(s, cols, a, b); d.pairs != 1 || len(d.diffs) != 0 {
		t.Fatalf("results differing by names only: %+v", d)
	}
	b[0].vals["xml_doc_in"] = sql.NullString{String: in(wa+"_0", "1"), Valid: true}
	if d := compareRows(s, cols, a, b); len(d.diffs) != 1 || d.diffs[0].column != "xml_doc_in" {
		t.Fatalf("a result naming the other side's result must differ: %+v", d)
	}
	b[0].vals["xml_doc_in"] = sql.NullString{String: strings.Replace(in(wb+"_0", "1"), "1000000", "1000001", 1), Valid: true}
	if d := compareRows(s, cols, a, b); len(d.diffs) != 1 {
		t.Fatalf("a different max_nbytes must differ: %+v", d)
	}
}

func TestParseJobs(t *testing.T) {
	jobs, err := parseJobs("f1 -state_file s1 -- --x 1\n\nf2 -state_file /abs/s2\n", "jobs", "/d")
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 2 || jobs[0].Files["state_file"] != "/d/s1" || strings.Join(jobs[0].Args, " ") != "--x 1" ||
		jobs[1].Files["state_file"] != "/abs/s2" || jobs[1].Args != nil {
		t.Fatalf("got %+v", jobs)
	}
	if _, err := parseJobs("f-1 -state_file s\n", "jobs", "/d"); err == nil {
		t.Fatal("a bad chain name was accepted")
	}
}

// transition_time is compared by what it means: create_work's INT_MAX for
// assigned work is not "now" (a native insert that wrote its create time
// had the transitioner take up assigned work create_work leaves alone).
func TestCompareTransitionTime(t *testing.T) {
	s := tables["workunit"]
	cols := []string{"create_time", "transition_time"}
	wa, wb := "t1-SCI_fa-0-1-RND0001", "t1-SCI_fb-0-1-RND0002"
	mk := func(aT, bT string) tableDiff {
		a, b := split([]row{
			mkrow(wa, wa, "create_time", "1000", "transition_time", aT),
			mkrow(wb, wb, "create_time", "1005", "transition_time", bT),
		}, []string{"fa"}, []string{"fb"})
		return compareRows(s, cols, a, b)
	}
	if d := mk("1000", "1006"); len(d.diffs) != 0 {
		t.Errorf("both at creation: %+v", d.diffs)
	}
	if d := mk("865007", "865012"); len(d.diffs) != 0 {
		t.Errorf("both ten days after creation: %+v", d.diffs)
	}
	d := mk("2147483647", "1005")
	if len(d.diffs) != 1 {
		t.Fatalf("INT_MAX against creation time: %+v", d.diffs)
	}
	var out bytes.Buffer
	report(&out, s, cols, d, []string{"fa"}, []string{"fb"}, "create_work", "native")
	if !strings.Contains(out.String(), `"never (INT_MAX)"`) || !strings.Contains(out.String(), `"at its creation (within a minute of create_time)"`) {
		t.Errorf("report:\n%s", out.String())
	}
}

// Work units that are over: their canonical results' ids and the
// transitioner's last times differ between two runs and compare equal
// settled, by whether they are set; one left unset on one side still differs.
func TestCompareSettledWorkunits(t *testing.T) {
	cols := []string{"id", "name", "create_time", "canonical_resultid", "canonical_credit", "transition_time", "priority"}
	wa := "f1-SCI_fna-1-2-RND0001"
	wb := "f1-SCI_fnb-1-2-RND0042"
	a, b := split([]row{
		mkrow(wa, wa, "id", "1", "name", wa, "create_time", "100", "canonical_resultid", "17", "canonical_credit", "0.0205", "transition_time", "2147483647", "priority", "50"),
		mkrow(wb, wb, "id", "9", "name", wb, "create_time", "400", "canonical_resultid", "23", "canonical_credit", "0.0211", "transition_time", "2147483647", "priority", "50"),
	}, []string{"fna"}, []string{"fnb"})
	if d := compareRows(tables["workunit"], cols, a, b); len(d.diffs) != 2 || d.diffs[0].column != "canonical_resultid" {
		t.Fatalf("as made, the canonical results' ids and credits must differ: %+v", d.diffs)
	}
	s := settled(tables["workunit"])
	if d := compareRows(s, cols, a, b); d.pairs != 1 || len(d.diffs) != 0 {
		t.Fatalf("settled, equal work units differ: %+v", d.diffs)
	}
	b[0].vals["canonical_resultid"] = sql.NullString{String: "0", Valid: true}
	b[0].vals["canonical_credit"] = sql.NullString{String: "0.000000", Valid: true}
	b[0].vals["transition_time"] = sql.NullString{String: "500", Valid: true}
	if d := compareRows(s, cols, a, b); len(d.diffs) != 3 {
		t.Fatalf("settled, a work unit without its canonical result or credit and still transitioning must differ thrice: %+v", d.diffs)
	}
	if r := settled(tables["result"]); r.whetherSet != nil {
		t.Fatal("results are not settled")
	}
}
