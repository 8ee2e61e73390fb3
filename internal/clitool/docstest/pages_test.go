package docstest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestUnknownOption: an option the app does not define, for the
// subcommand the line names, is found; defined ones, unique prefixes of
// one-dash programs, extra names and the early options are not.
func TestUnknownOption(t *testing.T) {
	app := &cli.App{
		Flags: []cli.Flag{&cli.StringFlag{Name: "root"}},
		Commands: []*cli.Command{{Name: "user", Subcommands: []*cli.Command{
			{Name: "add", Flags: []cli.Flag{&cli.BoolFlag{Name: "admin"}}},
		}}},
	}
	for _, c := range []struct {
		args   []string
		single bool
		want   string
	}{
		{[]string{"user", "add", "--root", "R", "--admin", "alice"}, false, ""},
		{[]string{"user", "--admin"}, false, "--admin"},
		{[]string{"--adm"}, false, "--adm"},
		{[]string{"user", "add", "--ro", "R"}, false, "--ro"},
		{[]string{"user", "add", "-ro", "R"}, true, ""},
		{[]string{"--completion", "zsh"}, false, ""},
		{[]string{"-coor_file", "x"}, true, ""},
		{[]string{"-vel_file", "x"}, true, "-vel_file"},
		{[]string{"-extend", "-5"}, true, "-extend"},
	} {
		if got := unknownOption(app, c.args, c.single, []string{"coor_file"}); got != c.want {
			t.Errorf("unknownOption(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}

// TestInvocations: command lines are found in fenced blocks only, in
// pipelines, after sudo or variables, in XML daemon lines, and without
// their comments and brackets.
func TestInvocations(t *testing.T) {
	root := t.TempDir()
	page := "```sh\n" +
		"sudo -u boincadm rboinc-server init --root R   # a comment --nope\n" +
		"X=1 rboinc-server report --root R --mail; for u in a; do rboinc-server gc [--root R]; done\n" +
		"source <(rboinc-server --completion bash)\n" +
		"```\n" +
		"rboinc-server outside --fenced\n" +
		"```xml\n<daemon><cmd>rboinc-server assimilator -d 2</cmd></daemon>\n```\n"
	if err := os.WriteFile(filepath.Join(root, "p.md"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	invs, err := Invocations(root, []string{"p.md"}, "rboinc-server")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, inv := range invs {
		got = append(got, filepath.Join(inv.Args...))
	}
	want := []string{"init/--root/R", "report/--root/R/--mail", "gc/--root/R", "--completion/bash", "assimilator/-d/2"}
	if len(got) != len(want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("invocation %d: %q, want %q", i, got[i], want[i])
		}
	}
}
