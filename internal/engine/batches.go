package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/words"
	"github.com/rboinc/rboinc/workflow/wire"
)

// Batches are named sets of one user's chains, each chain a job with its
// own name, all in one group that is the batch's alone: what HTCondor's
// BOINC GAHP submits, follows, fetches, aborts and retires. A batch whose
// lease has ended is aborted and retired by ExpireLeases.

// MaxBatchName bounds batch and job names.
const MaxBatchName = 255

// checkBatchName accepts printable ASCII (the GAHP protocol carries names
// with their spaces and backslashes escaped).
func checkBatchName(what, s string) error {
	if s == "" || len(s) > MaxBatchName {
		return errf(KindBadRequest, "%s name must have 1 to %d characters", what, MaxBatchName)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] >= 0x7f {
			return errf(KindBadRequest, "%s name %q may hold only printable ASCII characters", what, s)
		}
	}
	return nil
}

// checkArgs refuses what create_work's stdin cannot carry, and XML
// markup: the command line lands unescaped in the work unit's xml_doc
// (create_work and native creation alike), where a <file_info> would
// make BOINC's file deleter remove any file it names ("../" included) and
// an entity would reach the application decoded.
func checkArgs(chain string, args []string) error {
	for _, a := range args {
		if strings.ContainsAny(a, "\"\n\r") {
			return errf(KindBadRequest, "chain %s: argument %q holds a double quote or a line break, which BOINC's create_work cannot pass", chain, a)
		}
		if strings.ContainsFunc(a, func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }) {
			// create_work reads a line as a C string: a NUL ends it there,
			// and the job would lose its inputs; XML has no such characters.
			return errf(KindBadRequest, "chain %s: argument %q holds a control character, which BOINC cannot pass", chain, a)
		}
		if strings.ContainsAny(a, "<>&") {
			return errf(KindBadRequest, "chain %s: argument %q holds XML markup (<, > or &), which BOINC copies unescaped into the work unit's description", chain, a)
		}
	}
	return nil
}

// checkBatch checks the batch part of a submission.
func checkBatch(req wire.SubmitRequest) error {
	if req.Batch == nil {
		return nil
	}
	if err := checkBatchName("batch", req.Batch.Name); err != nil {
		return err
	}
	if req.Batch.Lease < 0 {
		return errf(KindBadRequest, "a lease is a time in seconds since the epoch, not %d", req.Batch.Lease)
	}
	seen := map[string]bool{}
	for _, c := range req.Chains {
		if err := checkBatchName("job", c.Job); err != nil {
			return err
		}
		if seen[c.Job] {
			return errf(KindBadRequest, "job name %s appears twice in batch %s", c.Job, req.Batch.Name)
		}
		seen[c.Job] = true
	}
	return nil
}

// beginBatch records the batch of a submission before its chains. A batch
// of that name recorded by the same request before (one whose answer was
// lost, or whose commit broke with its database) is taken up again
// (again true): its chains are then made or found as a resubmission's.
// Another batch of that name, or one in its group, is refused.
func (e *Engine) beginBatch(ctx context.Context, u store.User, req wire.SubmitRequest, queue string) (b store.Batch, again bool, err error) {
	jobs := batchJobs(req)
	b = store.Batch{UserID: u.ID, Name: req.Batch.Name, Group: req.Group, Queue: queue, Lease: req.Batch.Lease}
	b.ID, err = e.db.CreateBatch(ctx, b, jobs)
	if !errors.Is(err, store.ErrExists) {
		return b, false, err
	}
	if old, same, serr := e.sameBatch(ctx, b, jobs); serr != nil {
		return b, false, serr
	} else if same {
		return old, true, nil
	}
	return b, false, errf(KindNameTaken, "%s", strings.TrimSuffix(err.Error(), ": "+store.ErrExists.Error()))
}

// batchJobs are the jobs of a batch submission.
func batchJobs(req wire.SubmitRequest) []store.BatchJob {
	jobs := make([]store.BatchJob, len(req.Chains))
	for i, c := range req.Chains {
		jobs[i] = store.BatchJob{Name: c.Job, Chain: c.Name}
	}
	return jobs
}

// keepBatch records the batch of a submission whose chains are recorded
// again if a failed duplicate of the submission dropped it meanwhile
// (store.KeepBatch).
func (e *Engine) keepBatch(ctx context.Context, b store.Batch, req wire.SubmitRequest) error {
	kept, err := e.db.KeepBatch(ctx, b, batchJobs(req))
	if err != nil {
		return fmt.Errorf("keeping batch %s: %w", b.Name, err)
	}
	if kept {
		e.Log.Warn("batch dropped by a failed duplicate of its submission recorded again", "batch", b.Name, "group", b.Group)
	}
	return nil
}

// sameBatch finds the user's batch named as b and tells whether it is b
// with exactly jobs: the same group, queue, lease and job names for the
// same chains.
func (e *Engine) sameBatch(ctx context.Context, b store.Batch, jobs []store.BatchJob) (store.Batch, bool, error) {
	old, err := e.db.BatchByName(ctx, b.UserID, b.Name)
	if errors.Is(err, store.ErrNotFound) {
		return old, false, nil // taken is the group or a job name
	}
	if err != nil || old.Group != b.Group || old.Queue != b.Queue || old.Lease != b.Lease {
		return old, false, err
	}
	have, err := e.db.BatchJobs(ctx, old, 0)
	if err != nil || len(have) != len(jobs) {
		return old, false, err
	}
	want := make(map[string]string, len(jobs))
	for _, j := range jobs {
		want[j.Name] = j.Chain
	}
	for _, j := range have {
		if c, ok := want[j.Name]; !ok || c != j.Chain {
			return old, false, nil
		}
	}
	return old, true, nil
}

// jobState is a chain's state as the GAHP reports it.
func jobState(chainState string) string {
	switch chainState {
	case wire.StateDone:
		return wire.JobDone
	case wire.StateFailed, wire.StateAborted, "purged":
		return wire.JobError
	}
	return wire.JobInProgress
}

func serverTime() float64 { return float64(time.Now().UnixNano()) / 1e9 }

func batchOf(b store.Batch) wire.Batch {
	return wire.Batch{Name: b.Name, Group: b.Group, Queue: b.Queue, Created: b.Created, Lease: b.Lease}
}

// Batches lists the user's batches, without their jobs.
func (e *Engine) Batches(ctx context.Context, u store.User) (wire.BatchesResponse, error) {
	r := wire.BatchesResponse{ServerTime: serverTime(), Batches: []wire.Batch{}}
	bs, err := e.q.Batches(ctx, u.ID)
	if err != nil {
		return r, err
	}
	for _, b := range bs {
		r.Batches = append(r.Batches, batchOf(b))
	}
	return r, nil
}

// userBatch finds one of the user's batches by name.
func (e *Engine) userBatch(ctx context.Context, u store.User, name string) (store.Batch, error) {
	if err := checkBatchName("batch", name); err != nil {
		return store.Batch{}, err
	}
	b, err := e.q.BatchByName(ctx, u.ID, name)
	if errors.Is(err, store.ErrNotFound) {
		return b, errf(KindNotFound, "no batch named %s", name)
	}
	return b, err
}

// QueryBatches reports the jobs of the named batches changed at or after
// q.MinModTime, with the server's time to ask from next.
func (e *Engine) QueryBatches(ctx context.Context, u store.User, q wire.BatchQuery) (wire.BatchesResponse, error) {
	e.ExpireLeasesSoon(ctx)
	r := wire.BatchesResponse{ServerTime: serverTime(), Batches: []wire.Batch{}}
	if q.MinModTime < 0 {
		return r, errf(KindBadRequest, "min_mod_time must not be negative")
	}
	// Chains record changes in whole seconds: a change in the second the
	// client last asked is reported again rather than missed.
	since := int64(q.MinModTime)
	for _, name := range q.Names {
		b, err := e.userBatch(ctx, u, name)
		if KindOf(err) == KindNotFound {
			// Retired: BOINC's query shows such a batch, with the jobs
			// its database still has (none once purged, as rboinc's
			// retirement purges them), not "no batch named".
			at, retired, rerr := e.db.BatchRetiredAt(ctx, u.ID, name)
			if rerr != nil {
				return r, rerr
			}
			if retired {
				r.Batches = append(r.Batches, wire.Batch{Name: name, State: wire.BatchRetired, Retired: at})
				continue
			}
		}
		if err != nil {
			return r, err
		}
		jobs, err := e.q.BatchJobs(ctx, b, since)
		if err != nil {
			return r, err
		}
		wb := batchOf(b)
		wb.Jobs = make([]wire.BatchJob, len(jobs))
		for i, j := range jobs {
			wb.Jobs[i] = wire.BatchJob{Name: j.Name, Chain: j.Chain, State: jobState(j.State), ModTime: j.Updated}
		}
		r.Batches = append(r.Batches, wb)
	}
	return r, nil
}

// userJob finds the batch and chain of one of the user's jobs.
func (e *Engine) userJob(ctx context.Context, u store.User, job string) (store.Batch, string, error) {
	if err := checkBatchName("job", job); err != nil {
		return store.Batch{}, "", err
	}
	b, chain, err := e.q.JobBatch(ctx, u.ID, job)
	if errors.Is(err, store.ErrNotFound) {
		return b, "", errf(KindNotFound, "no job named %s", job)
	}
	return b, chain, err
}

// JobOutput reports a job's state, what BOINC's result of its last work
// unit said (exit status, times, the application's stderr) and its output
// files waiting on the server.
func (e *Engine) JobOutput(ctx context.Context, u store.User, job string) (wire.JobOutput, error) {
	out := wire.JobOutput{Job: job, Files: []wire.ResultFile{}}
	b, chain, err := e.userJob(ctx, u, job)
	if err != nil {
		return out, err
	}
	out.Batch = b.Name
	cs, err := e.q.Chains(ctx, u.ID, b.Group, chain)
	if err != nil {
		return out, err
	}
	if len(cs) == 0 {
		return out, errf(KindNotFound, "job %s has no chain any more", job)
	}
	c := cs[0]
	out.State = jobState(c.State)
	if res, err := e.resultsOf(ctx, u, wire.ConsumerBatch, b.Group, chain); err == nil {
		// The last step's files: those of the job's result.
		last := -1
		for _, f := range res.Files {
			last = max(last, f.Step)
		}
		for _, f := range res.Files {
			if f.Step == last {
				out.Files = append(out.Files, f)
			}
		}
	} else if KindOf(err) != KindNotFound {
		return out, err
	}
	// The current step's work unit; the last one's when the chain is over.
	wu := c.WU(min(c.StepsDone, c.NSteps-1))
	if cur, err := e.q.CurrentSteps(ctx, u.ID, b.Group, chain); err == nil && cur[c.ID].WU != "" {
		wu = cur[c.ID].WU
	}
	if bdb, err := e.boincDB(ctx); err == nil {
		if d, found, err := bdb.Outcome(ctx, wu); err == nil && found {
			out.ExitStatus, out.Elapsed, out.CPU, out.Stderr = d.ExitStatus, d.Elapsed, d.CPU, d.Stderr
		} else if err != nil {
			e.Log.Warn("job output without BOINC's figures", "job", job, "err", err)
		}
	} else {
		e.Log.Warn("job output without BOINC's figures: BOINC's database is not available", "err", err)
	}
	if out.State == wire.JobError && out.ExitStatus == 0 && out.Stderr == "" && c.Error != "" {
		out.Stderr = c.Error + "\n"
	}
	return out, nil
}

// AbortJobs aborts jobs of the user's batches: their chains stop and their
// work units are cancelled in BOINC. Every job must be the user's. A job
// of a batch the user retired (within store.RetiredBatchDays) is taken
// with no effect, as BOINC's abort_jobs takes one (retire_batch keeps the
// work units, until db_purge; cancelling one that ended changes nothing):
// HTCondor's gridmanager removing a job after the batch's lease ended, or
// after a retirement whose answer it lost, gets no error.
func (e *Engine) AbortJobs(ctx context.Context, u store.User, ref wire.JobsRef) (wire.CountResponse, error) {
	type target struct{ group, chain string }
	var ts []target
	retired := 0
	for _, j := range ref.Jobs {
		b, chain, err := e.userJob(ctx, u, j)
		if KindOf(err) == KindNotFound {
			if _, gone, rerr := e.db.JobRetired(ctx, u.ID, j); rerr != nil {
				return wire.CountResponse{}, rerr
			} else if gone {
				retired++
				continue
			}
		}
		if err != nil {
			return wire.CountResponse{}, err
		}
		ts = append(ts, target{b.Group, chain})
	}
	var n int
	var wus []string
	for _, t := range ts {
		chains, w, err := e.db.Abort(ctx, u.ID, t.group, t.chain, "aborted by the batch's submitter")
		if err != nil {
			return wire.CountResponse{}, err
		}
		n += len(chains)
		wus = append(wus, w...)
	}
	note, failed := e.cancelNote(ctx, wus)
	if retired > 0 {
		note += fmt.Sprintf("; %s of retired batches, nothing to abort", words.Count(retired, "job", "jobs"))
	}
	return wire.CountResponse{Count: n, Message: fmt.Sprintf("aborted %s%s", words.Count(n, "job", "jobs"), note), Failed: failed}, nil
}

// RetireBatch forgets a batch: its chains are purged (work units still in
// BOINC cancelled), its results and records removed; contents no chain
// refers to any more leave the pool with the next collection.
func (e *Engine) RetireBatch(ctx context.Context, u store.User, ref wire.BatchRef) (wire.CountResponse, error) {
	b, err := e.userBatch(ctx, u, ref.Name)
	if err != nil && KindOf(err) == KindNotFound {
		// Retired already: the answer to an earlier retirement was lost
		// (HTCondor's gridmanager sends it again), or its lease ended.
		if gone, rerr := e.db.BatchRetired(ctx, u.ID, ref.Name); rerr != nil {
			return wire.CountResponse{}, rerr
		} else if gone {
			return wire.CountResponse{Message: fmt.Sprintf("batch %s was retired already", ref.Name)}, nil
		}
	}
	if err != nil {
		return wire.CountResponse{}, err
	}
	return e.retire(ctx, u, b)
}

func (e *Engine) retire(ctx context.Context, u store.User, b store.Batch) (wire.CountResponse, error) {
	r, err := e.Purge(ctx, u, wire.ChainRef{Group: b.Group})
	if err != nil && KindOf(err) != KindNotFound {
		return r, err
	}
	if err := e.db.DropBatch(ctx, b); err != nil {
		return r, err
	}
	return wire.CountResponse{Count: r.Count, Message: fmt.Sprintf("retired batch %s: %s", b.Name, r.Message)}, nil
}

// SetLease sets a batch's lease: an absolute time in seconds since the
// epoch (0: none), after which the batch is aborted and retired. A batch
// the user retired (within store.RetiredBatchDays) takes it with no
// effect (Count 0), as BOINC's set_expire_time answers success for a
// retired batch, which its expire_batches can only retire again: a lease
// renewed by HTCondor's gridmanager after the lease ended, or after a
// retirement whose answer it lost, is not an error.
func (e *Engine) SetLease(ctx context.Context, u store.User, ref wire.BatchRef) (wire.CountResponse, error) {
	if ref.Lease < 0 {
		return wire.CountResponse{}, errf(KindBadRequest, "a lease is a time in seconds since the epoch, not %d", ref.Lease)
	}
	b, err := e.userBatch(ctx, u, ref.Name)
	if KindOf(err) == KindNotFound {
		if gone, rerr := e.db.BatchRetired(ctx, u.ID, ref.Name); rerr != nil {
			return wire.CountResponse{}, rerr
		} else if gone {
			return wire.CountResponse{Message: fmt.Sprintf("batch %s was retired: its lease no longer matters", ref.Name)}, nil
		}
	}
	if err != nil {
		return wire.CountResponse{}, err
	}
	if err := e.db.SetLease(ctx, b.ID, ref.Lease); err != nil {
		return wire.CountResponse{}, err
	}
	return wire.CountResponse{Count: 1, Message: fmt.Sprintf("batch %s: lease set to %d", b.Name, ref.Lease)}, nil
}

// ExpireLeases aborts and retires every batch whose lease has ended. The
// creator daemon calls it every few seconds; requests about batches call
// it too (ExpireLeasesSoon), so that CGI deployments without a daemon
// loop expire leases as well.
func (e *Engine) ExpireLeases(ctx context.Context) (int, error) {
	bs, err := e.db.ExpiredBatches(ctx, time.Now().Unix())
	if err != nil || len(bs) == 0 {
		return 0, err
	}
	users, err := e.db.Users(ctx)
	if err != nil {
		return 0, err
	}
	byID := map[int64]store.User{}
	for _, u := range users {
		byID[u.ID] = u
	}
	n := 0
	for _, b := range bs {
		u, ok := byID[b.UserID]
		if !ok {
			continue
		}
		_, wus, err := e.db.Abort(ctx, u.ID, b.Group, "", "the batch's lease ended")
		if err != nil {
			return n, fmt.Errorf("aborting batch %s of %s, whose lease ended: %w", b.Name, u.Name, err)
		}
		e.cancelNote(ctx, wus) // work units in BOINC: cancelled (a failure is logged; nobody waits for the answer)
		if _, err := e.retire(ctx, u, b); err != nil {
			return n, fmt.Errorf("retiring batch %s of %s, whose lease ended: %w", b.Name, u.Name, err)
		}
		e.Log.Info("batch lease ended: aborted and retired", "user", u.Name, "batch", b.Name, "lease", b.Lease)
		n++
	}
	return n, nil
}

// ExpireLeasesSoon runs ExpireLeases at most once a second per process.
func (e *Engine) ExpireLeasesSoon(ctx context.Context) {
	now := time.Now().UnixNano()
	last := e.lastLease.Load()
	if now-last < int64(time.Second) || !e.lastLease.CompareAndSwap(last, now) {
		return
	}
	if _, err := e.ExpireLeases(ctx); err != nil && ctx.Err() == nil {
		e.Log.Warn("expiring batch leases", "err", err)
	}
}
