package engine

import (
	"context"
	"os"
	"path/filepath"
	"sort"

	"github.com/rboinc/rboinc/internal/pool"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/templates"
	"github.com/rboinc/rboinc/internal/words"
	"github.com/rboinc/rboinc/workflow/wire"
)

// checkQuota refuses a submission that would take the user past a limit,
// before anything of it is written. The pooled-bytes figure counts each
// distinct content once per user, whoever else shares it: what a user's
// chains keep alive on the server. This is the early answer that spares a
// doomed submission its work; both limits are enforced again, atomically,
// in the transaction that records the chains (store.Quota).
//
// Cheap upper bounds come first (the user's chains in any state, the whole
// pool, every content of the request counted as new): far from the limits
// they settle it at a cost that does not grow with what the user holds.
// Only when they do not are the exact figures measured.
func (e *Engine) checkQuota(ctx context.Context, u store.User, req wire.SubmitRequest) error {
	l := e.Cfg.Limits
	if l.MaxRunningChains == 0 && l.MaxPoolBytes == 0 {
		return nil
	}
	bound, err := e.db.BoundsOf(ctx, u.ID)
	if err != nil {
		return err
	}
	var sums []string
	var sizeOf func(string) int64
	if l.MaxPoolBytes > 0 {
		if sums, sizeOf, err = e.requestSizes(ctx, u, req); err != nil {
			return err
		}
	}
	var all int64
	for _, m := range sums {
		all += sizeOf(m)
	}
	chainsOK := l.MaxRunningChains == 0 || bound.Chains+len(req.Chains) <= l.MaxRunningChains
	bytesOK := l.MaxPoolBytes == 0 || bound.PoolBytes+all <= l.MaxPoolBytes
	if chainsOK && bytesOK {
		return nil
	}
	use, err := e.db.UsageOf(ctx, u.ID)
	if err != nil {
		return err
	}
	if l.MaxRunningChains > 0 && use.RunningChains+len(req.Chains) > l.MaxRunningChains {
		return errf(KindQuota, "you have %s in progress and this submission adds %d; the limit is %d: wait for chains to finish, or stop some", words.Count(use.RunningChains, "chain", "chains"), len(req.Chains), l.MaxRunningChains)
	}
	if l.MaxPoolBytes == 0 {
		return nil
	}
	ref, err := e.db.Referenced(ctx, u.ID, sums)
	if err != nil {
		return err
	}
	var add int64
	for _, m := range sums {
		if !ref[m] {
			add += sizeOf(m)
		}
	}
	if use.PoolBytes+add > l.MaxPoolBytes {
		return errf(KindQuota, "your chains refer to %d bytes of input on the server and this submission adds %d; the limit is %d bytes: purge groups you have retrieved to free space", use.PoolBytes, add, l.MaxPoolBytes)
	}
	return nil
}

// requestSizes lists the distinct contents of a request (sorted) and gives
// the size each one counts for: the pooled size of a content the user owns
// (store.PoolOwned), else the real size of the uploaded file (the announced
// one may lie), else the announced one (exact for inline contents, which
// must match it).
func (e *Engine) requestSizes(ctx context.Context, u store.User, req wire.SubmitRequest) ([]string, func(string) int64, error) {
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
	sizes, err := e.db.PoolSizes(ctx, sums)
	if err != nil {
		return nil, nil, err
	}
	// Another user's content counts as a new one: its size in the pool
	// would tell (in "this submission adds N bytes") that it exists.
	owned, err := e.db.PoolOwned(ctx, u.ID, sums)
	if err != nil {
		return nil, nil, err
	}
	for m := range sizes {
		if !owned[m] {
			delete(sizes, m)
		}
	}
	dir := ""
	if validUploadID(req.Upload) {
		dir = filepath.Join(e.davDir(u.Name), req.Upload)
	}
	for _, m := range sums {
		if _, ok := sizes[m]; ok {
			continue
		}
		sz := declared[m]
		if dir != "" {
			if fi, err := os.Lstat(filepath.Join(dir, m)); err == nil && fi.Mode().IsRegular() {
				sz = fi.Size()
			}
		}
		sizes[m] = sz
	}
	return sums, func(m string) int64 { return sizes[m] }, nil
}

// maxAbsPriority bounds a chain's base priority: BOINC's priority columns
// are 32-bit, and a work unit's priority is the base less its step (up to
// wire.MaxChainSteps) or raised for a late step (latePriorityBoost). A
// value beyond them fails a native multi-row insert in MariaDB's strict
// mode, and with it every other chain's next step in that insert.
const maxAbsPriority = 1 << 30

// checkPolicy refuses submission options beyond the server's policy.
func (e *Engine) checkPolicy(o wire.Options, prio int) error {
	if prio > maxAbsPriority || prio < -maxAbsPriority {
		return errf(KindBadRequest, "priority %d is beyond what BOINC can hold (between %d and %d)", prio, -maxAbsPriority, maxAbsPriority)
	}
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
