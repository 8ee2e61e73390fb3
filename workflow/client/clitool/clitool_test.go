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
