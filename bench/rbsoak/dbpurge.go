package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rboinc/rboinc/internal/standin"
)

// dbPurged adds up the stand-in's db_purge passes at the end of the run.
type dbPurged struct {
	workunits, results int
	files              []string
}

// purgePass is the work units a pass of db_purge takes (its --max): a
// pass takes well under its minute, also at a long run's million.
const purgePass = 20000

// dbPurge runs passes of the stand-in's db_purge (BOINC's, see
// internal/standin/dbpurge.go) on BOINC's database until one leaves
// nothing to purge. Each pass is bounded by --max and a minute: one
// bounded by the minute alone stopped mid-way at a million work units
// (the one it was purging then archived again by the next pass).
func (s *soak) dbPurge(total *dbPurged) error {
	s.dbMu.RLock()
	defer s.dbMu.RUnlock()
	for {
		ctx, cancel := context.WithTimeout(s.ctx, time.Minute)
		got, err := standin.PurgeDB(ctx, filepath.Join(s.root, "boinc"), standin.PurgeOptions{Max: purgePass})
		cancel()
		total.workunits += got.Workunits
		total.results += got.Results
		total.files = append(total.files, got.Files...)
		if err != nil || got.Workunits < purgePass {
			return err
		}
	}
}

// checkArchives checks db_purge's archives against the run: every work
// unit made is archived, each once.
func (s *soak) checkArchives(p dbPurged) {
	seen := map[string]int{}
	var bytes int64
	for _, f := range p.files {
		if fi, err := os.Stat(f); err == nil {
			bytes += fi.Size()
		}
		if !strings.Contains(filepath.Base(f), "wu_index_") {
			continue
		}
		fh, err := os.Open(f)
		if err != nil {
			s.problem("reading db_purge's index %s: %v", f, err)
			continue
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			if fs := strings.Fields(sc.Text()); len(fs) == 3 {
				seen[fs[2]]++
			}
		}
		fh.Close()
	}
	var twice []string
	for name, n := range seen {
		if n > 1 {
			twice = append(twice, fmt.Sprintf("%s (%d times)", name, n))
		}
	}
	fmt.Printf("db_purge: %d work units and %d results archived and deleted (%d archive files, %d bytes, kept as a project keeps them)\n",
		p.workunits, p.results, len(p.files), bytes)
	if len(twice) > 0 {
		s.problem("db_purge archived %d work units more than once, e.g. %s", len(twice), strings.Join(twice[:min(5, len(twice))], ", "))
	}
	if int64(len(seen)) != s.wuAll {
		s.problem("db_purge archived %d work units, the run made %d", len(seen), s.wuAll)
	}
}
