package master_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/standinserver"
	"github.com/rboinc/rboinc/workflow/master"
)

func TestMain(m *testing.M) {
	code := m.Run()
	exampleStop()
	os.Exit(code)
}

// langevin is the example queue's directory.
var langevin, _ = filepath.Abs("../../examples/langevin")

// inputs are the langevin queue's inputs of the example.
func inputs() map[string]string {
	return map[string]string{"coor_file": filepath.Join(langevin, "input.coor"), "vel_file": filepath.Join(langevin, "input.vel")}
}

// connect opens a master of a new user on s, its files under the test's
// directory.
func connect(t *testing.T, s *standinserver.Server, user string) *master.Master {
	t.Helper()
	tok, err := s.AddUser(user)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	m, err := master.Connect(context.Background(), s.URL, tok, master.Options{Dir: filepath.Join(dir, "results"), StateFile: filepath.Join(dir, "state.json")})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// collect processes events until until says stop or the time is over.
func collect(t *testing.T, m *master.Master, d time.Duration, until func([]*master.Event) bool) []*master.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var got []*master.Event
	for !until(got) {
		if _, err := m.Process(ctx, 2*time.Second, func(e *master.Event) error {
			got = append(got, e)
			return nil
		}); err != nil {
			t.Fatalf("after %d events: %v", len(got), err)
		}
	}
	return got
}

// count counts events of one type.
func count(evs []*master.Event, typ master.EventType) int {
	n := 0
	for _, e := range evs {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// nKinds counts events of one kind.
func nKinds(evs []*master.Event, kind string) int {
	n := 0
	for _, e := range evs {
		if e.Kind == kind {
			n++
		}
	}
	return n
}
