package clitool

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/workflow/client"
	"github.com/urfave/cli/v2"
)

func TestConfirm(t *testing.T) {
	for _, tc := range []struct {
		in               string
		interactive, yes bool
		ok               bool
		exit             int
	}{
		{"", false, true, true, 0},
		{"", false, false, false, client.ExitUsage},
		{"y\n", true, false, true, 0},
		{"Yes\n", true, false, true, 0},
		{"n\n", true, false, false, client.ExitFailure},
		{"\n", true, false, false, client.ExitFailure},
		{"", true, false, false, client.ExitFailure},
	} {
		var out bytes.Buffer
		err := Confirm(strings.NewReader(tc.in), &out, tc.interactive, tc.yes, "purge", "Purge group g? [y/N] ")
		if (err == nil) != tc.ok || client.ExitCode(err) != tc.exit {
			t.Errorf("%+v: err = %v (exit %d)", tc, err, client.ExitCode(err))
		}
		asked := out.String() == "Purge group g? [y/N] "
		if asked != (tc.interactive && !tc.yes) {
			t.Errorf("%+v: prompt %q", tc, out.String())
		}
	}
	err := Confirm(strings.NewReader(""), &bytes.Buffer{}, false, false, "purge", "")
	if err.Error() != "refusing to purge without confirmation: add -yes" || !errors.Is(err, client.ErrUsage) {
		t.Errorf("non-interactive: %v", err)
	}
}

func TestFlagString(t *testing.T) {
	for _, tc := range []struct {
		f    cli.Flag
		want string
	}{
		{&cli.StringFlag{Name: "url", EnvVars: []string{"RBOINC_URL"}, Value: "secret", Usage: "base `URL`"}, "-url URL\tbase URL [$RBOINC_URL]"},
		{&cli.IntFlag{Name: "num_steps", Value: 1, Usage: "`N` steps"}, "-num_steps N\tN steps (default: 1)"},
		{&cli.IntFlag{Name: "batch", Usage: "batch `ID`"}, "-batch ID\tbatch ID"},
		{&cli.StringFlag{Name: "coor_file", Usage: "Coordinates (optional)"}, "-coor_file FILE\tCoordinates (optional)"},
		{&cli.BoolFlag{Name: "help", Aliases: []string{"h"}, Usage: "print this help"}, "-help, -h\tprint this help"},
	} {
		if got := flagString(tc.f); got != tc.want {
			t.Errorf("flagString = %q, want %q", got, tc.want)
		}
	}
	if p, u := unquoteUsage("a `b"); p != "" || u != "a `b" {
		t.Errorf("unbalanced quote: %q %q", p, u)
	}
}

func TestExpandArgs(t *testing.T) {
	flags := []cli.Flag{
		&cli.StringFlag{Name: "app_name"}, &cli.StringFlag{Name: "name"}, &cli.StringFlag{Name: "name_x"},
		&cli.BoolFlag{Name: "dry_run"}, &cli.BoolFlag{Name: "help", Aliases: []string{"h"}}, &cli.BoolFlag{Name: "help_parameters"},
		&cli.StringFlag{Name: "coor_file"}, &cli.StringFlag{Name: "conf_file"}, &cli.IntFlag{Name: "num_steps"},
		&cli.BoolFlag{Name: "man", Hidden: true},
	}
	for _, tc := range []struct {
		in   string
		want string
		err  string
	}{
		{"-app md -dry -Num_Steps 10", "-app_name md -dry_run -num_steps 10", ""},
		{"--APP=md -NAME n1 -name_x v", "--app_name=md -name n1 -name_x v", ""},
		{"-name -dry -coor -co", "-name -dry -coor_file -co", ""}, // a value is never rewritten
		{"-H -help_p", "-h -help_parameters", ""},
		{"-bogus 1 -- -app x", "", "unknown option -bogus"},
		{"-app_nmae md", "", "unknown option -app_nmae: did you mean -app_name?"},
		{"-num-steps 3", "", "unknown option -num-steps: did you mean -num_steps?"},
		// Only options -help lists are suggested (-man is hidden), and two
		// letters swapped are one slip.
		{"-nmae n1", "", "unknown option -nmae: did you mean -name?"},
		{"-mna", "", "unknown option -mna"},
		{"-- -bogus", "-- -bogus", ""},
		{"x - -num_steps=3", "x - -num_steps=3", ""},
		{"-co x", "", "option -co is ambiguous: it could be -conf_file, -coor_file"},
		{"-he", "", "option -he is ambiguous: it could be -help, -help_parameters"},
	} {
		got, err := ExpandArgs(strings.Fields(tc.in), flags, false)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: err %v, want %q", tc.in, err, tc.err)
			}
			if IsAmbiguous(err) != strings.Contains(tc.err, "ambiguous") {
				t.Errorf("%q: IsAmbiguous(%v) = %v", tc.in, err, IsAmbiguous(err))
			}
			if lenient, err := ExpandArgs(strings.Fields(tc.in), flags, true); err != nil || strings.Join(lenient, " ") != tc.in {
				t.Errorf("%q lenient: %q %v", tc.in, lenient, err)
			}
			continue
		}
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("%q: got %q %v, want %q", tc.in, got, err, tc.want)
		}
	}
}

func TestURLCredentials(t *testing.T) {
	for _, tc := range []struct{ in, url, tok string }{
		{"http://toni:abc@h:8080/rboinc_cgi", "http://h:8080/rboinc_cgi", "abc"},
		{"http://h/rboinc_cgi", "http://h/rboinc_cgi", ""},
		{"http://toni@h/x", "http://h/x", ""},
		{"::", "::", ""},
	} {
		if u, tok := URLCredentials(tc.in); u != tc.url || tok != tc.tok {
			t.Errorf("URLCredentials(%q) = %q, %q", tc.in, u, tok)
		}
	}
}

func TestSuggest(t *testing.T) {
	names := []string{"listen", "root", "addr-file", "h"}
	for in, want := range map[string]string{"lisen": "listen", "ROOT": "root", "rot": "root", "addrfile": "addr-file", "zzzzzz": "", "j": ""} {
		if got := Suggest(in, names); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
}
