package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/rboinc/rboinc/internal/mariadbtest"
	"github.com/rboinc/rboinc/internal/store"
)

// TestMeasureWebhookThroughput measures the deliveries a second to one
// webhook target of all events whose receiver answers at once, while other
// writes go on (events of another user, 50 a second), with the processor
// time a delivery costs (this process: notifier, receiver and, on SQLite,
// the database; plus mariadbd's) and the write transactions it takes. A
// measurement, not a test: it runs only with RBOINC_MEASURE_NOTIFY=N (the
// events queued), e.g.
//
//	RBOINC_MEASURE_NOTIFY=3000 go test ./internal/engine -run TestMeasureWebhookThroughput -v
func TestMeasureWebhookThroughput(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("RBOINC_MEASURE_NOTIFY"))
	if n <= 0 {
		t.Skip("a measurement: set RBOINC_MEASURE_NOTIFY to the number of events")
	}
	var got atomic.Int64
	f := newFixture(t)
	allowLoopback(f.e)
	serveWebhook(t, f.e, f.u.ID, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got.Add(1) }))
	bob, err := f.e.State().AddUser(f.ctx, "bob", "hash-bob")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		addEvent(t, f.e, f.u.ID, store.EvStepDone, "g", fmt.Sprint("c", i))
	}
	// Other writes: another user's events, 50 a second.
	ctx, stop := context.WithCancel(f.ctx)
	defer stop()
	go func() {
		for i := 0; ctx.Err() == nil; i++ {
			f.e.State().SQL().ExecContext(ctx, `INSERT INTO events(time, user_id, type, grp, name, step, reason) VALUES (?,?,?,?,?,?,'')`,
				time.Now().Unix(), bob, store.EvStepDone, "g", fmt.Sprint("b", i), 0)
			time.Sleep(20 * time.Millisecond)
		}
	}()
	dbCPU := func() time.Duration { return 0 }
	if os.Getenv("RBOINC_TEST_STATE_DB") == "mariadb" {
		pidFile := filepath.Join(mariadbtest.Shared(t).Dir, "mysqld.pid")
		dbCPU = func() time.Duration {
			b, _ := os.ReadFile(pidFile)
			st, err := os.ReadFile("/proc/" + strings.TrimSpace(string(b)) + "/stat")
			if err != nil {
				t.Fatal(err)
			}
			s := string(st)
			fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
			u, _ := strconv.ParseInt(fields[11], 10, 64)
			k, _ := strconv.ParseInt(fields[12], 10, 64)
			return time.Duration(u+k) * 10 * time.Millisecond // USER_HZ 100
		}
	}
	selfCPU := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	c0, d0, tx0, start := selfCPU(), dbCPU(), f.e.State().Commits(), time.Now()
	done := make(chan struct{})
	go func() { f.e.RunNotifier(ctx, 50*time.Millisecond); close(done) }()
	for end := time.Now().Add(10 * time.Minute); got.Load() < int64(n) && time.Now().Before(end); {
		time.Sleep(2 * time.Millisecond)
	}
	if got.Load() < int64(n) {
		t.Fatalf("%d of %d delivered", got.Load(), n)
	}
	wall, c1, d1, tx1 := time.Since(start), selfCPU(), dbCPU(), f.e.State().Commits()
	stop()
	<-done
	k := float64(got.Load())
	t.Logf("MEASURE engine=%s deliveries=%d wall=%.2fs rate=%.1f/s cpu_self=%.3fms/delivery cpu_db=%.3fms/delivery commits=%.3f/delivery (the notifier's)",
		map[bool]string{true: "mariadb", false: "sqlite"}[os.Getenv("RBOINC_TEST_STATE_DB") == "mariadb"], got.Load(), wall.Seconds(), k/wall.Seconds(),
		float64((c1-c0).Microseconds())/1000/k, float64((d1-d0).Microseconds())/1000/k, float64(tx1-tx0)/k)
}
