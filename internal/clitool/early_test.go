package clitool

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/rboinc/rboinc/workflow/client"
	"github.com/urfave/cli/v2"
)

// captureStdout runs fn with os.Stdout going to a pipe, and returns what
// it printed.
func captureStdout(t *testing.T, fn func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	defer func() { os.Stdout = old }()
	fn()
	w.Close()
	os.Stdout = old
	return <-done
}

func earlyApp() *cli.App {
	app := &cli.App{Name: "rb", Flags: []cli.Flag{
		&cli.StringFlag{Name: "name", Usage: "`NAME`"}, &cli.BoolFlag{Name: "verbose"}, &cli.StringFlag{Name: "vel_file"},
	}}
	Setup(app)
	return app
}

// TestEarly: -version, -man and -completion are answered before anything
// else, written in full or abbreviated as the full parse takes them, and
// never when the word is another option's value.
func TestEarly(t *testing.T) {
	for _, tc := range []struct {
		args string
		done bool
		code int
		out  string // prefix of stdout
	}{
		{"--version", true, 0, "rb "},
		{"-version", true, 0, "rb "},
		{"-VERSION", true, 0, "rb "},
		{"-vers", true, 0, "rb "},            // unambiguous prefix
		{"--versi=true", true, 0, "rb "},     // with a value
		{"-name x -version", true, 0, "rb "}, // anywhere
		{"-name -version", false, 0, ""},     // the value of -name
		{"-version=false", false, 0, ""},     // asked not to
		{"-ve", false, 0, ""},                // -verbose, -version or -vel_file: the full parse says
		{"-man", true, 0, ".nh\n.TH rb 1"},   // hidden: in full only
		{"-ma", false, 0, ""},
		{"-completion bash", true, 0, "# bash"},
		{"--completion=fish", true, 0, "# fish"},
		{"-completion tcsh", true, client.ExitUsage, ""},
		{"-completion", true, client.ExitUsage, ""},
		{"-- -version", false, 0, ""},
	} {
		var code int
		var done bool
		out := captureStdout(t, func() {
			code, done = Early(earlyApp(), append([]string{"rb"}, strings.Fields(tc.args)...), true)
		})
		if done != tc.done || code != tc.code || !strings.HasPrefix(out, tc.out) || (!tc.done && out != "") {
			t.Errorf("%q: done %v, exit %d, out %.30q; want %v, %d, %q", tc.args, done, code, out, tc.done, tc.code, tc.out)
		}
	}
}

// TestWriteJSONResult: a result with a failure is one object carrying
// both; ReportJSON then prints nothing more on stdout.
func TestWriteJSONResult(t *testing.T) {
	type rep struct {
		Total  int      `json:"total"`
		Failed []string `json:"failed,omitempty"`
	}
	var b bytes.Buffer
	if err := WriteJSONResult(&b, rep{Total: 2}, nil); err != nil || b.String() != "{\n  \"total\": 2\n}\n" {
		t.Errorf("success: %q %v", b.String(), err)
	}
	b.Reset()
	partial := errors.Join(client.ErrPartial, errors.New("1 of 2 files failed"))
	err := WriteJSONResult(&b, rep{Total: 2, Failed: []string{"a"}}, partial)
	want := "{\n  \"total\": 2,\n  \"failed\": [\n    \"a\"\n  ],\n  \"error\": \"some files failed to download\\n1 of 2 files failed\",\n  \"exit_code\": 7\n}\n"
	if b.String() != want || !errors.Is(err, client.ErrPartial) {
		t.Errorf("partial: %q %v\nwant %q", b.String(), err, want)
	}
	var again bytes.Buffer
	if code := reportJSON(&again, "rb", err); code != client.ExitPartial || again.Len() != 0 {
		t.Errorf("ReportJSON after WriteJSONResult: exit %d, printed %q", code, again.String())
	}
	b.Reset()
	WriteJSONResult(&b, struct{}{}, client.Usagef("bad"))
	var got failureJSON
	if json.Unmarshal(b.Bytes(), &got) != nil || got != (failureJSON{"bad", client.ExitUsage}) {
		t.Errorf("empty object: %q", b.String())
	}
	if err := WriteJSONResult(&b, []int{1}, client.Usagef("bad")); err == nil || errors.As(err, new(*inJSON)) {
		t.Errorf("an array cannot carry the failure: %v", err)
	}
	var plain bytes.Buffer
	if code := reportJSON(&plain, "rb", client.Usagef("bad -x")); code != client.ExitUsage || plain.String() != "{\n  \"error\": \"bad -x\",\n  \"exit_code\": 2\n}\n" {
		t.Errorf("ReportJSON: exit %d, %q", code, plain.String())
	}
}
