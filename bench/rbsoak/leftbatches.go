package main

import (
	"context"
	"fmt"

	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/words"
)

// batchNames names the batches st holds, user/name with their group and
// number of jobs: a batch left after every purge is one never retired,
// and its name says which actor made it (gahpNNN: the GAHP's), where a
// row count alone left the 1,000,000-work-unit run's 4 batches to be
// traced in its journal.
func batchNames(ctx context.Context, st *store.DB) ([]string, error) {
	users, err := st.Users(ctx)
	if err != nil {
		return nil, fmt.Errorf("listing the users: %w", err)
	}
	var out []string
	for _, u := range users {
		bs, err := st.Batches(ctx, u.ID)
		if err != nil {
			return nil, fmt.Errorf("listing the batches of %s: %w", u.Name, err)
		}
		for _, b := range bs {
			jobs, err := st.BatchJobs(ctx, b, 0)
			if err != nil {
				return nil, fmt.Errorf("listing the jobs of batch %s of %s: %w", b.Name, u.Name, err)
			}
			out = append(out, fmt.Sprintf("%s/%s (group %s, %s)", u.Name, b.Name, b.Group, words.Count(len(jobs), "job", "jobs")))
		}
	}
	return out, nil
}
