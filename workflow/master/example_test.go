package master_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/rboinc/rboinc/internal/standinserver"
	"github.com/rboinc/rboinc/workflow/master"
)

var (
	exampleOnce sync.Once
	exampleURL  string
	exampleTok  string
	exampleStop = func() {}
)

// exampleServer starts, once, a real server on the BOINC stand-in in this
// process and gives its URL and a user's token. A real master gets them
// from its configuration (the clients read RBOINC_URL and RBOINC_TOKEN).
func exampleServer() (url, token string) {
	exampleOnce.Do(func() {
		dir, err := os.MkdirTemp("", "master-example")
		if err != nil {
			log.Fatal(err)
		}
		s, stop, err := standinserver.StartDir(dir, standinserver.Options{})
		if err != nil {
			log.Fatal(err)
		}
		exampleStop = func() { stop(); os.RemoveAll(dir) }
		exampleURL = s.URL
		if exampleTok, err = s.AddUser("scientist"); err != nil {
			log.Fatal(err)
		}
	})
	return exampleURL, exampleTok
}

// The smallest complete master: three work units of the langevin queue,
// each result waited for, its files on disk.
func Example() {
	url, token := exampleServer()
	work, _ := os.MkdirTemp("", "master")
	defer os.RemoveAll(work)
	in := map[string]string{"coor_file": "../../examples/langevin/input.coor", "vel_file": "../../examples/langevin/input.vel"}

	ctx := context.Background()
	m, err := master.Connect(ctx, url, token, master.Options{
		Dir: filepath.Join(work, "results"), StateFile: filepath.Join(work, "master.state")})
	if err != nil {
		log.Fatal(err)
	}
	wus := []*master.WU{m.NewWU("langevin", "a", in), m.NewWU("langevin", "b", in), m.NewWU("langevin", "c", in)}
	if err := m.Submit(ctx, wus...); err != nil { // one request for all three
		log.Fatal(err)
	}
	results, files := 0, 0
	for left := len(wus); left > 0; {
		_, err := m.Process(ctx, 30*time.Second, func(e *master.Event) error {
			switch e.Type {
			case master.EventResult:
				results, files = results+1, files+len(e.Result.Files)
			case master.EventFailure:
				fmt.Println(e.Name, "failed:", e.Reason)
				left--
			}
			if e.Kind == "chain_done" {
				left--
			}
			return nil
		})
		if err != nil {
			log.Fatal(err)
		}
	}
	fmt.Println(results, "results,", files, "files")
	// Output: 3 results, 9 files
}

// Throttling as DC_getWUNumber allows: submit only while fewer than 100
// work units run.
func ExampleMaster_Count() {
	url, token := exampleServer()
	ctx := context.Background()
	m, err := master.Connect(ctx, url, token, master.Options{Dir: os.TempDir()})
	if err != nil {
		log.Fatal(err)
	}
	running, err := m.Count(ctx, master.StateRunning)
	if err != nil {
		log.Fatal(err)
	}
	if running < 100 {
		fmt.Println("room for", 100-running, "more")
	}
	// Output: room for 100 more
}

// Events one at a time, as DC_waitMasterEvent: the master acknowledges
// each when it is done with it; until then a restarted master gets it
// again.
func ExampleMaster_Wait() {
	ctx := context.Background()
	m, err := master.Connect(ctx, os.Getenv("RBOINC_URL"), os.Getenv("RBOINC_TOKEN"),
		master.Options{Dir: "results", StateFile: "master.state"})
	if err != nil {
		log.Fatal(err)
	}
	for {
		e, err := m.Wait(ctx, time.Minute)
		if err != nil {
			log.Fatal(err)
		}
		if e == nil {
			continue // nothing within the minute
		}
		if e.Type == master.EventResult {
			fmt.Println(e.Name, "step", e.Step, "coordinates in", e.Result.Alias(".coor"))
		}
		if err := m.Ack(ctx, e); err != nil {
			log.Fatal(err)
		}
	}
}

// Suspend, resume and cancel a work unit by its tag and name, as
// DC_suspendWU, DC_resumeWU and DC_cancelWU.
func ExampleMaster_Suspend() {
	ctx := context.Background()
	m, err := master.Connect(ctx, os.Getenv("RBOINC_URL"), os.Getenv("RBOINC_TOKEN"), master.Options{})
	if err != nil {
		log.Fatal(err)
	}
	wu := &master.WU{Tag: "master", Name: "run7"}
	if err := m.Suspend(ctx, wu); err != nil {
		log.Fatal(err)
	}
	if err := m.Resume(ctx, wu); err != nil {
		log.Fatal(err)
	}
	if err := m.Cancel(ctx, wu); err != nil {
		log.Fatal(err)
	}
}
