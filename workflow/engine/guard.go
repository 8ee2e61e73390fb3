package engine

import (
	"context"
	"os"
	"path/filepath"
	"sort"

	"github.com/rboinc/rboinc/workflow/pool"
	"github.com/rboinc/rboinc/workflow/store"
	"github.com/rboinc/rboinc/workflow/templates"
	"github.com/rboinc/rboinc/workflow/wire"
)

// checkQuota refuses a submission that would take the user past a limit,
// before anything of it is written. The pooled-bytes figure counts each
// distinct content once per user, whoever else shares it: what a user's
// chains keep alive on the server. Concurrent submissions may pass the
// bytes limit together; the chain count is enforced atomically at insert.
func (e *Engine) checkQuota(ctx context.Context, u store.User, req wire.SubmitRequest) error {
	l := e.Cfg.Limits
	if l.MaxRunningChains == 0 && l.MaxPoolBytes == 0 {
		return nil
	}
	use, err := e.DB.UsageOf(ctx, u.ID)
	if err != nil {
		return err
	}
	if l.MaxRunningChains > 0 && use.RunningChains+len(req.Chains) > l.MaxRunningChains {
		return errf(KindQuota, "you have %d chain(s) in progress and this submission adds %d; the limit is %d: wait for chains to finish, or stop some", use.RunningChains, len(req.Chains), l.MaxRunningChains)
	}
	if l.MaxPoolBytes == 0 {
		return nil
	}
	declared := map[string]int64{}
	for _, c := range req.Chains {
		for _, f := range c.Files {
			if pool.ValidMD5(f.MD5) {
				declared[f.MD5] = max(f.Size, 0)
			}
		}
	}
	sums := make([]string, 0, len(declared))
	for m := range declared {
		sums = append(sums, m)
	}
	sort.Strings(sums)
	ref, err := e.DB.Referenced(ctx, u.ID, sums)
	if err != nil {
		return err
	}
	var fresh []string
	for _, m := range sums {
		if !ref[m] {
			fresh = append(fresh, m)
		}
	}
	sizes, err := e.DB.PoolSizes(ctx, fresh)
	if err != nil {
		return err
	}
	dir := ""
	if validUploadID(req.Upload) {
		dir = filepath.Join(e.davDir(u.Name), req.Upload)
	}
	var add int64
	for _, m := range fresh {
		sz, ok := sizes[m]
		if !ok && dir != "" {
			// The uploaded file's real size: the announced one may lie.
			if fi, err := os.Lstat(filepath.Join(dir, m)); err == nil && fi.Mode().IsRegular() {
				sz, ok = fi.Size(), true
			}
		}
		if !ok {
			sz = declared[m]
		}
		add += sz
	}
	if use.PoolBytes+add > l.MaxPoolBytes {
		return errf(KindQuota, "your chains refer to %d bytes of input on the server and this submission adds %d; the limit is %d bytes: purge groups you have retrieved to free space", use.PoolBytes, add, l.MaxPoolBytes)
	}
	return nil
}

// checkPolicy refuses submission options beyond the server's policy.
func (e *Engine) checkPolicy(o wire.Options, prio int) error {
	l := e.Cfg.Limits
	if l.MaxPriority > 0 && prio > l.MaxPriority {
		return errf(KindQuota, "priority %d is above this server's limit of %d", prio, l.MaxPriority)
	}
	if l.MaxTargetNResults > 0 && o.TargetNResults > l.MaxTargetNResults {
		return errf(KindQuota, "target_nresults %d is above this server's limit of %d", o.TargetNResults, l.MaxTargetNResults)
	}
	return nil
}

// realDir refuses a directory that is not a plain directory (a symbolic
// link placed in the scratch area could make a submission read, and move
// into the pool, files from anywhere).
func realDir(path, what string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return errf(KindNotFound, "%s does not exist", what)
	}
	if !fi.IsDir() {
		return errf(KindBadRequest, "%s is not a plain directory (a symbolic link or a file): refused", what)
	}
	return nil
}

// checkParams refuses unknown parameters and missing mandatory ones before
// anything of the submission is taken into the pool.
func checkParams(q *templates.Queue, req wire.SubmitRequest) error {
	known := map[string]bool{}
	for _, in := range q.Parameters() {
		known[in.Parameter] = true
	}
	for _, c := range req.Chains {
		for name := range c.Files {
			if !known[name] {
				return errf(KindBadRequest, "chain %s: queue %s has no parameter -%s", c.Name, q.Name, name)
			}
		}
		for _, in := range q.Inputs {
			if _, given := c.Files[in.Parameter]; !given && !in.Constant && !in.Immutable && !in.Optional {
				return errf(KindBadRequest, "chain %s: missing mandatory parameter -%s (%s)", c.Name, in.Parameter, in.Description)
			}
		}
	}
	return nil
}
