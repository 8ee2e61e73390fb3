package standin

import (
	"context"
	"log/slog"
	"testing"

	"github.com/rboinc/rboinc/internal/boincdb"
)

// newSim is the stand-in's daemons without their loop, for tests that run
// one pass at a time.
func (tp *testProject) newSim() *sim {
	db := tp.db()
	return &sim{dir: tp.dir, db: db, log: slog.New(slog.NewTextHandler(tlog{tp.t}, nil)), parallel: 1,
		wake: make(chan struct{}, 1), slotFree: make(chan struct{}, 1), assimBusy: map[string]bool{}, reported: map[string]string{}}
}

// TestLiveControl: cancel, priority and an extra replica, made in BOINC's
// database as BOINC's tools make them, are carried out by the stand-in's
// transitioner and feeder as BOINC's.
func TestLiveControl(t *testing.T) {
	// Waits mostly on its processes (create_work, the hook): beside the
	// others that do.
	t.Parallel()
	tp := setupCompute(t)
	ctx := context.Background()
	for _, wu := range []string{"c1", "p1", "r1", "q1"} {
		tp.stage(wu+".coor", wu+"\n")
		tp.stage(wu+".psf", "topology\n")
		if _, errs, code := tp.createWork("", "", "--appname", "rbtest", "--wu_name", wu, wu+".coor", wu+".psf"); code != 0 {
			t.Fatalf("%s: %s", wu, errs)
		}
	}
	s := tp.newSim()
	if err := s.transitionDue(ctx, tp.p); err != nil {
		t.Fatal(err)
	}
	db := tp.db()
	ids, err := db.WUIDs(ctx, []string{"c1", "p1", "r1", "q1", "nope"})
	if err != nil || len(ids) != 4 {
		t.Fatalf("WUIDs = %v, %v", ids, err)
	}
	if n, err := db.Cancel(ctx, []int64{ids["c1"]}); err != nil || n != 1 {
		t.Fatalf("Cancel = %d, %v", n, err)
	}
	if n, err := db.SetPriority(ctx, []int64{ids["p1"]}, 7); err != nil || n != 1 {
		t.Fatalf("SetPriority = %d, %v", n, err)
	}
	if ok, err := db.AddReplica(ctx, ids["r1"]); err != nil || !ok {
		t.Fatalf("AddReplica = %v, %v", ok, err)
	}
	if err := s.transitionDue(ctx, tp.p); err != nil {
		t.Fatal(err)
	}
	if n := tp.count(`SELECT count(*) FROM workunit WHERE name = 'c1' AND error_mask = ? AND assimilate_state = ?`, boincdb.ErrCancelled, assimReady); n != 1 {
		t.Error("the cancelled work unit is not ready for assimilation with error mask 16")
	}
	if n := tp.count(`SELECT count(*) FROM result r JOIN workunit w ON w.id = r.workunitid WHERE w.name = 'c1' AND r.server_state = ? AND r.outcome = ?`,
		serverOver, outcomeDidntNeed); n != 1 {
		t.Error("the cancelled work unit's unsent result is not over (didn't need)")
	}
	if n := tp.count(`SELECT count(*) FROM result r JOIN workunit w ON w.id = r.workunitid WHERE w.name = 'r1' AND r.server_state = ?`, serverUnsent); n != 2 {
		t.Errorf("the work unit with an extra replica has %d unsent results, want 2", n)
	}
	// The feeder sends the raised priority first.
	if sent, err := s.claim(ctx, 1); err != nil || len(sent) != 1 || sent[0].wuName != "p1" {
		t.Errorf("first result sent: %+v %v, want p1's", sent, err)
	}
	// Decided work units take no more control.
	if n, err := db.Cancel(ctx, []int64{ids["c1"]}); err != nil || n != 0 {
		t.Errorf("cancelling a cancelled work unit again: %d, %v", n, err)
	}
	if ok, err := db.AddReplica(ctx, ids["c1"]); err != nil || ok {
		t.Errorf("a replica of a cancelled work unit: %v, %v", ok, err)
	}
}
