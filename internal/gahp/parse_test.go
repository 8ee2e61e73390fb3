package gahp

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/workflow/wire"
)

func TestSplitEscape(t *testing.T) {
	for _, c := range []struct {
		line string
		want []string
	}{
		{`A B`, []string{"A", "B"}},
		{`a\ b c`, []string{"a b", "c"}},
		{`a\\ b`, []string{`a\`, "b"}},
		{`a\\\ b`, []string{`a\ b`}},
		{`  a   b  `, []string{"a", "b"}},
		{`a\`, []string{`a\`}},
		{``, nil},
		{`\x`, []string{"x"}},
	} {
		if got := Split(c.line); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Split(%q) = %q, want %q", c.line, got, c.want)
		}
	}
	for _, s := range []string{"plain", "a b", `back\slash`, `\ `, "tab\there", ""} {
		w := Split(Escape(s))
		if s == "" {
			if len(w) != 0 {
				t.Errorf("empty: %q", w)
			}
			continue
		}
		if len(w) != 1 || w[0] != s {
			t.Errorf("Split(Escape(%q)) = %q", s, w)
		}
	}
	if got := Escape("two\nlines\r"); strings.ContainsAny(got, "\r\n") || got != `two\ lines\ ` {
		t.Errorf("Escape of line breaks: %q", got)
	}
}

func TestParse(t *testing.T) {
	q, err := Parse(Split(`boinc_submit 7 b app 2 j1 2 -x a\ b 1 /in/a.dat a.dat j2 0 0 1e9 NULL NULL NULL NULL NULL`))
	if err != nil {
		t.Fatal(err)
	}
	want := &Submit{Batch: "b", App: "app", Jobs: []Job{
		{Name: "j1", Args: []string{"-x", "a b"}, Inputs: []Input{{"/in/a.dat", "a.dat"}}},
		{Name: "j2", Args: []string{}},
	}, Params: []string{"1e9", "NULL", "NULL", "NULL", "NULL", "NULL"}}
	if q.Command != "BOINC_SUBMIT" || q.ID != 7 || !reflect.DeepEqual(q.Submit, want) {
		t.Errorf("submit: %+v %+v", q, q.Submit)
	}
	q, err = Parse(Split(`BOINC_FETCH_OUTPUT 3 j /d e.txt SOME 1 out.dat /x/y`))
	if err != nil || !reflect.DeepEqual(q.Fetch, &Fetch{Job: "j", Dir: "/d", Stderr: "e.txt", Specs: []Input{{"out.dat", "/x/y"}}}) {
		t.Errorf("fetch: %+v %v", q.Fetch, err)
	}
	q, err = Parse(Split(`BOINC_QUERY_BATCHES 4 1700000000.5 2 a b`))
	if err != nil || q.Query.MinModTime != 1700000000.5 || !reflect.DeepEqual(q.Query.Batches, []string{"a", "b"}) {
		t.Errorf("query: %+v %v", q.Query, err)
	}
	for _, bad := range []string{
		`BOINC_SUBMIT`, `BOINC_SUBMIT 1`, `BOINC_SUBMIT x b app 1 j 0 0`, `BOINC_SUBMIT 1 b app 1 j 0 0 x`,
		`BOINC_SUBMIT 1 b app 99999999999999999999 j 0 0`, `BOINC_SUBMIT 1 b app 1 j 5 0`,
		`BOINC_SUBMIT 1 b app 1 j 0 1 src`, `BOINC_SUBMIT 1 b app +1 j 0 0`,
		`BOINC_QUERY_BATCHES 1 0 2 a`, `BOINC_QUERY_BATCHES 1 NaN 0`, `BOINC_RETIRE_BATCH 1`,
		`BOINC_SET_LEASE 1 b`, `BOINC_ABORT_JOBS 1`, `BOINC_PING 1 x`, `UNKNOWN 1`, `BOINC_FETCH_OUTPUT 1 j d e BOTH 0`,
	} {
		if _, err := Parse(Split(bad)); !errors.Is(err, errSyntax) {
			t.Errorf("Parse(%q): %v, want a syntax error", bad, err)
		}
	}
}

func TestBind(t *testing.T) {
	q := &wire.Queue{Name: "q", Parameters: []wire.Parameter{
		{Name: "coor_file", OpenName: "input.coor"}, {Name: "vel_file", OpenName: "input.vel"}, {Name: "conf_file", OpenName: "input.conf", Optional: true},
	}}
	got, err := bind(q, []Input{{"/v", "input.vel"}, {"/c", "whatever"}})
	if err != nil || !reflect.DeepEqual(got, map[string]string{"vel_file": "/v", "coor_file": "/c"}) {
		t.Errorf("by open name, then in order: %v %v", got, err)
	}
	got, err = bind(q, []Input{{"/a", "x"}, {"/b", "y"}, {"/f", "conf_file"}})
	if err != nil || !reflect.DeepEqual(got, map[string]string{"coor_file": "/a", "vel_file": "/b", "conf_file": "/f"}) {
		t.Errorf("by parameter name: %v %v", got, err)
	}
	if _, err := bind(q, []Input{{"/a", "x"}}); err == nil {
		t.Error("a mandatory parameter left without a file was accepted")
	}
	if _, err := bind(q, []Input{{"/a", "x"}, {"/b", "y"}, {"/c", "z"}, {"/d", "w"}}); err == nil {
		t.Error("more files than parameters were accepted")
	}
	if _, err := bind(q, []Input{{"/a", "input.vel"}, {"/b", "vel_file"}}); err == nil {
		t.Error("two files for one parameter were accepted")
	}
}

// FuzzParse: no request line makes the parser panic or allocate beyond
// what the line holds, and what it accepts has the counts it announced.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`BOINC_SUBMIT 1 b app 1 j 1 a\ b 1 /x x NULL NULL NULL NULL NULL NULL`,
		`BOINC_QUERY_BATCHES 2 0 1 b`, `BOINC_FETCH_OUTPUT 3 j d e ALL 0`, `BOINC_ABORT_JOBS 4 a b`,
		`BOINC_RETIRE_BATCH 5 b`, `BOINC_SET_LEASE 6 b 1e9`, `BOINC_PING 7`, `RESULTS`, `a\\\ b\`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		w := Split(line)
		for _, x := range w {
			if x == "" {
				t.Fatalf("empty word from %q", line)
			}
		}
		q, err := Parse(w)
		if err != nil {
			if !errors.Is(err, errSyntax) {
				t.Fatalf("error %v is no syntax error", err)
			}
			return
		}
		if q.Submit != nil && len(q.Submit.Jobs) == 0 {
			t.Fatalf("a submission without jobs was accepted: %q", line)
		}
		for _, s := range w {
			e := Escape(s)
			if strings.ContainsAny(e, "\r\n") {
				t.Fatalf("Escape(%q) = %q holds a line break, which would end the reply", s, e)
			}
			// Line breaks cannot travel in a reply (they become escaped
			// spaces); everything else comes back as it was.
			if !strings.ContainsAny(s, "\r\n") && Split(e)[0] != s {
				t.Fatalf("escape round trip of %q", s)
			}
		}
	})
}
