package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/rboinc/rboinc/workflow/wire"
)

// downloadWorkers bounds parallel downloads.
const downloadWorkers = 4

// RetrieveInput says what to fetch and where.
type RetrieveInput struct {
	Group string
	Name  string // one chain only, when set
	Dir   string // created if needed (when LockFile is set: only to hold a fetched file)
	Tree  bool   // each file into Dir/<chain>/
	Keep  bool   // do not acknowledge: the server keeps the files
	// LockFile is the lock of Dir (RetrieveLockPath; its directory made
	// if needed); empty: Dir/LockName.
	LockFile string
	// PerFile fetches every file with a request of its own, as clients did
	// before wire.PathFilesBulk (for comparisons; an older server is
	// found out without it).
	PerFile bool
	// Consumer is who retrieves (wire.ConsumerMaster; empty for
	// rboinc-retrieve): the server hands and drops only its results.
	Consumer string
	// OnDownload, when set, is called once before downloading with the
	// number of files and bytes to fetch; the progress callback it
	// returns (may be nil) receives byte counts from several goroutines.
	OnDownload func(files int, bytes int64) func(n int64)
}

// FailedFile is one result file that could not be fetched.
type FailedFile struct {
	Name  string `json:"name"`
	Error string `json:"error"`
}

// RetrieveReport is what a retrieval did; its JSON is rboinc-retrieve -json.
type RetrieveReport struct {
	Total        int          `json:"total"`
	Retrieved    int          `json:"retrieved"`
	Present      int          `json:"already_present"`
	Acknowledged int          `json:"acknowledged"`
	Failed       []FailedFile `json:"failed,omitempty"`
}

// Retrieve locks in.Dir, downloads the waiting result files not already
// there (verified, atomically), then, unless in.Keep, acknowledges the
// downloaded and already present ones so the server can drop them. A
// failed download is never acknowledged. When some downloads failed the
// report is returned with an error matching ErrPartial.
func (c *Client) Retrieve(ctx context.Context, in RetrieveInput) (*RetrieveReport, error) {
	lockPath, mkdir := in.LockFile, in.Dir
	if lockPath == "" {
		lockPath = filepath.Join(in.Dir, LockName)
	} else {
		mkdir = filepath.Dir(lockPath)
	}
	if err := os.MkdirAll(mkdir, 0o755); err != nil {
		if mkdir != in.Dir {
			return nil, fmt.Errorf("cannot create the directory of rboinc-retrieve's lock: %w", err)
		}
		return nil, fmt.Errorf("cannot create the download directory: %w", err)
	}
	lock, err := LockFile(lockPath, in.Dir)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()

	res, err := c.ResultsFor(ctx, in.Consumer, in.Group, in.Name)
	if err != nil {
		return nil, fmt.Errorf("listing the results of group %s: %w", in.Group, err)
	}
	rep := &RetrieveReport{Total: len(res.Files)}
	var present []wire.ResultFile
	var todo []wire.ResultFile
	var bytes int64
	listed := dirNames{}
	for _, rf := range res.Files {
		if err := checkResultFile(rf, in.Tree); err != nil {
			rep.Failed = append(rep.Failed, FailedFile{Name: rf.Name, Error: err.Error()})
			continue
		}
		if listed.present(TargetDir(in.Dir, rf, in.Tree), rf) {
			rep.Present++
			present = append(present, rf)
			continue
		}
		todo = append(todo, rf)
		bytes += rf.Size
	}

	// Verified downloads are made durable in batches, in the background
	// (durable.go), before any is acknowledged.
	cm := startCommitter(len(todo))

	var progress func(int64)
	if in.OnDownload != nil && len(todo) > 0 {
		progress = in.OnDownload(len(todo), bytes)
	}
	var dirs sync.Map // directories known to exist
	// Small files first, many to a request; what that does not bring
	// (large files, files left out or damaged, an older server) is
	// fetched a file to a request.
	got := make([]bool, len(todo))
	if !in.PerFile {
		var small []int
		for i, rf := range todo {
			if rf.Size <= bulkFileMax {
				small = append(small, i)
			}
		}
		if len(small) > 0 {
			c.bulkFetch(ctx, in, todo, small, cm, progress, &dirs, got)
		}
	}
	var rest []int
	for i := range todo {
		if !got[i] {
			rest = append(rest, i)
		}
	}
	errs := make([]error, len(todo))
	restErrs := parallel(ctx, len(rest), downloadWorkers, false, func(ctx context.Context, k int) error {
		i := rest[k]
		rf := todo[i]
		dir := TargetDir(in.Dir, rf, in.Tree)
		if _, ok := dirs.Load(dir); !ok {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return fmt.Errorf("cannot create %s: %w", dir, err)
			}
			dirs.Store(dir, true)
		}
		dest := filepath.Join(dir, LocalName(rf))
		tmp, err := c.fetch(ctx, rf, dest, progress, false)
		if err != nil {
			return err
		}
		cm.add(pendingFile{i: i, tmp: tmp, dest: dest, size: rf.Size})
		return nil
	})
	for k, i := range rest {
		errs[i] = restErrs[k]
	}
	commitErrs := cm.wait()
	have := slices.Clip(present) // on disk now: present or downloaded
	for i, err := range errs {
		if err == nil {
			err = commitErrs[i]
		}
		if err != nil {
			rep.Failed = append(rep.Failed, FailedFile{Name: todo[i].Name, Error: err.Error()})
			continue
		}
		rep.Retrieved++
		have = append(have, todo[i])
	}

	// The acknowledgement comes last, in one request: the server deletes
	// the files it names, and deleting while this side creates files on
	// the same disk slows the creation (ext4 without a journal skips the
	// inodes freed in the last minute, one by one).
	var ackErr error
	if !in.Keep && ctx.Err() == nil && len(have) > 0 {
		ackErr = syncPresentFiles(in, present)
		if ackErr == nil {
			rep.Acknowledged, ackErr = c.ackAll(ctx, in.Consumer, in.Group, have)
		}
	}

	var partial error
	if len(rep.Failed) > 0 {
		partial = &kindError{msg: fmt.Sprintf("%d of %d files failed to download", len(rep.Failed), rep.Total), kind: ErrPartial}
	}
	if ctx.Err() != nil {
		return rep, errors.Join(fmt.Errorf("interrupted: %w", ctx.Err()), partial)
	}
	return rep, errors.Join(ackErr, partial)
}

// syncPresentFiles makes the files found already in place durable before
// they are acknowledged: they may come from a run stopped before its sync.
func syncPresentFiles(in RetrieveInput, present []wire.ResultFile) error {
	if len(present) == 0 {
		return nil
	}
	paths := make([]string, len(present))
	for k, rf := range present {
		paths[k] = filepath.Join(TargetDir(in.Dir, rf, in.Tree), LocalName(rf))
	}
	if err := syncPresent(paths); err != nil {
		return fmt.Errorf("the files already here could not be made durable, so the server keeps them: %w", err)
	}
	return nil
}

// ackAll acknowledges files group by group (a listing may span groups).
func (c *Client) ackAll(ctx context.Context, consumer, group string, files []wire.ResultFile) (int, error) {
	byGroup := map[string][]string{}
	var order []string
	for _, rf := range files {
		g := rf.Group
		if g == "" {
			g = group
		}
		if _, ok := byGroup[g]; !ok {
			order = append(order, g)
		}
		byGroup[g] = append(byGroup[g], rf.Name)
	}
	n := 0
	for _, g := range order {
		r, err := c.Ack(ctx, wire.AckRequest{Group: g, Files: byGroup[g], Consumer: consumer})
		if err != nil {
			return n, fmt.Errorf("the files are safe here, but the server could not be told to drop them: %w", err)
		}
		n += r.Count
	}
	return n, nil
}
