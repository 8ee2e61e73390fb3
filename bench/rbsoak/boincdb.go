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
	// The chains the driver made and those the server lists (a chain it
	// made of a submission the driver thinks failed is among them).
	seen := map[string]bool{}
	var names []string
	for _, c := range g.chains {
		if !seen[c.name] {
			seen[c.name] = true
			names = append(names, c.name)
		}
	}
	for n := range st {
		if !seen[n] {
			seen[n] = true
			names = append(names, n)
		}
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
			pats := wuPrefixes(g.user.name, g.name, names)
			for len(pats) > 0 {
				part := pats[:min(len(pats), 200)]
				pats = pats[len(part):]
				if err := func() error {
					rows, err := db.QueryContext(ctx, `SELECT name, error_mask, canonical_resultid FROM workunit WHERE `+
						strings.TrimSuffix(strings.Repeat("name LIKE ? ESCAPE '!' OR ", len(part)), " OR "), part...)
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
				}(); err != nil {
					return err
				}
			}
			return nil
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

// wuPrefixes are LIKE patterns of the work units of the named chains of a
// user's group (NAME-USER_GROUP-STEP-NSTEPS-RNDnnnn): each a prefix, read
// through BOINC's index on workunit.name. A pattern with a leading % read
// the whole table, every group checked: seconds each at 150,000 work
// units, the driver's own load on the run it measures. '!' escapes
// (a backslash is no escape in SQLite, and one to escape in MariaDB).
func wuPrefixes(user, group string, chains []string) []any {
	esc := strings.NewReplacer("!", "!!", "%", "!%", "_", "!_")
	out := make([]any, 0, len(chains))
	for _, c := range chains {
		out = append(out, esc.Replace(c+"-"+strings.ToUpper(user)+"_"+group+"-")+"%")
	}
	return out
}
