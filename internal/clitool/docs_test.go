package clitool

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

func docTestApps() map[string]*cli.App {
	client := &cli.App{Name: "rb-client", Usage: "a client", Flags: []cli.Flag{
		&cli.StringFlag{Name: "app_name", Usage: "the `QUEUE`"},
		&cli.StringFlag{Name: "coor_file", Usage: "coordinates `FILE`"},
		&cli.BoolFlag{Name: "dry_run", Usage: "don't [really] do it's thing"},
	}}
	Setup(client)
	server := &cli.App{Name: "rb-server", Usage: "a server", Flags: []cli.Flag{&cli.BoolFlag{Name: "version"}},
		Commands: []*cli.Command{
			{Name: "serve", Usage: "serve", Flags: []cli.Flag{&cli.StringFlag{Name: "root"}, &cli.StringFlag{Name: "listen"}}},
			{Name: "user", Usage: "users", Subcommands: []*cli.Command{
				{Name: "add", Flags: []cli.Flag{&cli.StringFlag{Name: "root"}}},
				{Name: "rotate", Flags: []cli.Flag{&cli.StringFlag{Name: "root"}, &cli.BoolFlag{Name: "quiet"}}},
			}},
		}}
	return map[string]*cli.App{"client": client, "server": server}
}

// TestCompletionsAndManPages: each shell's script names every visible flag
// (and subcommand), and the shells themselves find no syntax error in
// them; the manual page names every flag and renders.
func TestCompletionsAndManPages(t *testing.T) {
	dir := t.TempDir()
	for kind, app := range docTestApps() {
		single := kind == "client"
		var want []string
		for _, f := range app.Flags {
			if vf, ok := f.(cli.VisibleFlag); ok && vf.IsVisible() {
				want = append(want, f.Names()[0])
			}
		}
		for _, c := range app.Commands {
			want = append(want, c.Name)
			for _, f := range c.Flags {
				want = append(want, f.Names()[0])
			}
			for _, s := range c.Subcommands {
				want = append(want, s.Name)
				for _, f := range s.Flags {
					want = append(want, f.Names()[0])
				}
			}
		}
		for _, shell := range Shells {
			var b bytes.Buffer
			if err := WriteCompletion(&b, app, shell, single); err != nil {
				t.Fatal(err)
			}
			for _, w := range want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("%s %s completion lacks %q:\n%s", kind, shell, w, b.String())
				}
			}
			path := filepath.Join(dir, kind+"."+shell)
			os.WriteFile(path, b.Bytes(), 0o644)
			check := map[string][]string{"bash": {"bash", "-n", path}, "zsh": {"zsh", "-n", path}, "fish": {"fish", "--no-execute", path}}[shell]
			if _, err := exec.LookPath(check[0]); err != nil {
				t.Logf("%s is not installed: its completion script is not syntax-checked (.ci/run installs it)", shell)
				continue
			}
			if out, err := exec.Command(check[0], check[1:]...).CombinedOutput(); err != nil {
				t.Errorf("%s finds the %s script broken: %v\n%s\n%s", shell, kind, err, out, b.String())
			}
		}
		var man bytes.Buffer
		if err := WriteMan(&man, app); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(man.String(), ".TH "+app.Name+" 1") {
			t.Errorf("%s: not a section 1 page:\n%.200s", kind, man.String())
		}
		for _, w := range want {
			if !strings.Contains(man.String(), w) {
				t.Errorf("%s manual page lacks %q", kind, w)
			}
		}
		if _, err := exec.LookPath("groff"); err == nil {
			cmd := exec.Command("groff", "-man", "-Tutf8", "-ww", "-z")
			cmd.Stdin = &man
			if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
				t.Errorf("groff warns about the %s manual page: %v\n%s", kind, err, out)
			}
		}
	}
	if err := WriteCompletion(&bytes.Buffer{}, docTestApps()["client"], "tcsh", true); err == nil {
		t.Error("an unknown shell was accepted")
	}
}
