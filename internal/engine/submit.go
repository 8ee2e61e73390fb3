package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/rboinc/rboinc/internal/atomicfile"
	"github.com/rboinc/rboinc/internal/boinc"
	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/pool"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/templates"
	"github.com/rboinc/rboinc/internal/words"
	"github.com/rboinc/rboinc/workflow/wire"
)

// MaxSteps bounds a chain's length (the clients check the same wire limit).
const MaxSteps = wire.MaxChainSteps

// MaxChainsPerRequest bounds one submission.
const MaxChainsPerRequest = 100000

// Submit creates the chains of one request: it checks everything, takes the
// uploaded contents into the pool, records the chains, stages their first
// inputs and runs create_work once for all of them.
func (e *Engine) Submit(ctx context.Context, u store.User, req wire.SubmitRequest) (wire.SubmitResponse, error) {
	return e.submit(ctx, u, req, nil)
}

// SubmitOriginal is Submit for the original protocol, whose clients were
// told "name taken" for any chain name in use, an identical one too (they
// never retry by themselves).
func (e *Engine) SubmitOriginal(ctx context.Context, u store.User, req wire.SubmitRequest) (wire.SubmitResponse, error) {
	return e.submit(context.WithValue(ctx, strictNamesKey{}, true), u, req, nil)
}

// strictNamesKey marks a submission that refuses every taken name.
type strictNamesKey struct{}

// submit is Submit, with the body holding req.Inline's contents when the
// request came with them (nil otherwise).
func (e *Engine) submit(ctx context.Context, u store.User, req wire.SubmitRequest, inline io.Reader) (_ wire.SubmitResponse, err error) {
	resp := wire.SubmitResponse{DryRun: req.Options.DryRun}
	if req.Options.AssignUserAll == wire.AssignSelf {
		// The submitter's own BOINC account.
		if u.BoincUserID == 0 {
			return resp, errf(KindBadRequest, "-assign_user_all me: user %s is linked to no BOINC account (an administrator links it with `rboinc-server user link %s --boinc-user ID`)", u.Name, u.Name)
		}
		req.Options.AssignUserAll = u.BoincUserID
	}
	params, prio, nsteps, err := e.checkSubmit(req)
	if err != nil {
		return resp, err
	}
	if err := e.checkSubmissionTargets(ctx, u.ID, req.Options.Notify); err != nil {
		return resp, err
	}
	if err := checkBatch(req); err != nil {
		return resp, err
	}
	if err := checkConsumer(req.Consumer); err != nil {
		return resp, err
	}
	consumer := req.Consumer
	if req.Batch != nil {
		if consumer != wire.ConsumerRetriever {
			return resp, errf(KindBadRequest, "a batch's results go to the GAHP: consumer %q cannot have them", consumer)
		}
		consumer = wire.ConsumerBatch
	} else if err := e.ownGroup(ctx, u, consumer, req.Group); err != nil {
		// Refused before anything is uploaded; the transaction that makes
		// the chains checks again.
		return resp, err
	}
	q, err := e.Queues.Get(req.Queue)
	if err != nil {
		if errors.Is(err, templates.ErrUnknownQueue) {
			return resp, errf(KindUnknownQueue, "unknown application queue %q", req.Queue)
		}
		return resp, queueMisconfigured(req.Queue, err)
	}
	params.App = q.Application
	if err := e.checkPolicy(req.Options, prio); err != nil {
		return resp, err
	}
	if err := checkParams(q, req); err != nil {
		return resp, err
	}
	if err := e.checkInline(req, inline != nil); err != nil {
		return resp, err
	}
	if err := e.checkQuota(ctx, u, req); err != nil {
		return resp, err
	}
	// A submission naming contents alone (no upload, no inline bytes) is
	// refused for those it lacks before creation starts: clients send one
	// without asking which are missing first (wire.Error.Missing), and
	// each first submission's refusal then costs no create_work start.
	named := req.Upload == "" && inline == nil
	if named {
		if err := e.takeUploads(ctx, u, req, nil, &fresh{}); err != nil {
			return resp, err
		}
	}
	// create_work starts now, so that it is ready by the time the first
	// jobs come; recordAndCreate ends it, and so does a failure before
	// that. One that cannot start is tried again there, where its error
	// comes after the request has been read, as it always did.
	var early workRun
	if !req.Options.DryRun {
		if wc, cerr := e.creator(ctx); cerr == nil {
			if early, _ = wc.start(ctx, params); early != nil {
				defer early.Abort() // nothing once ended
			}
		}
	}
	// What this request brings into the pool leaves it again when the
	// request fails (after the intake below has finished writing).
	var brought fresh
	var taken *intake
	defer func() {
		if err == nil {
			return
		}
		sums := brought.list()
		if taken != nil {
			sums = append(sums, taken.brought()...)
		}
		e.dropFresh(context.WithoutCancel(ctx), sums)
	}()
	// The inline contents may still be being written while the chains are
	// recorded and create_work reads their jobs (in is then not nil).
	var in *intake
	if inline != nil {
		taken, err = e.startInline(ctx, u, q, req, inline)
		defer func() {
			if ferr := taken.finish(ctx); ferr != nil && err == nil {
				err = ferr
			}
		}()
		if err != nil {
			return resp, err
		}
		if !taken.stage {
			// Written whole already: into the index now, as after an upload.
			if err := taken.finish(ctx); err != nil {
				return resp, err
			}
		} else {
			in = taken
		}
	}
	if !named { // else checked above
		if err := e.takeUploads(ctx, u, req, taken, &brought); err != nil {
			return resp, err
		}
	}
	if req.Upload != "" {
		defer e.dropUpload(ctx, u, req.Upload)
	}
	res := newResolver(e, q)
	chains := make([]store.NewChain, 0, len(req.Chains))
	for _, cs := range req.Chains {
		inputs, err := res.resolveInputs(ctx, cs)
		if err != nil {
			return resp, err
		}
		if err := checkArgs(cs.Name, cs.Args); err != nil {
			return resp, err
		}
		chains = append(chains, store.NewChain{Chain: store.Chain{Group: req.Group, Name: cs.Name, Queue: q.Name, App: q.Application, NSteps: nsteps, Priority: prio,
			MaxAttempts: req.Options.MaxAttempts, Args: strings.Join(cs.Args, " "), Consumer: consumer}, Inputs: inputs})
	}
	// Arguments go after the template's own command line, which then
	// leaves the template for create_work's (BOINC takes one of them).
	fixed, hasFixed := q.CommandLine()
	moveCmd := false
	for _, c := range chains {
		moveCmd = moveCmd || (hasFixed && c.Args != "")
	}
	if moveCmd {
		for i := range chains {
			chains[i].Args = strings.TrimSpace(fixed + " " + chains[i].Args)
		}
	}
	wuT, resT, err := e.writeTemplates(q, req.Options, moveCmd)
	if err != nil {
		return resp, err
	}
	pj, _ := json.Marshal(params)
	lj, _ := json.Marshal(layoutOf(q))
	for i := range chains {
		chains[i].Params, chains[i].Layout, chains[i].WUTmpl, chains[i].ResTmpl = string(pj), string(lj), wuT, resT
		chains[i].Digest = submissionDigest(chains[i])
		if err := checkJobLine(u, chains[i]); err != nil {
			return resp, err
		}
	}
	if req.Options.DryRun {
		for _, c := range chains {
			existing, err := e.db.Chains(ctx, u.ID, req.Group, c.Name)
			if err != nil {
				return resp, err
			}
			if len(existing) > 0 {
				return resp, errf(KindNameTaken, "chain %s already exists in group %s", c.Name, req.Group)
			}
			resp.Chains = append(resp.Chains, wire.ChainCreated{Name: c.Name, FirstWU: naming.Format(c.Name, u.Name, req.Group, 0, nsteps, "RNDnnnn")})
		}
		return resp, nil
	}
	batchAgain := false
	var batch store.Batch
	if req.Batch != nil {
		// The batch first: its name, group and job names are refused
		// before any chain is made; it goes again if the chains fail,
		// unless some were recorded (a commit whose outcome is unknown):
		// the same request sent again then completes it.
		b, again, berr := e.beginBatch(ctx, u, req, q.Name)
		if berr != nil {
			return resp, berr
		}
		batchAgain, batch = again, b
		if e.afterBeginBatch != nil {
			e.afterBeginBatch(b)
		}
		defer func() {
			if err != nil {
				if _, derr := e.db.DropUnusedBatch(context.WithoutCancel(ctx), b); derr != nil {
					e.Log.Error("forgetting the batch of a failed submission", "batch", req.Batch.Name, "err", derr)
				}
			}
		}()
	}
	// Registered before the chains exist, so that none of their events
	// passes before the targets are there.
	if err := e.addSubmissionTargets(ctx, u.ID, req.Group, req.Options.Notify); err != nil {
		return resp, err
	}
	created, err := e.recordAndCreate(ctx, u, params, chains, in, early)
	if errors.Is(err, store.ErrExists) && ctx.Value(strictNamesKey{}) == nil && (req.Batch == nil || batchAgain) {
		// A retry of a submission whose answer was lost finds its chains:
		// identical ones are answered as made, new ones made, different
		// ones under a taken name refused.
		var existing []wire.ChainCreated
		if existing, chains, err = e.splitResubmitted(ctx, u, req.Group, chains, err); err == nil {
			resp.Chains = existing
			resp.AlreadySubmitted = len(chains) == 0
			if len(chains) > 0 && taken != nil {
				err = taken.finish(ctx) // the new chains read what it wrote
			}
			if len(chains) > 0 && err == nil {
				created, err = e.recordAndCreate(ctx, u, params, chains, nil, nil)
			}
		}
	}
	if err != nil {
		if errors.Is(err, store.ErrExists) {
			return resp, errf(KindNameTaken, "%v: choose another name, or purge the old chain first", err)
		}
		if errors.Is(err, store.ErrQuota) {
			return resp, errf(KindQuota, "%v", err)
		}
		if merr := e.appMissing(ctx, req.Queue, q.Application, err); merr != nil {
			return resp, merr
		}
		if merr := e.constantMissing(q, err); merr != nil {
			return resp, merr
		}
		return resp, otherConsumer(err)
	}
	if req.Batch != nil {
		if err = e.keepBatch(ctx, batch, req); err != nil {
			return resp, err
		}
	}
	for _, c := range created {
		resp.Chains = append(resp.Chains, wire.ChainCreated{Name: c.Name, FirstWU: c.WU(0)})
	}
	e.Log.Info("submitted", "user", u.Name, "group", req.Group, "queue", q.Name, "chains", len(created))
	return resp, nil
}

func (e *Engine) checkSubmit(req wire.SubmitRequest) (boinc.WorkParams, int, int, error) {
	var p boinc.WorkParams
	o := req.Options
	if err := naming.CheckIdent("queue", req.Queue); err != nil {
		return p, 0, 0, errf(KindBadRequest, "%v", err)
	}
	if err := naming.CheckIdent("group", req.Group); err != nil {
		return p, 0, 0, errf(KindBadRequest, "%v", err)
	}
	if len(req.Chains) == 0 {
		return p, 0, 0, errf(KindBadRequest, "no chain to submit")
	}
	if len(req.Chains) > MaxChainsPerRequest {
		return p, 0, 0, errf(KindBadRequest, "too many chains in one request: %d (at most %d)", len(req.Chains), MaxChainsPerRequest)
	}
	seen := map[string]bool{}
	for _, c := range req.Chains {
		if err := naming.CheckIdent("name", c.Name); err != nil {
			return p, 0, 0, errf(KindBadRequest, "%v", err)
		}
		if seen[c.Name] {
			return p, 0, 0, errf(KindBadRequest, "chain name %s appears twice in the request", c.Name)
		}
		seen[c.Name] = true
	}
	nsteps := o.NumSteps
	if nsteps == 0 {
		nsteps = 1
	}
	if nsteps < 1 || nsteps > MaxSteps {
		return p, 0, 0, errf(KindBadRequest, "num_steps must be between 1 and %d, not %d", MaxSteps, o.NumSteps)
	}
	prio := 1
	if o.Priority != nil {
		prio = *o.Priority
	}
	if o.FpopsEst < 0 || o.FpopsBound < 0 || o.MemoryBound < 0 || o.TargetNResults < 0 || o.MinQuorum < 0 || o.Batch < 0 || o.AssignUserAll < 0 {
		return p, 0, 0, errf(KindBadRequest, "fpops_est, fpops_bound, memory_bound, target_nresults, min_quorum, batch and assign_user_all must not be negative")
	}
	if o.Batch > math.MaxInt32 || o.AssignUserAll > math.MaxInt32 {
		return p, 0, 0, errf(KindBadRequest, "batch and assign_user_all are BOINC ids, at most %d", math.MaxInt32)
	}
	if limit := e.maxAttempts(store.Chain{}); o.MaxAttempts < 0 || o.MaxAttempts > limit {
		return p, 0, 0, errf(KindBadRequest, "max_attempts must be between 1 and %d (the server's max_step_attempts), not %d", limit, o.MaxAttempts)
	}
	if err := checkNotify(o.Notify); err != nil {
		return p, 0, 0, err
	}
	if o.FpopsEst > 0 && o.FpopsBound > 0 && o.FpopsBound < o.FpopsEst {
		return p, 0, 0, errf(KindBadRequest, "fpops_bound (%g) is below fpops_est (%g)", o.FpopsBound, o.FpopsEst)
	}
	tn := o.TargetNResults
	if tn == 0 {
		tn = 1
	}
	if o.MinQuorum > tn {
		return p, 0, 0, errf(KindBadRequest, "min_quorum (now %d) must be <= target_nresults (%d)", o.MinQuorum, tn)
	}
	// BOINC's transitioner makes target_nresults results at once; the
	// server's max_total_results bounds them (raising it to the request
	// would let one user have millions of result rows made).
	maxErr, maxTot := e.Cfg.MaxErrorResults, e.Cfg.MaxTotalResults
	if maxTot != 0 && tn > maxTot {
		return p, 0, 0, errf(KindQuota, "target_nresults %d is above this server's max_total_results of %d", tn, maxTot)
	}
	p = boinc.WorkParams{Batch: o.Batch, FpopsEst: o.FpopsEst, FpopsBound: o.FpopsBound, MemoryBound: o.MemoryBound,
		TargetNResults: o.TargetNResults, MinQuorum: o.MinQuorum, MaxErrorResults: maxErr, MaxTotalResults: maxTot, TargetUser: o.AssignUserAll}
	return p, prio, nsteps, nil
}

// takeUploads moves the contents of the request's upload collection into
// the pool, each checked against its MD5 name. Contents that in sent
// (written, being written, or shown to be held) count as present; a
// content the pool holds counts only when the user owns it (see
// store.PoolOwned): otherwise its bytes must be in the upload, checked,
// and the pool keeps its one copy.
func (e *Engine) takeUploads(ctx context.Context, u store.User, req wire.SubmitRequest, in *intake, brought *fresh) (err error) {
	need := map[string]bool{}
	for _, c := range req.Chains {
		for param, f := range c.Files {
			if !pool.ValidMD5(f.MD5) {
				return errf(KindBadRequest, "chain %s, parameter %s: %q is not an MD5 checksum", c.Name, param, f.MD5)
			}
			need[f.MD5] = true
		}
	}
	var dir string
	if req.Upload != "" {
		if !validUploadID(req.Upload) {
			return errf(KindBadRequest, "upload %q is not a valid upload id", req.Upload)
		}
		owner, err := e.db.UploadOwner(ctx, req.Upload)
		if err != nil || owner != u.ID {
			return errf(KindNotFound, "upload %s does not exist", req.Upload)
		}
		dir = filepath.Join(e.davDir(u.Name), req.Upload)
		if err := realDir(e.davDir(u.Name), "your scratch area"); err != nil {
			return err
		}
		if err := realDir(dir, "upload "+req.Upload); err != nil {
			return err
		}
	}
	owned, err := e.db.PoolOwned(ctx, u.ID, slices.Collect(maps.Keys(need)))
	if err != nil {
		return err
	}
	var missing []string
	// Recorded in one transaction at the end, also when a later upload
	// fails: what is in the pool directory must be in its index.
	var added []store.PoolEntry
	defer func() {
		if aerr := e.db.PoolAddOwned(ctx, u.ID, added); aerr != nil && err == nil {
			err = aerr
		}
	}()
	for sum := range need {
		if in.sent(sum) {
			continue
		}
		// The user's own is touched: a file no row names (a killed
		// request's, its retry making the user owner) is used without
		// being ingested, and must outlast collection until the chains
		// using it are recorded. Another user's is only looked at.
		pooled := owned[sum] && e.Pool.Touch(sum) || !owned[sum] && e.Pool.Has(sum)
		if pooled && owned[sum] {
			continue
		}
		if dir == "" {
			missing = append(missing, sum)
			continue
		}
		src := filepath.Join(dir, sum)
		if _, err := os.Lstat(src); err != nil {
			missing = append(missing, sum)
			continue
		}
		n, err := e.Pool.Ingest(src, sum)
		if err != nil {
			return errf(KindBadRequest, "%v", err)
		}
		added = append(added, store.PoolEntry{MD5: sum, Size: n})
		if !pooled {
			brought.add(sum) // another user's copy stays when this request fails
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		err := errf(KindMissingContent, "%s neither on the server nor in the upload (first: %s); upload them and submit again", words.Count(len(missing), "input content is", "input contents are"), missing[0])
		err.(*Error).Missing = missing
		return err
	}
	return nil
}

func (e *Engine) dropUpload(ctx context.Context, u store.User, id string) {
	os.RemoveAll(filepath.Join(e.davDir(u.Name), id))
	if err := e.db.DeleteUpload(ctx, id); err != nil {
		e.Log.Warn("forgetting upload", "id", id, "err", err)
	}
}

// resolver gives chains of one request their input contents, looking each
// server default, empty content and encoding up once per request rather
// than once per chain.
type resolver struct {
	e        *Engine
	q        *templates.Queue
	params   map[string]bool
	encoded  map[string]string // content -> its encoded content
	defaults map[string]foundDefault
	empty    string // the empty content, once pooled
}

func newResolver(e *Engine, q *templates.Queue) *resolver {
	r := &resolver{e: e, q: q, params: map[string]bool{}, encoded: map[string]string{}, defaults: map[string]foundDefault{}}
	for _, in := range q.Parameters() {
		r.params[in.Parameter] = true
	}
	return r
}

// defaultFor is defaultFile, remembered for the request.
func (r *resolver) defaultFor(ctx context.Context, name string) (string, bool, error) {
	if d, seen := r.defaults[name]; seen {
		return d.sum, d.ok, nil
	}
	s, _, ok, err := r.e.defaultFile(ctx, r.q.Name, name)
	if err != nil {
		return "", false, err
	}
	r.defaults[name] = foundDefault{s, ok}
	return s, ok, nil
}

type foundDefault struct {
	sum string
	ok  bool // false: the server has no default of that name
}

// resolveInputs gives every input position of a chain its content: the
// scientist's file, a server default, or nothing for a constant file.
func (r *resolver) resolveInputs(ctx context.Context, cs wire.ChainSpec) ([]string, error) {
	e, q := r.e, r.q
	for name := range cs.Files {
		if !r.params[name] {
			return nil, errf(KindBadRequest, "chain %s: queue %s has no parameter -%s", cs.Name, q.Name, name)
		}
	}
	out := make([]string, len(q.Inputs))
	for i, in := range q.Inputs {
		var sum string
		switch {
		case in.Constant:
			continue
		case in.Immutable:
			name := in.OpenName
			if name == "" {
				name = in.Parameter
			}
			s, ok, err := r.defaultFor(ctx, name)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, fmt.Errorf("queue %s: the server has no default file for immutable input %s (expected %s)", q.Name, name, filepath.Join(e.etcDir(), "default_"+name))
			}
			sum = s
		default:
			f, given := cs.Files[in.Parameter]
			switch {
			case given:
				sum = f.MD5
			case in.Optional:
				s, ok, err := r.defaultFor(ctx, in.Parameter)
				if err != nil {
					return nil, err
				}
				if !ok {
					// Like the original: an omitted optional input without a
					// server default is an empty file.
					if r.empty == "" {
						if r.empty, _, err = e.Pool.WriteContent(strings.NewReader("")); err == nil {
							err = e.db.PoolAdd(ctx, r.empty, 0)
						}
						if err != nil {
							return nil, err
						}
					}
					s = r.empty
				}
				sum = s
			default:
				return nil, errf(KindBadRequest, "chain %s: missing mandatory parameter -%s (%s)", cs.Name, in.Parameter, in.Description)
			}
		}
		if in.Encode {
			if enc, ok := r.encoded[sum]; ok {
				sum = enc
			} else {
				enc, _, err := e.encode(ctx, sum)
				if err != nil {
					return nil, fmt.Errorf("chain %s, input %s: %w", cs.Name, in.Parameter, err)
				}
				r.encoded[sum] = enc
				sum = enc
			}
		}
		out[i] = sum
	}
	return out, nil
}

// overridable are the <workunit> elements a submission option replaces.
var overridable = map[string]func(wire.Options) bool{
	"rsc_fpops_est":    func(o wire.Options) bool { return o.FpopsEst > 0 },
	"rsc_fpops_bound":  func(o wire.Options) bool { return o.FpopsBound > 0 },
	"rsc_memory_bound": func(o wire.Options) bool { return o.MemoryBound > 0 },
	"target_nresults":  func(o wire.Options) bool { return o.TargetNResults > 0 },
	"min_quorum":       func(o wire.Options) bool { return o.MinQuorum > 0 },
	"batch":            func(o wire.Options) bool { return o.Batch > 0 },
}

// writeTemplates writes the create_work copies of the queue's templates
// under immutable content-derived names in templates/rboinc/, and returns
// their paths relative to the project directory. BOINC re-reads the result
// template for a work unit's whole life, so these never change.
func (e *Engine) writeTemplates(q *templates.Queue, o wire.Options, dropCmd bool) (string, string, error) {
	var drop []string
	if dropCmd {
		drop = append(drop, "command_line")
	}
	for tag, given := range overridable {
		if given(o) {
			drop = append(drop, tag)
		}
	}
	// max_error_results and max_total_results stay: the server's values go
	// on the command line for every work unit (as the original's), and a
	// queue's own in its template win there, as BOINC's create_work lets
	// template values win.
	wu, err := e.writeImmutable(q.WUTemplate(drop...), "_in")
	if err != nil {
		return "", "", err
	}
	res, err := e.writeImmutable(q.ResultTemplate(), "_out")
	return wu, res, err
}

func (e *Engine) writeImmutable(data []byte, suffix string) (string, error) {
	sum := md5hex(data)
	rel := filepath.Join("templates", "rboinc", sum+suffix)
	abs := filepath.Join(e.Proj.Dir, rel)
	if _, err := os.Stat(abs); err == nil {
		return rel, nil
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return "", err
	}
	return rel, atomicfile.Write(abs, data, 0o444)
}

// stepJob is a step to hand to create_work.
type stepJob struct {
	chain store.Chain
	step  store.Step
}

// createSteps stages the steps' inputs and creates their work units with
// one create_work run, then marks them queued.
func (e *Engine) createSteps(ctx context.Context, params boinc.WorkParams, steps []stepJob) error {
	jobs := make([]boinc.Job, 0, len(steps))
	staged := map[string]string{}
	known := map[string]stagedInput{}
	catchup, err := e.catchup(ctx, steps)
	if err != nil {
		return inState(err)
	}
	for i, s := range steps {
		var files []string
		for pos, sum := range s.step.Inputs {
			if sum == "" {
				continue // constant file: BOINC finds it by its <physical_name>
			}
			name, ok := staged[sum]
			if !ok {
				fi, err := os.Stat(e.Pool.Path(sum))
				if err != nil {
					return fmt.Errorf("work unit %s, input %d: content %s is gone from the pool: %w", s.step.WU, pos, sum, err)
				}
				if name, err = e.Pool.Stage(e.Proj, sum, fi.Size()); err != nil {
					return err
				}
				staged[sum] = name
				known[name] = stagedInput{md5: sum, size: fi.Size()}
			}
			files = append(files, name)
		}
		prio := s.chain.Priority - s.step.Step
		if p, ok := catchup[i]; ok {
			prio = p // held back in its group: it catches up
		}
		job := boinc.Job{WUName: s.step.WU, WUTemplate: s.chain.WUTmpl, ResultTemplate: s.chain.ResTmpl,
			Priority: prio, Files: files, CommandLine: s.chain.Args}
		if err := e.stageGzips(job); err != nil {
			return err
		}
		jobs = append(jobs, job)
	}
	if len(staged) > 0 {
		// The inputs' data is on disk (outputs the hook took, contents
		// of submissions); their new links and the steps' records are
		// made durable before BOINC holds the work units.
		var any string
		for _, name := range staged {
			any = e.Proj.DownloadPath(name)
			break
		}
		if err := e.durableForBOINC(nil, any); err != nil {
			return err
		}
	}
	wc, err := e.creator(ctx)
	if err != nil {
		return err
	}
	t0 := time.Now()
	err = wc.createAll(ctx, params, jobs, known)
	e.observe(ctx, store.LatencyCreateWork, t0)
	if err != nil {
		return err
	}
	if e.afterCreateSteps != nil {
		e.afterCreateSteps()
	}
	wus := make([]string, len(steps))
	for i, s := range steps {
		wus[i] = s.step.WU
	}
	if err := e.db.SetStepState(ctx, wus, "queued"); err != nil {
		// The work units exist: the next pass finds them so
		// (queueExisting, alreadyCreated) and records them queued.
		return inState(err)
	}
	return inState(e.cancelStranded(ctx, wus))
}
