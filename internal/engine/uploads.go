package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/rboinc/rboinc/internal/pool"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// Missing says which of the contents user u lacks: those the pool does
// not hold, and those it holds that u has never sent nor used (see
// store.PoolMissing), so that nobody learns from it what another user has.
func (e *Engine) Missing(ctx context.Context, u store.User, md5s []string) (wire.MissingResponse, error) {
	r := wire.MissingResponse{Missing: []string{}}
	if len(md5s) > wire.MaxMissingMD5s {
		return r, errf(KindTooLarge, "too many checksums in one request: %d (at most %d)", len(md5s), wire.MaxMissingMD5s)
	}
	for _, m := range md5s {
		if !pool.ValidMD5(m) {
			return r, errf(KindBadRequest, "%q is not an MD5 checksum (32 lowercase hex digits)", m)
		}
	}
	missing, err := e.db.PoolMissing(ctx, u.ID, md5s)
	if err != nil {
		return r, err
	}
	isMissing := map[string]bool{}
	for _, m := range missing {
		isMissing[m] = true
	}
	for _, m := range md5s {
		if isMissing[m] || !e.Pool.Has(m) {
			r.Missing = append(r.Missing, m)
		}
	}
	return r, nil
}

// NewUpload creates a fresh scratch collection for the user, if they have
// fewer than max_open_uploads open.
func (e *Engine) NewUpload(ctx context.Context, u store.User) (wire.UploadResponse, error) {
	id := newUploadID()
	open, err := e.db.AddUpload(ctx, id, u.ID, e.Cfg.MaxOpenUploads)
	if errors.Is(err, store.ErrLimit) {
		return wire.UploadResponse{}, errf(KindQuota, "you have %d upload collections open, the most this server allows (max_open_uploads): submit with them, or discard them, before opening more (unused ones are removed after %v untouched)", open, UploadLifetime)
	}
	if err != nil {
		return wire.UploadResponse{}, err
	}
	if err := os.MkdirAll(filepath.Join(e.davDir(u.Name), id), 0o755); err != nil {
		e.db.DeleteUpload(ctx, id)
		return wire.UploadResponse{}, err
	}
	return wire.UploadResponse{ID: id, DAVPath: wire.DAVPrefix + u.Name + "/" + id + "/"}, nil
}

// DiscardUpload removes one of the user's upload collections, with what it
// holds: the client gives up on a submission whose uploads failed. It needs
// no WebDAV (which may be what failed).
func (e *Engine) DiscardUpload(ctx context.Context, u store.User, id string) (wire.CountResponse, error) {
	if !validUploadID(id) {
		return wire.CountResponse{}, errf(KindBadRequest, "%q is not a valid upload id", id)
	}
	owner, err := e.db.UploadOwner(ctx, id)
	if err != nil || owner != u.ID {
		return wire.CountResponse{}, errf(KindNotFound, "upload %s does not exist", id)
	}
	e.dropUpload(ctx, u, id)
	return wire.CountResponse{Count: 1, Message: "upload " + id + " removed"}, nil
}

// DAVRoot is the directory holding a user's scratch collections.
func (e *Engine) DAVRoot(u store.User) string { return e.davDir(u.Name) }

// Collect removes pool contents nothing refers to any more (untouched for
// grace), download links no unfinished step reads, result files no
// unacknowledged result nor waiting step refers to (resultorphans.go), and
// pool files no row names (unindexed.go).
func (e *Engine) Collect(ctx context.Context, grace time.Duration) (int, error) {
	n := 0
	err := e.db.Collect(ctx, time.Now().Add(-grace).Unix(), func(gone, links []string) error {
		claimed := e.legacyLinksClaimed(ctx, links)
		for _, m := range links {
			e.Pool.Unstage(e.Proj, m, claimed[m])
		}
		for _, m := range gone {
			if err := e.Pool.Remove(m); err != nil {
				return err
			}
		}
		n += len(gone)
		return nil
	})
	if err != nil {
		return n, err
	}
	e.expireUploads(ctx, time.Now().Add(-UploadLifetime))
	if k, err := e.removeOrphanResults(ctx, grace); err != nil {
		e.Log.Warn("looking for result files nothing refers to", "err", err)
	} else if k > 0 {
		e.Log.Info("removed result files nothing refers to (left by an acknowledgement or purge interrupted by a crash)", "files", k)
	}
	e.sweepTemps(grace)
	e.collectUnindexed(ctx, grace)
	e.forgetEvents(ctx)
	e.forgetPurgedSteps(ctx, grace)
	return n, err
}

// forgetPurgedSteps deletes the steps (and attempts) of chains purged more
// than grace ago that BOINC no longer holds, a batch of chains per pass
// (docs/operations.md, "What a purge leaves").
func (e *Engine) forgetPurgedSteps(ctx context.Context, grace time.Duration) {
	next, n, err := e.db.ForgetPurgedSteps(ctx, time.Now().Add(-grace).Unix(), e.purgedCursor.Load())
	if err != nil {
		e.Log.Warn("forgetting the steps of purged chains", "err", err)
		return
	}
	e.purgedCursor.Store(next)
	if n > 0 {
		e.Log.Info("forgot the ended steps of purged chains", "steps", n)
	}
}

// forgetEvents removes the events older than event_retention (days,
// default 30).
func (e *Engine) forgetEvents(ctx context.Context) {
	days := e.Cfg.EventRetentionDays
	if days <= 0 {
		days = 30
	}
	if n, err := e.db.ForgetEvents(ctx, time.Now().AddDate(0, 0, -days).Unix()); err != nil {
		e.Log.Warn("removing old events", "err", err)
	} else if n > 0 {
		e.Log.Info("old events removed", "count", n, "older_than_days", days)
	}
}

// sweepTemps removes, at most once per grace period, the temporary files
// that crashed operations left in the pool, the results area and the
// download hierarchy (only names rboinc gives there: .rboinc_*, and .jf_*
// of the work units made before rboinc had a namespace of its own).
func (e *Engine) sweepTemps(grace time.Duration) {
	now := time.Now()
	last := e.lastSweep.Load()
	if last != 0 && now.Sub(time.Unix(0, last)) < grace || !e.lastSweep.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	before := now.Add(-max(grace, time.Hour))
	for _, d := range []struct {
		dir   string
		match func(string) bool
	}{{e.Pool.Dir, nil}, {filepath.Join(e.Root, "results"), nil}, {e.Proj.DownloadDir, pool.IsDownloadTempName}} {
		n, err := pool.SweepTemps(d.dir, 1, before, d.match)
		if err != nil {
			e.Log.Warn("sweeping temporary files", "dir", d.dir, "err", err)
		}
		if n > 0 {
			e.Log.Info("removed temporary files left by interrupted operations", "dir", d.dir, "files", n)
		}
	}
}

// UploadLifetime is how long an upload collection may stay untouched (no
// file added or grown in it) before collection removes it, with its
// partial contents.
const UploadLifetime = 24 * time.Hour

// expireUploads removes the upload collections created before cutoff and
// untouched since: a client uploading for longer keeps its collection.
func (e *Engine) expireUploads(ctx context.Context, cutoff time.Time) {
	old, err := e.db.OldUploads(ctx, cutoff.Unix())
	if err != nil {
		e.Log.Warn("looking for upload collections left behind", "err", err)
		return
	}
	n := 0
	for _, u := range old {
		dir := filepath.Join(e.davDir(u.User), u.ID)
		if touchedSince(dir, cutoff) {
			continue
		}
		if err := e.db.DeleteUpload(ctx, u.ID); err != nil {
			e.Log.Warn("forgetting an upload collection left behind", "upload", u.ID, "err", err)
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			e.Log.Warn("removing an upload collection left behind", "dir", dir, "err", err)
		}
		n++
	}
	if n > 0 {
		e.Log.Info("removed upload collections left untouched", "count", n, "untouched_for", UploadLifetime)
	}
}

// touchedSince tells whether the collection dir or a file directly in it
// (a content put in place, a partial one growing) changed after t.
func touchedSince(dir string, t time.Time) bool {
	fi, err := os.Lstat(dir)
	if err != nil {
		return false
	}
	if fi.ModTime().After(t) {
		return true
	}
	ents, _ := os.ReadDir(dir)
	for _, d := range ents {
		if fi, err := d.Info(); err == nil && fi.ModTime().After(t) {
			return true
		}
	}
	return false
}
