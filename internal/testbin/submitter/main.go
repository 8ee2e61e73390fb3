// Command submitter is the engine tests' submitting process: a server's
// submissions in a process of its own, which the kill tests kill -9 at
// random moments. It reads a JSON spec (the file named by its only
// argument: the server root, the user, the requests), opens the engine on
// the root and submits the requests one after the other, each announced
// by a line "go" on its standard output.
//
// It is a program of the shared test build (internal/testbin), built
// without the race detector also when the tests are: it used to be the
// test binary itself, and under -race each of its submissions took several
// times as long, so the kills' random moments mostly came before any
// commit. The race detector had nothing to report from it that the tests
// could see (it is killed, and its exit status was not checked); the same
// submission code runs under -race in the test processes' own
// submissions.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"

	"github.com/rboinc/rboinc/internal/engine"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// Spec is what the tests write for it (internal/engine's submitterCmd).
type Spec struct {
	Root     string
	UserID   int64
	User     string
	Requests []wire.SubmitRequest
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: submitter SPEC.json")
		os.Exit(2)
	}
	if err := run(context.Background(), os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(ctx context.Context, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var s Spec
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("reading the spec %s: %w", path, err)
	}
	e, err := engine.Open(ctx, s.Root, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		return err
	}
	defer e.Close()
	for _, r := range s.Requests {
		fmt.Println("go")
		if _, err := e.Submit(ctx, store.User{ID: s.UserID, Name: s.User}, r); err != nil {
			return fmt.Errorf("submitting: %w", err)
		}
	}
	return nil
}
