package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/rboinc/rboinc/internal/engine"
)

// leftovers is an inventory of what rboinc keeps: files under the server
// root and rows of the state's and BOINC's tables.
type leftovers struct {
	files   map[string]int64 // path under the root → size
	rows    map[string]int64 // table → rows
	batches []string         // the batches on the server (batchNames)
}

// stateTables are rboinc's state tables (internal/store).
var stateTables = []string{"users", "chains", "chain_inputs", "steps", "step_inputs", "results", "pool", "uploads", "step_attempts", "events", "schema_history",
	"notify_targets", "notify_outbox", "notify_cursor", "batches", "batch_jobs", "latency", "pool_owners", "notify_emails", "notify_email_codes", "long_polls", "counters", "retired_batches", "retired_jobs"}

// retained are the tables whose rows outlive a purge by design, and
// why (docs/admin.md, docs/operations.md).
var retained = map[string]string{
	"users":           "accounts",
	"chains":          "purged chains, state purged (their tags keep work-unit names unique; rboinc_chains{state=\"purged\"})",
	"notify_targets":  "the users' webhooks",
	"schema_history":  "migrations",
	"counters":        "the metrics' counters",
	"latency":         "the metrics' latency histograms",
	"events":          "the events feed, kept event_retention days (default 7)",
	"notify_cursor":   "the notifier's position",
	"retired_batches": "the names of retired batches, kept 30 days: a retirement sent again is answered as done",
	"retired_jobs":    "the job names of retired batches, kept 30 days: an abort of one is answered as done",
}

// notRboinc tells the files under the root that are no leftovers: logs,
// the databases, locks and pid files, and the stand-in's fixed layout.
func notRboinc(rel string) bool {
	base := filepath.Base(rel)
	switch {
	case strings.HasSuffix(base, ".log"), strings.HasSuffix(base, ".lock"), strings.HasSuffix(base, ".pid"),
		strings.HasPrefix(base, "state.db"), strings.HasPrefix(base, "standin.db"):
		return true
	case rel == "spool/.last-call":
		return true // the hook path's one marker: its modification time is when the last hook call returned
	case strings.HasPrefix(rel, "boinc/templates/rboinc/"):
		return true // create_work's copies of the queue's templates, one pair per template
	case strings.Contains(rel, "/log_"), strings.HasPrefix(rel, "boinc/log_"), strings.HasPrefix(rel, "boinc/pid_"):
		return true
	}
	return false
}

func (s *soak) leftovers() (leftovers, error) {
	l := leftovers{files: map[string]int64{}, rows: map[string]int64{}}
	// Host B's root too (its spool; its links to the shared directories
	// are not followed, and are in the baseline).
	roots := []string{s.root}
	if s.hostB != nil {
		roots = append(roots, s.hostB.root)
	}
	for _, root := range roots {
		if err := walkLeftovers(l, s.root, root); err != nil {
			return l, err
		}
	}
	ctx, cancel := context.WithTimeout(s.ctx, time.Minute)
	defer cancel()
	st, err := engine.OpenCurrentState(ctx, s.root)
	if err != nil {
		return l, err
	}
	defer st.Close()
	counts, err := st.RowCounts(ctx)
	if err != nil {
		return l, err
	}
	for _, t := range stateTables {
		n, ok := counts[t]
		if !ok {
			return l, fmt.Errorf("the state has no table %s (renamed?)", t)
		}
		l.rows[t] = n
	}
	if l.batches, err = batchNames(ctx, st); err != nil {
		return l, err
	}
	bdb, err := s.openBoinc(ctx)
	if err != nil {
		return l, err
	}
	defer bdb.Close()
	for _, t := range []string{"workunit", "result"} {
		var n int64
		if err := bdb.QueryRowContext(ctx, "SELECT count(*) FROM "+t).Scan(&n); err != nil {
			return l, fmt.Errorf("counting BOINC's %s: %w", t, err)
		}
		l.rows["boinc."+t] = n
	}
	return l, nil
}

// checkLeftovers waits (up to two minutes, while the pool collection and
// BOINC's file deleter catch up) until nothing of rboinc's is left but
// what a documented retention keeps, then fails on the rest.
func (s *soak) checkLeftovers() {
	// Pool contents are kept an hour after their last use (docs/admin.md);
	// the end check collects them at once, as `gc --grace 0s`.
	if out, err := exec.CommandContext(s.ctx, filepath.Join(s.o.bin, "rboinc-server"), "gc", "--root", s.root, "--grace", "0s").CombinedOutput(); err != nil {
		s.problem("rboinc-server gc: %v: %s", err, out)
	}
	var now leftovers
	var newFiles, davKept []string
	var bytes int64
	var archived dbPurged
	deadline := time.Now().Add(2 * time.Minute)
	for {
		// BOINC's db_purge, as a project runs it, archives and deletes
		// the work units whose files are deleted, and their results.
		if err := s.dbPurge(&archived); err != nil {
			s.problem("db_purge: %v", err)
		}
		var err error
		if now, err = s.leftovers(); err != nil {
			s.problem("taking the inventory after the purges: %v", err)
			return
		}
		newFiles, bytes, davKept = newFiles[:0], 0, davKept[:0]
		for p, size := range now.files {
			if strings.HasPrefix(p, "boinc/archives/") {
				continue // db_purge's archives: the project's to keep (reported below)
			}
			if strings.HasPrefix(p, "dav/") && now.rows["uploads"]-s.baseline.rows["uploads"] > 0 {
				// The partial files of those open collections (below).
				davKept = append(davKept, p)
				continue
			}
			if _, ok := s.baseline.files[p]; !ok {
				newFiles = append(newFiles, p)
				bytes += size
			}
		}
		// The steps of purged chains go at a collection once BOINC
		// returned their work units (docs/operations.md, What a purge
		// leaves): collected again while some remain.
		stepsLeft := now.rows["steps"]-s.baseline.rows["steps"] > 0 || now.rows["step_attempts"]-s.baseline.rows["step_attempts"] > 0
		// The last purges' events are on their way to the webhook.
		outboxLeft := now.rows["notify_outbox"]-s.baseline.rows["notify_outbox"] > 0
		// Work units whose files the file deleter has not reached yet.
		boincLeft := now.rows["boinc.workunit"]-s.baseline.rows["boinc.workunit"] > 0
		if len(newFiles) == 0 && !stepsLeft && !outboxLeft && !boincLeft || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Second)
		// Again while anything is left: a pass that forgot the last steps
		// of purged chains ran its pool collection before, while those
		// steps still held their inputs.
		if stepsLeft || len(newFiles) > 0 {
			if out, err := exec.CommandContext(s.ctx, filepath.Join(s.o.bin, "rboinc-server"), "gc", "--root", s.root, "--grace", "0s").CombinedOutput(); err != nil {
				s.problem("rboinc-server gc: %v: %s", err, out)
			}
		}
	}
	sort.Strings(newFiles)
	s.checkArchives(archived)
	if len(davKept) > 0 {
		fmt.Printf("kept with the open upload collections of killed clients (a day): %d files in dav/\n", len(davKept))
	}
	s.leftBytes = bytes
	fmt.Printf("left behind after purging everything: %d files, %d bytes\n", len(newFiles), bytes)
	if len(newFiles) > 0 {
		byDir := map[string]int{}
		for _, p := range newFiles {
			d := p
			if i := strings.IndexByte(p, '/'); i > 0 {
				d = p[:i]
				if j := strings.IndexByte(p[i+1:], '/'); j > 0 && d == "boinc" {
					d = p[:i+1+j]
				}
			}
			byDir[d]++
		}
		s.problem("%d files (%d bytes) left under the server root after purging everything: %v; e.g. %s", len(newFiles), bytes, byDir, strings.Join(newFiles[:min(8, len(newFiles))], ", "))
	}
	var tables []string
	for t := range now.rows {
		tables = append(tables, t)
	}
	sort.Strings(tables)
	for _, t := range tables {
		d := now.rows[t] - s.baseline.rows[t]
		if d == 0 {
			continue
		}
		if t == "uploads" {
			// A client killed in the middle of an upload leaves its
			// collection open; it is removed after a day untouched
			// (docs/security.md, max_open_uploads).
			s.mu.Lock()
			kills := int64(s.faults["client"])
			s.mu.Unlock()
			if d <= kills {
				fmt.Printf("  uploads: %+d rows (kept: collections of %d killed clients, removed after a day untouched)\n", d, kills)
				continue
			}
		}
		if t == "long_polls" {
			// A server killed during a long poll of the events feed
			// (the master's) cannot delete its slot's row; the row
			// expires with the poll (a minute) and goes at that
			// user's next long poll (store/longpolls.go).
			s.mu.Lock()
			kills := int64(s.faults["server"])
			s.mu.Unlock()
			if d <= kills {
				fmt.Printf("  long_polls: %+d rows (kept: slots of polls cut by %d server kills, expired and deleted at the user's next long poll)\n", d, kills)
				continue
			}
		}
		if why, ok := retained[t]; ok {
			fmt.Printf("  %s: %+d rows (kept: %s)\n", t, d, why)
			continue
		}
		if t == "batches" && len(now.batches) > 0 {
			s.problem("table batches holds %d rows more than before the first submission: never retired: %s", d, strings.Join(now.batches[:min(8, len(now.batches))], ", "))
			continue
		}
		s.problem("table %s holds %d rows more than before the first submission", t, d)
	}
}

// walkLeftovers adds the files under root to l, named relative to base
// (the first host's root).
func walkLeftovers(l leftovers, base, root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil // removed while walking
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(base, p)
		if notRboinc(rel) {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			l.files[rel] = fi.Size()
		}
		return nil
	})
}
