package engine

import (
	"context"
	"fmt"
)

// legacyLinksClaimed tells which of these contents have a jf_<md5> link
// of rboinc's (made for work units created before rboinc had a namespace
// of its own) that BOINC's own job-file staging uses too: job_file.php
// takes a file it finds in download/ under the name it gives that content
// as its own, records it in its job_file table, and its batches' work
// units then read it. Collection leaves such a link to BOINC's job-file
// deleter. When BOINC's database cannot tell, every such link is kept
// (a file left costs disk; one removed fails BOINC's work units).
func (e *Engine) legacyLinksClaimed(ctx context.Context, sums []string) map[string]bool {
	var names []string
	bySum := map[string]string{}
	for _, sum := range sums {
		if name, ok := e.Pool.LegacyLink(e.Proj, sum); ok {
			names = append(names, name)
			bySum[sum] = name
		}
	}
	if len(names) == 0 {
		return nil
	}
	claimed := map[string]bool{}
	bdb, err := e.boincDB(ctx)
	var jobFiles map[string]bool
	if err == nil {
		jobFiles, err = bdb.JobFiles(ctx, names)
	}
	if err != nil {
		e.warnLegacyKept(fmt.Errorf("BOINC's database cannot say whether its job-file staging uses them: %w", err), len(names))
		for sum := range bySum {
			claimed[sum] = true
		}
		return claimed
	}
	e.warnLegacyKept(nil, 0)
	for sum, name := range bySum {
		if jobFiles[name] {
			claimed[sum] = true
		}
	}
	return claimed
}

// warnLegacyKept logs why collection keeps rboinc's jf_ links, each new
// reason once (nil: BOINC's database answers again).
func (e *Engine) warnLegacyKept(err error, n int) {
	e.bdbMu.Lock()
	defer e.bdbMu.Unlock()
	if err == nil {
		e.legacyWarned = ""
		return
	}
	if msg := err.Error(); msg != e.legacyWarned {
		e.legacyWarned = msg
		e.Log.Warn("collection keeps rboinc's jf_ download links no work unit of rboinc's needs any more", "links", n, "err", err)
	}
}
