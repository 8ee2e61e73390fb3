package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	"github.com/rboinc/rboinc/internal/fsync"
	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/workflow/wire"
)

// uploadWorkers bounds parallel uploads, hashWorkers parallel hashing.
const (
	uploadWorkers = 4
	hashWorkers   = 4
)

// Chain is one chain ready to submit: its name and, per parameter, the
// local file given for it (parameter name without dash -> path).
type Chain struct {
	Name  string
	Files map[string]string
	Args  []string // the application's command line
	Job   string   // the job name, in a batch
}

// BuildChains merges the parameter files shared by all chains (from the
// command line) with each job's own, the job's winning, and checks every
// chain against the queue: each parameter is known, each given file is a
// readable regular file, and each mandatory parameter is given. All the
// errors it returns are usage errors.
func BuildChains(q *wire.Queue, shared map[string]string, jobs []Job) ([]Chain, error) {
	return buildChains(q, shared, jobs, true)
}

// BuildChainsForSubmit is BuildChains without opening the files: for chains
// that go straight to SubmitChains with CheckFiles set, which reads each
// file anyway and tells one it cannot read in the same words (a jobs file
// may name thousands).
func BuildChainsForSubmit(q *wire.Queue, shared map[string]string, jobs []Job) ([]Chain, error) {
	return buildChains(q, shared, jobs, false)
}

func buildChains(q *wire.Queue, shared map[string]string, jobs []Job, checkFiles bool) ([]Chain, error) {
	known := map[string]wire.Parameter{}
	for _, p := range q.Parameters {
		known[p.Name] = p
	}
	var params []string // the parameter each of paths was first given for
	var paths []string  // each given file once, to check
	seenPath := map[string]bool{}
	var chains []Chain
	for _, j := range jobs {
		if err := naming.CheckIdent("chain name", j.Name); err != nil {
			return nil, Usagef("%v", err)
		}
		ch := Chain{Name: j.Name, Files: map[string]string{}}
		for k, v := range shared {
			ch.Files[k] = v
		}
		for k, v := range j.Files {
			if _, ok := known[k]; !ok {
				return nil, Usagef("line %d of the jobs file: -%s is not a parameter of queue %s; see -help_parameters", j.Line, k, q.Name)
			}
			ch.Files[k] = v
		}
		for _, p := range q.Parameters {
			path, given := ch.Files[p.Name]
			if !given {
				if !p.Optional {
					return nil, Usagef("missing mandatory parameter -%s (%s) for chain %s; see -help_parameters", p.Name, p.Description, ch.Name)
				}
				continue
			}
			if !seenPath[path] {
				seenPath[path] = true
				paths = append(paths, path)
				params = append(params, p.Name)
			}
		}
		chains = append(chains, ch)
	}
	if !checkFiles {
		return chains, nil
	}
	// A jobs file may name thousands of files: opened a few at a time.
	errs := parallel(context.Background(), len(paths), hashWorkers, false, func(_ context.Context, i int) error {
		return checkReadable(paths[i])
	})
	for i, err := range errs {
		if err != nil {
			return nil, Usagef("cannot read -%s %s: %v", params[i], paths[i], err)
		}
	}
	return chains, nil
}

// checkReadable opens path to prove it is a readable regular file.
func checkReadable(path string) error {
	f, err := fsync.OpenRead(path)
	if err != nil {
		return systemReason(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	return nil
}

// SubmitInput is one submission: chains of one queue in one group.
type SubmitInput struct {
	Queue   string
	Group   string
	Options wire.Options
	Chains  []Chain
	// HashCache, when set, gives the MD5 of files hashed before and still
	// unchanged, and learns those hashed now (saved before SubmitChains
	// returns).
	HashCache *HashCache
	// Resume, when set, remembers the upload collections of large inputs
	// whose transfer a passing failure cut, and takes them up again.
	Resume *UploadMemory
	// OnUpload, when set, is called once before uploading with the number
	// of files and bytes to send; the progress callback it returns (may
	// be nil) receives byte counts from several goroutines at once.
	OnUpload func(files int, bytes int64) func(n int64)
	// Batch, when set, makes the chains a batch of that name, each chain
	// the job Chain.Job.
	Batch *wire.BatchSpec
	// Consumer takes the chains' results: wire.ConsumerRetriever
	// (rboinc-retrieve) or wire.ConsumerMaster.
	Consumer string
	// CheckFiles: the chains come from BuildChainsForSubmit, so a file that
	// is no readable regular file is a usage error worded as BuildChains
	// words it.
	CheckFiles bool
}

// SubmitReport is what a submission did; its JSON is rboinc-submit -json.
type SubmitReport struct {
	Chains        []wire.ChainCreated `json:"chains"`
	DryRun        bool                `json:"dry_run"`
	UploadedFiles int                 `json:"uploaded_files"`
	UploadedBytes int64               `json:"uploaded_bytes"`
	ReusedFiles   int                 `json:"reused_files"`
	// AlreadySubmitted: every chain existed already, made by an identical
	// submission whose answer was lost; nothing new was created.
	AlreadySubmitted bool `json:"already_submitted,omitempty"`
}

type content struct {
	path string
	ref  wire.FileRef
	data []byte // the bytes hashed, when kept (small files); nil: read path again
}

// SubmitChains hashes every distinct input file once, sends only the
// contents the server lacks, each once, and creates all chains with one
// submit request: small contents travel in that request itself, large
// ones are PUT before it, a few in parallel.
func (c *Client) SubmitChains(ctx context.Context, in SubmitInput) (*SubmitReport, error) {
	if err := naming.CheckIdent("group", in.Group); err != nil {
		return nil, Usagef("%v", err)
	}
	// Each distinct path once, in first-seen order, hashed a few at a time
	// (a jobs file may name thousands of small files).
	var paths []string
	seen := map[string]bool{}
	for _, ch := range in.Chains {
		for _, path := range sortedValues(ch.Files) {
			if !seen[path] {
				seen[path] = true
				paths = append(paths, path)
			}
		}
	}
	t0 := time.Now()
	hashed := make([]wire.FileRef, len(paths))
	kept := make([][]byte, len(paths))
	hasher := newInputHasher(in.HashCache)
	hasher.checkFiles = in.CheckFiles
	errs := parallel(ctx, len(paths), hashWorkers, true, func(ctx context.Context, i int) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var err error
		hashed[i], kept[i], err = hasher.hash(paths[i])
		return err
	})
	if err := firstError(errs); err != nil {
		var ue *unreadableError
		if errors.As(err, &ue) {
			return nil, Usagef("cannot read -%s %s: %v", paramOf(in.Chains, ue.path), ue.path, ue.reason)
		}
		return nil, err
	}
	if in.HashCache != nil {
		// Written while the server is asked; a failure costs only hashing
		// again next time.
		saved := make(chan struct{})
		go func() {
			defer close(saved)
			if err := in.HashCache.Save(); err != nil {
				slog.Debug("hash cache not saved", "err", err)
			}
		}()
		defer func() { <-saved }()
	}
	refs := map[string]wire.FileRef{} // path -> content
	byMD5 := map[string]content{}     // one local copy of each content
	var md5s []string
	for i, path := range paths {
		ref := hashed[i]
		refs[path] = ref
		if _, dup := byMD5[ref.MD5]; !dup {
			byMD5[ref.MD5] = content{path: path, ref: ref, data: kept[i]}
			md5s = append(md5s, ref.MD5)
		}
	}

	req := wire.SubmitRequest{Queue: in.Queue, Group: in.Group, Options: in.Options, Batch: in.Batch, Consumer: in.Consumer}
	for _, ch := range in.Chains {
		spec := wire.ChainSpec{Name: ch.Name, Files: map[string]wire.FileRef{}, Args: ch.Args, Job: ch.Job}
		for p, path := range ch.Files {
			spec.Files[p] = refs[path]
		}
		req.Chains = append(req.Chains, spec)
	}

	rep := &SubmitReport{}
	tHashed := time.Now()
	var missing []string
	if len(md5s) > 0 {
		// Sent first as it is: when the server has every content (a
		// resubmission), this one request makes the chains; otherwise its
		// refusal lists what to send. A server older than that list is
		// asked which contents it lacks, as before.
		resp, err := c.Submit(ctx, req)
		if err == nil {
			slog.Debug("submission timing", "files", len(paths), "hash_ms", msSince(t0, tHashed), "submit_ms", msSince(tHashed, time.Now()))
			rep.ReusedFiles = len(md5s)
			rep.Chains, rep.DryRun, rep.AlreadySubmitted = resp.Chains, resp.DryRun || in.Options.DryRun, resp.AlreadySubmitted
			return rep, nil
		}
		var ae *APIError
		if !errors.As(err, &ae) || ae.Code != wire.CodeMissingContent {
			return nil, err
		}
		if missing = ae.Missing; len(missing) == 0 {
			if missing, err = c.Missing(ctx, md5s); err != nil {
				return nil, fmt.Errorf("asking which files the server already has: %w", err)
			}
		}
	}
	var toSend []content
	for _, m := range missing {
		if ct, ok := byMD5[m]; ok {
			toSend = append(toSend, ct)
			delete(byMD5, m) // the server may list a content twice
		}
	}
	rep.ReusedFiles = len(md5s) - len(toSend)
	for _, ct := range toSend {
		rep.UploadedBytes += ct.ref.Size
	}
	rep.UploadedFiles = len(toSend)
	var progress func(int64)
	if len(toSend) > 0 && in.OnUpload != nil {
		progress = in.OnUpload(len(toSend), rep.UploadedBytes)
	}
	// Small contents travel in the submission's own request; large ones
	// are PUT first, a few in parallel.
	inline, large := splitInline(toSend)
	var up wire.UploadResponse
	var resumable []string // large inputs an interrupted run may have begun
	for _, ct := range large {
		if ct.ref.Size >= resumableMin {
			resumable = append(resumable, ct.ref.MD5)
		}
	}
	if len(large) > 0 {
		up = c.rememberedUpload(ctx, in.Resume, resumable)
		if err := c.upload(ctx, &up, large, progress, in.Resume != nil && len(resumable) > 0); err != nil {
			if in.Resume != nil && up.ID != "" {
				in.Resume.remember(c.Base.String(), up, resumable)
				if in.Resume.Save() == nil {
					err = fmt.Errorf("%w (run the same command again: large inputs go on from where they stopped)", err)
				}
			}
			return nil, err
		}
		req.Upload = up.ID
	}
	if in.Resume != nil && len(resumable) > 0 {
		in.Resume.forget(c.Base.String(), resumable)
		in.Resume.Save()
	}
	tSubmit := time.Now()
	var resp *wire.SubmitResponse
	var err error
	if len(inline) > 0 {
		// Safe to send again: a submission identical to one the server
		// accepted is answered with the chains it made.
		err = c.Retrying(ctx, func() error {
			var ierr error
			resp, ierr = c.SubmitInline(ctx, req, inline, progress)
			return ierr
		})
		if errors.Is(err, errInlineUnsupported) {
			// An older server: PUT them too.
			if err = c.upload(ctx, &up, inline, progress, false); err == nil {
				req.Upload = up.ID
				resp, err = c.Submit(ctx, req)
			}
		}
	} else {
		resp, err = c.Submit(ctx, req)
	}
	if err != nil {
		return nil, err
	}
	slog.Debug("submission timing", "files", len(paths), "hash_ms", msSince(t0, tHashed),
		"ask_upload_ms", msSince(tHashed, tSubmit), "submit_ms", msSince(tSubmit, time.Now()))
	rep.Chains, rep.DryRun, rep.AlreadySubmitted = resp.Chains, resp.DryRun || in.Options.DryRun, resp.AlreadySubmitted
	return rep, nil
}

// splitInline picks, in order, the contents small enough to send with the
// submission itself, up to inlineTotal bytes in all.
func splitInline(toSend []content) (inline, large []content) {
	var total int64
	for _, ct := range toSend {
		if ct.ref.Size <= inlineMaxFile && total+ct.ref.Size <= inlineTotal {
			total += ct.ref.Size
			inline = append(inline, ct)
		} else {
			large = append(large, ct)
		}
	}
	return inline, large
}

// upload PUTs the contents into upload collection up, which it opens
// first when up is still empty.
// With keepBegun, a collection whose uploads failed for a passing reason is
// kept (up stays set), for a later run to go on with.
func (c *Client) upload(ctx context.Context, up *wire.UploadResponse, toSend []content, progress func(int64), keepBegun bool) error {
	if up.ID == "" {
		var err error
		if *up, err = c.NewUpload(ctx); err != nil {
			return fmt.Errorf("opening an upload area: %w", err)
		}
	}
	errs := parallel(ctx, len(toSend), uploadWorkers, true, func(ctx context.Context, i int) error {
		ct := toSend[i]
		if ct.ref.Size >= resumableMin {
			err := c.putResumable(ctx, *up, ct.ref.MD5, ct.path, ct.ref.Size, progress)
			if !errors.Is(err, errNoResumable) {
				return err
			}
		}
		return c.Retrying(ctx, func() error { return c.PutFile(ctx, up.DAVPath, ct.ref.MD5, ct.path, progress) })
	})
	if err := firstError(errs); err != nil {
		if keepBegun && Transient(err) {
			return err
		}
		c.DiscardUpload(context.WithoutCancel(ctx), *up)
		*up = wire.UploadResponse{}
		return err
	}
	return nil
}

// rememberedUpload is the upload collection an interrupted earlier run
// left for one of these contents, when the server still has it.
func (c *Client) rememberedUpload(ctx context.Context, mem *UploadMemory, sums []string) wire.UploadResponse {
	for _, sum := range sums {
		up, ok := mem.lookup(c.Base.String(), sum)
		if !ok {
			continue
		}
		if _, err := c.uploadPart(ctx, http.MethodHead, up.ID, sum, nil, 0, 0); err == nil {
			return up
		}
	}
	return wire.UploadResponse{}
}

// sortedValues returns the distinct values of m in a stable order.
func sortedValues(m map[string]string) []string {
	var v []string
	for _, p := range m {
		v = append(v, p)
	}
	slices.Sort(v)
	return slices.Compact(v)
}

// paramOf names a parameter path is given for (the first by name).
func paramOf(chains []Chain, path string) string {
	best := ""
	for _, ch := range chains {
		for p, v := range ch.Files {
			if v == path && (best == "" || p < best) {
				best = p
			}
		}
	}
	return best
}

// msSince is the time from a to b in milliseconds, for debug lines.
func msSince(a, b time.Time) float64 { return float64(b.Sub(a).Microseconds()) / 1000 }
