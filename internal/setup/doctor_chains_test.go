package setup

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/rboinc/rboinc/internal/spool"
	"github.com/rboinc/rboinc/internal/store"
)

// TestDoctorSeesChainsThatDoNotMove: the hook's last failure is a problem
// until work units are assimilated again; a chain whose work unit BOINC
// has held for longer than its delay bound is a problem.
func TestDoctorSeesChainsThatDoNotMove(t *testing.T) {
	ctx := context.Background()
	proj := fakeProject(t, t.TempDir())
	root, _ := initReal(t, proj)

	spool.RecordFailure(root, "c-ALICE_g-0-2-RND0001", "writing the outputs: no space left on device")
	p := problems(Doctor(ctx, root))
	if !strings.Contains(p, "the hook failed at") || !strings.Contains(p, "c-ALICE_g-0-2-RND0001") || !strings.Contains(p, "no space left on device") || !strings.Contains(p, "bin/start --cron") {
		t.Fatalf("doctor did not report the hook's failure:\n%s", p)
	}

	db, err := store.Open(ctx, filepath.Join(root, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := db.AddUser(ctx, "alice", "h")
	tmpl := filepath.Join("templates", "rboinc", "short_in")
	os.MkdirAll(filepath.Join(proj, "templates", "rboinc"), 0o755)
	write(t, filepath.Join(proj, tmpl), "<file_info><number>0</number></file_info>\n<workunit>\n<delay_bound>600</delay_bound>\n</workunit>\n", 0o644)
	cs, err := db.CreateChains(ctx, store.User{ID: uid, Name: "alice"}, []store.NewChain{
		{Chain: store.Chain{Group: "g", Name: "slow", Queue: "q", App: "a", NSteps: 2, WUTmpl: tmpl, ResTmpl: tmpl, Params: "{}", Layout: "{}"}},
		{Chain: store.Chain{Group: "g", Name: "fresh", Queue: "q", App: "a", NSteps: 2, WUTmpl: tmpl, ResTmpl: tmpl, Params: "{}", Layout: "{}"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	db.SetStepState(ctx, []string{cs[0].WU(0), cs[1].WU(0)}, "queued")
	db.Close()
	raw, err := sql.Open("sqlite", filepath.Join(root, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE steps SET created = ? WHERE wu_name = ?`, time.Now().Add(-2*time.Hour).Unix(), cs[0].WU(0)); err != nil {
		t.Fatal(err)
	}
	// A step finished after the failure: the assimilator runs again.
	if _, err := raw.Exec(`UPDATE steps SET finished = ? WHERE wu_name = ?`, time.Now().Add(time.Minute).Unix(), cs[1].WU(0)); err != nil {
		t.Fatal(err)
	}
	f := Doctor(ctx, root)
	p = problems(f)
	if strings.Contains(p, "the hook failed") || !strings.Contains(notes(f), "assimilated since") {
		t.Errorf("a failure work units were assimilated after is still a problem:\n%s", p)
	}
	if !strings.Contains(p, "1 running chain has not moved for longer than their work units' delay bound") || !strings.Contains(p, "g/slow of alice") {
		t.Fatalf("doctor did not see the chain that does not move:\n%s", p)
	}
	// With a delay bound of a day, two hours is no delay.
	write(t, filepath.Join(proj, tmpl), "<workunit><delay_bound>86400</delay_bound></workunit>\n", 0o644)
	if p := problems(Doctor(ctx, root)); strings.Contains(p, "have not moved") {
		t.Fatalf("a chain within its delay bound reported:\n%s", p)
	}
}

// TestDoctorSeesUnplacedCalls: hook calls kept aside because their work
// unit matched no chain step are a problem, with what to do.
func TestDoctorSeesUnplacedCalls(t *testing.T) {
	ctx := context.Background()
	root, _ := initReal(t, fakeProject(t, t.TempDir()))
	entry := filepath.Join(spool.Dir(root), spool.UnplacedPrefix+"123-ab-0")
	os.MkdirAll(entry, 0o755)
	os.WriteFile(filepath.Join(entry, spool.ReasonFile), []byte("BOINC finished work unit x, which matches no step\nmore\n"), 0o644)
	p := problems(Doctor(ctx, root))
	if !strings.Contains(p, "1 hook call for work units named like rboinc's that rboinc could not place: kept") || !strings.Contains(p, "rename an entry without its .unplaced- prefix") ||
		!strings.Contains(p, "(the first: .unplaced-123-ab-0: BOINC finished work unit x, which matches no step;") {
		t.Fatalf("doctor did not report the kept call:\n%s", p)
	}
}

// TestDoctorSeesUnwritableSpool: a spool the hook cannot write into is a
// problem. Made read-only by its mode, or, as root (whom modes do not
// stop), by a read-only file system mounted on it.
func TestDoctorSeesUnwritableSpool(t *testing.T) {
	ctx := context.Background()
	root, _ := initReal(t, fakeProject(t, t.TempDir()))
	dir := spool.Dir(root)
	os.MkdirAll(dir, 0o755)
	if os.Geteuid() == 0 {
		if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_RDONLY, "size=1m"); err != nil {
			t.Skipf("cannot mount a read-only file system on the spool (%v)", err)
		}
		defer syscall.Unmount(dir, syscall.MNT_DETACH)
	} else {
		os.Chmod(dir, 0o555)
		defer os.Chmod(dir, 0o755)
	}
	if p := problems(Doctor(ctx, root)); !strings.Contains(p, "the hook cannot write into its spool") || !strings.Contains(p, "chown -R") {
		t.Fatalf("doctor did not see the unwritable spool:\n%s", p)
	}
}

// TestDoctorNamesEnableAssignment: running chains of assigned work
// (-assign_user_all) while config.xml has no <enable_assignment> (or one
// BOINC reads as off) are a problem that names the switch and where it
// goes; with it, or without assigned chains, there is none.
func TestDoctorNamesEnableAssignment(t *testing.T) {
	ctx := context.Background()
	proj := fakeProject(t, t.TempDir())
	root, _ := initReal(t, proj)
	const named = "<enable_assignment>"
	db, err := store.Open(ctx, filepath.Join(root, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	uid, _ := db.AddUser(ctx, "alice", "h")
	u := store.User{ID: uid, Name: "alice"}
	chain := func(name, params string) {
		if _, err := db.CreateChains(ctx, u, []store.NewChain{{Chain: store.Chain{Group: "g", Name: name, Queue: "q", App: "a", NSteps: 3,
			WUTmpl: "t", ResTmpl: "t", Params: params, Layout: "{}"}}}); err != nil {
			t.Fatal(err)
		}
	}
	chain("plain", "{}")
	if p := problems(Doctor(ctx, root)); strings.Contains(p, named) {
		t.Fatalf("no assigned chain, yet:\n%s", p)
	}
	chain("assigned", `{"TargetUser":1}`)
	db.Close()
	cfgPath := filepath.Join(proj, "config.xml")
	cfg, _ := os.ReadFile(cfgPath)
	p := problems(Doctor(ctx, root))
	if !strings.Contains(p, "1 running chain was submitted as assigned work (-assign_user_all; e.g. g/assigned of alice)") ||
		!strings.Contains(p, "add <enable_assignment>1</enable_assignment> to <config> in "+cfgPath) {
		t.Fatalf("doctor did not name <enable_assignment>:\n%s", p)
	}
	for v, off := range map[string]bool{"true": true, "0": true, "1": false, "": false} {
		elem := "<enable_assignment>" + v + "</enable_assignment>"
		if v == "" {
			elem = "<enable_assignment/>"
		}
		write(t, cfgPath, strings.Replace(string(cfg), "<config>", "<config>"+elem, 1), 0o644)
		f := Doctor(ctx, root)
		if got := strings.Contains(problems(f), named); got != off {
			t.Errorf("%s: a problem %v, want %v:\n%s", elem, got, off, problems(f))
		}
		if !off && !strings.Contains(oks(f), "1 running chain of assigned work, and config.xml has <enable_assignment>") {
			t.Errorf("%s: not said to be fine", elem)
		}
	}
}

func oks(f Findings) string {
	var s []string
	for _, x := range f {
		if x.Severity == OK {
			s = append(s, x.Msg)
		}
	}
	return strings.Join(s, "\n")
}
