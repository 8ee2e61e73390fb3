package engine

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/rboinc/rboinc/internal/pool"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/templates"
	"github.com/rboinc/rboinc/internal/words"
	"github.com/rboinc/rboinc/workflow/wire"
)

// SubmitInline is Submit for a request whose missing contents follow it in
// the same body (wire.PathSubmitInline): body holds the bytes of each
// req.Inline content, in order, and nothing after them. Each is taken into
// the pool as it streams, checked against its MD5.
func (e *Engine) SubmitInline(ctx context.Context, u store.User, req wire.SubmitRequest, body io.Reader) (wire.SubmitResponse, error) {
	if body == nil {
		body = eofReader{}
	}
	return e.submit(ctx, u, req, body)
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// InlineBytes is what the contents of req.Inline add up to (announced
// sizes; the body must match them exactly).
func InlineBytes(req wire.SubmitRequest) int64 {
	var n int64
	for _, f := range req.Inline {
		n += max(f.Size, 0)
	}
	return n
}

// checkInline refuses, before anything is read, inline contents that the
// request does not use, that repeat, or that pass the per-file limit.
func (e *Engine) checkInline(req wire.SubmitRequest, streamed bool) error {
	if len(req.Inline) == 0 {
		return nil
	}
	if !streamed {
		return errf(KindBadRequest, "inline contents come with %s, not %s", wire.PathSubmitInline, wire.PathSubmit)
	}
	used := map[string]int64{}
	for _, c := range req.Chains {
		for _, f := range c.Files {
			used[f.MD5] = f.Size
		}
	}
	seen := map[string]bool{}
	for _, f := range req.Inline {
		if !pool.ValidMD5(f.MD5) {
			return errf(KindBadRequest, "inline content %q is not an MD5 checksum", f.MD5)
		}
		size, ok := used[f.MD5]
		switch {
		case !ok:
			return errf(KindBadRequest, "inline content %s is no input of any chain of the request", f.MD5)
		case seen[f.MD5]:
			return errf(KindBadRequest, "inline content %s is sent twice", f.MD5)
		case f.Size < 0 || f.Size != size:
			return errf(KindBadRequest, "inline content %s: size %d differs from the %d its chains announce", f.MD5, f.Size, size)
		case e.Cfg.MaxUploadBytes > 0 && f.Size > e.Cfg.MaxUploadBytes:
			return errf(KindTooLarge, "inline content %s has %d bytes: larger than this server accepts for one file (%d bytes, max_upload_bytes)", f.MD5, f.Size, e.Cfg.MaxUploadBytes)
		}
		seen[f.MD5] = true
	}
	return nil
}

// startInline takes user u's inline contents of the request from body into
// the pool; a content the pool already holds is read past, its MD5 checked
// (the sender shows it holds the bytes: see store.PoolOwned). It returns once body is
// read to its end, while the contents may still be being written: see
// intake. Small contents are read whole and written by inlineWorkers in
// parallel (most of a small content's cost is the kernel creating its
// files, which two cores share); larger ones stream straight from the
// request into the pool. Each is also staged for BOINC as it is written,
// unless what is staged is another content (an encoded input) or nothing
// is to be created (a dry run): then the intake is finished before this
// returns, and the submission goes on as after an upload.
//
// Whatever happens, the caller must call finish.
func (e *Engine) startInline(ctx context.Context, u store.User, q *templates.Queue, req wire.SubmitRequest, body io.Reader) (*intake, error) {
	stage := !req.Options.DryRun
	for _, in := range q.Inputs {
		stage = stage && !in.Encode
	}
	// The queue holds every content, so that the body is read to its end
	// while the workers still write (the bytes queued are bounded apart).
	in := &intake{e: e, user: u.ID, stage: stage, jobs: make(chan inlineJob, len(req.Inline)),
		written: map[string]*inlineContent{}, proven: map[string]bool{}, failed: make(chan struct{})}
	in.room = sync.NewCond(&in.mu)
	in.keeping = make(chan struct{})
	go in.keepFresh(in.keeping)
	for range inlineWorkers {
		in.wg.Add(1)
		go in.work()
	}
	err := in.read(ctx, req, body)
	close(in.jobs)
	if err == nil && !stage {
		err = in.waitAll()
	}
	return in, err
}

// read reads body, the request's inline contents one after the other, and
// hands each to the workers (or writes it itself, when it is large).
func (in *intake) read(ctx context.Context, req wire.SubmitRequest, body io.Reader) error {
	e := in.e
	for _, f := range req.Inline {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := in.failure(); err != nil {
			return err
		}
		// Touched rather than only looked at: a pool file no row names (a
		// request killed before recording it) is collected once old, and
		// this one is about to be used and recorded (see Collect).
		if e.Pool.Touch(f.MD5) {
			h := md5.New()
			if n, err := io.CopyN(h, body, f.Size); err != nil {
				return inlineError(f, n, err)
			}
			if got := hex.EncodeToString(h.Sum(nil)); got != f.MD5 {
				return inlineError(f, f.Size, &pool.MismatchError{Want: f.MD5, Got: got})
			}
			in.proven[f.MD5] = true
			in.mu.Lock()
			in.reused = append(in.reused, store.PoolEntry{MD5: f.MD5, Size: f.Size})
			in.mu.Unlock()
			continue
		}
		c := &inlineContent{ref: f, done: make(chan struct{})}
		if f.Size > inlineBuffered {
			in.written[f.MD5] = c
			if err := in.take(body, c); err != nil {
				return err
			}
			continue
		}
		if err := in.reserve(f.Size); err != nil {
			return err
		}
		buf := make([]byte, f.Size)
		if n, err := io.ReadFull(body, buf); err != nil {
			in.release(f.Size)
			return inlineError(f, int64(n), err)
		}
		in.written[f.MD5] = c
		in.jobs <- inlineJob{c: c, buf: buf}
	}
	var one [1]byte
	if n, _ := io.ReadFull(body, one[:]); n > 0 {
		return errf(KindBadRequest, "the request goes on after its %s", words.Count(len(req.Inline), "inline content", "inline contents"))
	}
	return nil
}

// Contents up to inlineBuffered bytes are read whole and handed to one of
// inlineWorkers; at most inlineQueued bytes of them wait at a time.
const (
	inlineBuffered = 256 << 10
	inlineWorkers  = 2
	inlineQueued   = 16 << 20
)

// intake writes a submission's inline contents into the pool (and stages
// them). Once startInline has returned, the contents it writes are known
// (written is no longer changed) and the recording of the chains may start
// while they are still being written: waitStaged follows each, waitAll all
// of them. The contents written go into the pool's index with the chains
// (pooled), or by finish when the chains were not recorded.
type intake struct {
	e       *Engine
	user    int64 // the sender, who owns what it sends
	stage   bool
	jobs    chan inlineJob
	wg      sync.WaitGroup
	written map[string]*inlineContent // the contents this intake writes, by MD5
	proven  map[string]bool           // contents the pool held, their bytes sent and checked

	mu       sync.Mutex
	room     *sync.Cond // signalled when queued bytes are written
	queued   int64      // bytes read and not yet written
	added    []store.PoolEntry
	reused   []store.PoolEntry // the proven contents: indexed too, never dropped
	err      error
	failed   chan struct{} // closed when err is set
	recorded bool          // added went into the index with the chains

	finished sync.Once
	finErr   error
	keeping  chan struct{} // closed by finish: stops keepFresh
}

// keepFresh touches the contents the intake wrote or found, at a quarter
// of collection's minimum age, until finish: a body read over more than
// that age (a big submission over a slow link) would otherwise leave its
// first contents, written but not yet recorded, to collection of the pool
// files no row names (unindexed.go).
func (in *intake) keepFresh(stop <-chan struct{}) {
	every := minUnindexedAge() / 4
	if every <= 0 {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			for _, p := range in.pooled() {
				in.e.Pool.Touch(p.MD5)
			}
		}
	}
}

// inlineContent is one content the intake writes; done is closed once it
// is in the pool (and staged, when the intake stages).
type inlineContent struct {
	ref  wire.FileRef
	done chan struct{}
}

type inlineJob struct {
	c   *inlineContent
	buf []byte // the content, read whole
}

func (in *intake) work() {
	defer in.wg.Done()
	for j := range in.jobs {
		if in.failure() == nil {
			in.take(bytes.NewReader(j.buf), j.c)
		}
		in.release(int64(len(j.buf)))
	}
}

// reserve waits until n more bytes may be queued (any amount when none
// are), or the intake failed.
func (in *intake) reserve(n int64) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	for in.err == nil && in.queued > 0 && in.queued+n > inlineQueued {
		in.room.Wait()
	}
	if in.err != nil {
		return in.err
	}
	in.queued += n
	return nil
}

func (in *intake) release(n int64) {
	in.mu.Lock()
	in.queued -= n
	in.mu.Unlock()
	in.room.Broadcast()
}

// take writes one content from r, stages it when asked, and notes it.
func (in *intake) take(r io.Reader, c *inlineContent) error {
	f := c.ref
	if err := in.e.Pool.WriteVerified(r, f.MD5, f.Size); err != nil {
		return in.fail(inlineError(f, -1, err))
	}
	in.mu.Lock()
	in.added = append(in.added, store.PoolEntry{MD5: f.MD5, Size: f.Size})
	in.mu.Unlock()
	if in.stage {
		if _, err := in.e.Pool.Stage(in.e.Proj, f.MD5, f.Size); err != nil {
			return in.fail(err)
		}
		if inlineStaged != nil {
			inlineStaged(in.e, f.MD5)
		}
	}
	close(c.done)
	return nil
}

// inlineStaged, when set (by tests only), is called as each inline content
// is staged.
var inlineStaged func(e *Engine, sum string)

func (in *intake) fail(err error) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.err == nil {
		in.err = err
		close(in.failed)
		in.room.Broadcast()
	}
	return in.err
}

func (in *intake) failure() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.err
}

// provides tells whether this intake writes (and stages) content sum, and
// its size. A nil intake provides nothing.
func (in *intake) provides(sum string) (int64, bool) {
	if in == nil || !in.stage {
		return 0, false
	}
	c, ok := in.written[sum]
	if !ok {
		return 0, false
	}
	return c.ref.Size, true
}

// sent tells whether the request sent content sum's bytes (written, being
// written, or checked against a copy the pool holds). A nil intake sent
// nothing.
func (in *intake) sent(sum string) bool {
	if in == nil {
		return false
	}
	_, ok := in.written[sum]
	return ok || in.proven[sum]
}

// waitStaged waits until content sum (one the intake provides) is in the
// pool and staged, the intake failed, or ctx ended.
func (in *intake) waitStaged(ctx context.Context, sum string) error {
	c := in.written[sum]
	select {
	case <-c.done:
		return nil
	default:
	}
	select {
	case <-c.done:
		return nil
	case <-in.failed:
		return in.failure()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// waitAll waits until every content is written (startInline has ended the
// workers' queue) and returns the first failure.
func (in *intake) waitAll() error {
	in.wg.Wait()
	return in.failure()
}

// pooled hands the contents written and those found in the pool to the
// recording of the chains, which puts them into the pool's index in its
// own transaction; markRecorded says that transaction committed. A content
// found in the pool directory may have no row (a request killed between
// writing it and recording it): used without one, nothing would ever
// collect it.
func (in *intake) pooled() []store.PoolEntry {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append(append([]store.PoolEntry(nil), in.added...), in.reused...)
}

// brought is the contents this intake wrote into the pool: what a failed
// request takes out again (not those it found there: others may use them).
func (in *intake) brought() []string {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make([]string, len(in.added))
	for i, p := range in.added {
		out[i] = p.MD5
	}
	return out
}

func (in *intake) markRecorded() {
	in.mu.Lock()
	in.recorded = true
	in.mu.Unlock()
}

// finish waits for the workers and, unless the chains' recording did,
// records the contents written in the pool's index: also when a later
// content failed or the client went away, since what is in the pool
// directory must be in its index. It returns the intake's failure, or the
// index's. Later calls return the same.
func (in *intake) finish(ctx context.Context) error {
	in.finished.Do(func() {
		defer close(in.keeping)
		err := in.waitAll()
		in.mu.Lock()
		recorded := in.recorded
		in.mu.Unlock()
		if !recorded {
			// The chains were not recorded (which would have made them
			// the user's): they are the user's all the same, who sent them.
			// Those found in the pool are indexed again with them: an
			// owner row of a content without its pool row would stay.
			ctx := context.WithoutCancel(ctx)
			if aerr := in.e.db.PoolAddOwned(ctx, in.user, in.pooled()); aerr != nil && err == nil {
				err = aerr
			}
		}
		in.finErr = err
	})
	return in.finErr
}

// inlineError words a failed inline content for the sender.
func inlineError(f wire.FileRef, n int64, err error) error {
	var mm *pool.MismatchError
	switch {
	case errors.As(err, &mm):
		return errf(KindBadRequest, "inline content %s: the bytes sent have MD5 %s; nothing was submitted", f.MD5, mm.Got)
	case errors.Is(err, pool.ErrShortContent), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		if n >= 0 {
			return errf(KindBadRequest, "the request ended inside inline content %s (%d of %d bytes); nothing was submitted", f.MD5, n, f.Size)
		}
		return errf(KindBadRequest, "the request ended inside inline content %s: %v; nothing was submitted", f.MD5, err)
	}
	return err
}
