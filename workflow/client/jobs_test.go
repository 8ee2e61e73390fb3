package client

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/internal/naming"
)

func TestParseJobs(t *testing.T) {
	in := `# my jobs
c1 -coor_file a.coor --pdb_file /abs/x.pdb

c2   -coor_file=sub/b.coor   # trailing comment
c3
`
	jobs, err := ParseJobs(strings.NewReader(in), "jobs.txt", "/base")
	if err != nil {
		t.Fatal(err)
	}
	want := []Job{
		{Name: "c1", Line: 2, Files: map[string]string{"coor_file": "/base/a.coor", "pdb_file": "/abs/x.pdb"}},
		{Name: "c2", Line: 4, Files: map[string]string{"coor_file": "/base/sub/b.coor"}},
		{Name: "c3", Line: 5, Files: map[string]string{}},
	}
	if !reflect.DeepEqual(jobs, want) {
		t.Fatalf("got %+v\nwant %+v", jobs, want)
	}
}

func TestParseJobsErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":                         "names no chain",
		"# only a comment\n":       "names no chain",
		"bad-name\n":               "line 1",
		"c1 coor\n":                `unexpected "coor"`,
		"c1 -coor\n":               "-coor needs a file name",
		"c1 -a x -a y\n":           "-a is given twice",
		"c1 -a x\nc1 -a y\n":       "chain c1 already appears on line 1",
		"c1 -=x\n":                 "want -parameter FILE",
		"c1 --\n":                  "needs a file name",
		"c1 -a=\n":                 "want -parameter FILE",
		strings.Repeat("x", 2<<20): "reading jobs.txt",
	} {
		_, err := ParseJobs(strings.NewReader(in), "jobs.txt", ".")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseJobs(%.30q) = %v, want an error with %q", in, err, want)
		}
	}
}

func FuzzParseJobs(f *testing.F) {
	f.Add("c1 -coor_file a.coor\nc2 -x=y # z\n")
	f.Add("# c\n\n  c3 --p /abs\n")
	f.Add("c1 -a\n")
	f.Fuzz(func(t *testing.T, in string) {
		jobs, err := ParseJobs(strings.NewReader(in), "jobs", "/d")
		if err != nil {
			return
		}
		if len(jobs) == 0 {
			t.Fatal("no jobs and no error")
		}
		seen := map[string]bool{}
		for _, j := range jobs {
			if !naming.ValidIdent(j.Name) || seen[j.Name] {
				t.Fatalf("bad or repeated name %q", j.Name)
			}
			seen[j.Name] = true
			for p, path := range j.Files {
				if p == "" || strings.Contains(p, "=") || !strings.HasPrefix(path, "/") {
					t.Fatalf("bad parameter %q -> %q", p, path)
				}
			}
		}
	})
}
