package gahp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/boincdb"
)

// TestArgumentsAfterTemplateCommandLine: a job's arguments go after the
// command line of the queue's WU template (which then leaves the
// template: BOINC takes one), a job without arguments keeps the template's
// alone, and a batch without arguments leaves the template as it is.
func TestArgumentsAfterTemplateCommandLine(t *testing.T) {
	p := newProject(t)
	tdir := filepath.Join(p.e.Proj.Dir, "templates")
	wu, err := os.ReadFile(filepath.Join(tdir, "rboinc_langevin_wu"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := os.ReadFile(filepath.Join(tdir, "rboinc_langevin_result"))
	if err != nil {
		t.Fatal(err)
	}
	withCmd := strings.Replace(string(wu), "</workunit>", "    <command_line>--fixed  1</command_line>\n</workunit>", 1)
	if withCmd == string(wu) {
		t.Fatal("no </workunit> in the langevin template")
	}
	os.WriteFile(filepath.Join(tdir, "rboinc_cmdq_wu"), []byte(withCmd), 0o644)
	os.WriteFile(filepath.Join(tdir, "rboinc_cmdq_result"), res, 0o644)

	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.coor"), []byte("1 1 1\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "a.vel"), []byte("0 0 0\n"), 0o644)
	c := p.session(dir)
	if r := c.request("BOINC_SUBMIT 1 withargs cmdq 2 j1 2 -n 5 2 a.coor input.coor a.vel input.vel j2 0 2 a.coor input.coor a.vel input.vel", time.Minute); r != "1 NULL" {
		t.Fatal(r)
	}
	if r := c.request("BOINC_SUBMIT 2 noargs cmdq 1 j3 0 2 a.coor input.coor a.vel input.vel", time.Minute); r != "2 NULL" {
		t.Fatal(r)
	}
	target, err := boincdb.ForProject(p.e.Proj, true)
	if err != nil {
		t.Fatal(err)
	}
	db, err := boincdb.Open(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cmdline := func(job string) string {
		var doc string
		if err := db.QueryRow(`SELECT xml_doc FROM workunit WHERE name LIKE ?`, job+"-%").Scan(&doc); err != nil {
			t.Fatalf("work unit of %s: %v", job, err)
		}
		var lines []string
		for rest := doc; ; {
			i := strings.Index(rest, "<command_line>")
			if i < 0 {
				break
			}
			rest = rest[i+len("<command_line>"):]
			j := strings.Index(rest, "</command_line>")
			if s := strings.TrimSpace(rest[:j]); s != "" {
				lines = append(lines, s)
			}
			rest = rest[j:]
		}
		return strings.Join(lines, "|")
	}
	for job, want := range map[string]string{"j1": "--fixed 1 -n 5", "j2": "--fixed 1", "j3": "--fixed  1"} {
		if got := cmdline(job); got != want {
			t.Errorf("%s: command line %q, want %q", job, got, want)
		}
	}
}
