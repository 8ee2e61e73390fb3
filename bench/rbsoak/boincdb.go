package main

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/boincdb"
	"github.com/rboinc/rboinc/workflow/wire"
)

// openBoinc opens BOINC's database as the project's daemons find it.
func (s *soak) openBoinc(ctx context.Context) (*boincdb.DB, error) {
	p, err := boinc.LoadProject(filepath.Join(s.root, "boinc"))
	if err != nil {
		return nil, err
	}
	t, err := boincdb.ForProject(p, true)
	if err != nil {
		return nil, err
	}
	return boincdb.Open(ctx, t)
}

// checkWorkUnits checks the group's work units in BOINC: no step has two
// live work units (a duplicate creation), and every step of a done chain
// has exactly one that BOINC finished.
func (s *soak) checkWorkUnits(ctx context.Context, g *group, st map[string]wire.ChainStatus) {
	id := g.user.name + "/" + g.name
	type key struct {
		chain string
		step  int
	}
	live := map[key]int{}
	finished := map[key]int{}
	var lastErr error
	for attempt := 0; attempt < 60; attempt++ {
		if attempt > 0 {
			time.Sleep(time.Second) // MariaDB may be down for a fault
		}
		clear(live)
		clear(finished)
		lastErr = func() error {
			s.dbMu.RLock()
			defer s.dbMu.RUnlock()
			db, err := s.openBoinc(ctx)
			if err != nil {
				return err
			}
			defer db.Close()
			pat := "%-" + strings.ToUpper(g.user.name) + "_" + g.name + "-%"
			rows, err := db.QueryContext(ctx, `SELECT name, error_mask, canonical_resultid FROM workunit WHERE name LIKE ?`, pat)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
				var name string
				var mask, canonical int64
				if err := rows.Scan(&name, &mask, &canonical); err != nil {
					return err
				}
				k := key{chainOf(name), stepOf(name)}
				if mask == 0 {
					live[k]++
					if canonical > 0 {
						finished[k]++
					}
				}
			}
			return rows.Err()
		}()
		if lastErr == nil || ctx.Err() != nil {
			break
		}
	}
	if lastErr != nil && ctx.Err() != nil {
		return // the run's bound came first: reported as such, not as a database out of reach
	}
	if lastErr != nil {
		s.problem("%s: reading BOINC's work units: %v", id, lastErr)
		return
	}
	for k, n := range live {
		if n > 1 {
			s.problem("%s/%s step %d: %d work units in BOINC, want one", id, k.chain, k.step, n)
		}
	}
	for _, c := range g.chains {
		cs := st[c.name]
		if cs.State != "done" {
			continue
		}
		for step := 0; step < cs.StepsDone; step++ {
			if n := finished[key{c.name, step}]; n != 1 {
				s.problem("%s/%s step %d: %d finished work units in BOINC, want 1", id, c.name, step, n)
			}
		}
	}
}

// countWorkUnits counts the work units made and those BOINC finished
// (canonical result) over the whole run: BOINC keeps their rows after the
// purges. Also after an interrupt (the run's context ended): the count
// says what was done until then; one that fails says so, never 0.
func (s *soak) countWorkUnits() (done, all int64, err error) {
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), time.Minute)
	defer cancel()
	db, err := s.openBoinc(ctx)
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	err = db.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(CASE WHEN canonical_resultid > 0 THEN 1 ELSE 0 END), 0) FROM workunit`).Scan(&all, &done)
	return done, all, err
}
