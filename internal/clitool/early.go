package clitool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/rboinc/rboinc/workflow/client"
	"github.com/urfave/cli/v2"
)

// docFlagsOf are the flags every program has for itself: -version, and the
// hidden ones that print its manual page and completion scripts.
func docFlagsOf() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "version", Category: CatGeneral, Usage: "print the version and exit"},
		&cli.BoolFlag{Name: "man", Hidden: true, Usage: "print the manual page (roff) and exit"},
		&cli.StringFlag{Name: "completion", Hidden: true, Usage: "print the completion script for `SHELL` (bash, zsh, fish) and exit"},
	}
}

// Early answers -version, -man and -completion SHELL before anything
// else (no server, token or other option is needed for them); done says
// it did. single: the program's options take one dash.
func Early(app *cli.App, args []string, single bool) (code int, done bool) {
	if len(args) < 2 {
		return 0, false
	}
	rest := args[1:]
	if single {
		// Abbreviated as the full parse would take them (-vers, -compl);
		// what is ambiguous or unknown here is left to the full parse.
		rest, _ = ExpandArgs(rest, app.Flags, true)
	}
	for i, a := range rest {
		if a == "--" {
			break
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || i > 0 && takesValue(app.Flags, rest[i-1]) {
			continue
		}
		switch strings.ToLower(name) {
		case "version":
			if hasVal {
				if b, err := strconv.ParseBool(val); err != nil || !b {
					continue
				}
			}
			fmt.Println(Version(app.Name))
			return 0, true
		case "man":
			return reportDoc(app.Name, WriteMan(os.Stdout, app)), true
		case "completion":
			if !hasVal {
				if i+1 >= len(rest) {
					return Report(app.Name, client.Usagef("-completion needs a shell: %s", strings.Join(Shells, ", "))), true
				}
				val = rest[i+1]
			}
			return reportDoc(app.Name, WriteCompletion(os.Stdout, app, val, single)), true
		}
	}
	return 0, false
}

func reportDoc(prog string, err error) int {
	if err != nil && strings.Contains(err.Error(), "no completion for shell") {
		err = client.Usagef("%v", err)
	}
	return Report(prog, err)
}

// WantsJSON tells whether args (without the program name) ask for -json.
func WantsJSON(args []string, flags []cli.Flag) bool {
	rest, _ := ExpandArgs(args, flags, true)
	for _, a := range rest {
		if a == "--" {
			return false
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "json" {
			if !hasVal {
				return true
			}
			b, err := strconv.ParseBool(val)
			return err == nil && b
		}
	}
	return false
}

// failureJSON is what a command run with -json prints on stdout when it
// fails, so that scripts never parse an empty output.
type failureJSON struct {
	Error    string `json:"error"`
	ExitCode int    `json:"exit_code"`
}

// ReportJSON is Report for a command run with -json: the failure also goes
// to stdout as {"error": ..., "exit_code": ...}, unless the command's own
// JSON answer already carries it (WriteJSONResult).
func ReportJSON(prog string, err error) int { return reportJSON(os.Stdout, prog, err) }

func reportJSON(stdout io.Writer, prog string, err error) int {
	code := Report(prog, err)
	var done *inJSON
	if err != nil && !errors.As(err, &done) {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(failureJSON{Error: err.Error(), ExitCode: code})
	}
	return code
}

// takesValue tells whether option a (as written) is a flag of flags that
// takes a value, so that the word after it is that value.
func takesValue(flags []cli.Flag, a string) bool {
	if !strings.HasPrefix(a, "-") || strings.Contains(a, "=") {
		return false
	}
	name := strings.TrimLeft(a, "-")
	for _, f := range flags {
		for _, n := range f.Names() {
			if strings.EqualFold(n, name) {
				df, ok := f.(cli.DocGenerationFlag)
				return ok && df.TakesValue()
			}
		}
	}
	return false
}

// inJSON marks an error that the command's JSON answer already carries.
type inJSON struct{ error }

func (e *inJSON) Unwrap() error { return e.error }

// WriteJSONResult writes v, which encodes as a JSON object, as a command's
// -json answer. When err is not nil (a result with a failure in it: some
// downloads failed, say), the same object also has the "error" and
// "exit_code" of a failure, so that stdout holds one JSON document, and
// the error returned is err, marked for ReportJSON.
func WriteJSONResult(w io.Writer, v any, err error) error {
	body, merr := json.Marshal(v)
	if merr != nil {
		return errors.Join(err, merr)
	}
	if err != nil {
		tail, _ := json.Marshal(failureJSON{Error: err.Error(), ExitCode: client.ExitCode(err)})
		if len(body) < 2 || body[0] != '{' {
			return errors.Join(err, fmt.Errorf("a JSON answer that is not an object: %.40s", body))
		}
		if string(body) == "{}" {
			body = tail
		} else {
			body = append(append(body[:len(body)-1:len(body)-1], ','), tail[1:]...)
		}
	}
	var out bytes.Buffer
	json.Indent(&out, body, "", "  ")
	out.WriteByte('\n')
	if _, werr := w.Write(out.Bytes()); werr != nil {
		return errors.Join(err, werr)
	}
	if err != nil {
		return &inJSON{err}
	}
	return nil
}
