package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/rboinc/rboinc/workflow/pool"
	"github.com/rboinc/rboinc/workflow/store"
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
	missing, err := e.DB.PoolMissing(ctx, u.ID, md5s)
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

// NewUpload creates a fresh scratch collection for the user.
func (e *Engine) NewUpload(ctx context.Context, u store.User) (wire.UploadResponse, error) {
	id := newUploadID()
	if err := os.MkdirAll(filepath.Join(e.davDir(u.Name), id), 0o755); err != nil {
		return wire.UploadResponse{}, err
	}
	if err := e.DB.AddUpload(ctx, id, u.ID); err != nil {
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
	owner, err := e.DB.UploadOwner(ctx, id)
	if err != nil || owner != u.ID {
		return wire.CountResponse{}, errf(KindNotFound, "upload %s does not exist", id)
	}
	e.dropUpload(ctx, u, id)
	return wire.CountResponse{Count: 1, Message: "upload " + id + " removed"}, nil
}

// DAVRoot is the directory holding a user's scratch collections.
func (e *Engine) DAVRoot(u store.User) string { return e.davDir(u.Name) }

// Collect removes pool contents nothing refers to any more (untouched for
// grace) and download links no unfinished step reads.
func (e *Engine) Collect(ctx context.Context, grace time.Duration) (int, error) {
	n := 0
	err := e.DB.Collect(ctx, time.Now().Add(-grace).Unix(), func(gone, links []string) error {
		for _, m := range links {
			e.Pool.Unstage(e.Proj, m)
		}
		for _, m := range gone {
			if err := e.Pool.Remove(m); err != nil {
				return err
			}
		}
		n = len(gone)
		return nil
	})
	if err != nil {
		return n, err
	}
	old, err := e.DB.TakeOldUploads(ctx, time.Now().Add(-UploadLifetime).Unix())
	for _, u := range old {
		os.RemoveAll(filepath.Join(e.davDir(u.User), u.ID))
	}
	e.sweepTemps(grace)
	e.forgetEvents(ctx)
	return n, err
}

// forgetEvents removes the events older than event_retention (days,
// default 30).
func (e *Engine) forgetEvents(ctx context.Context) {
	days := e.Cfg.EventRetentionDays
	if days <= 0 {
		days = 30
	}
	if n, err := e.DB.ForgetEvents(ctx, time.Now().AddDate(0, 0, -days).Unix()); err != nil {
		e.Log.Warn("removing old events", "err", err)
	} else if n > 0 {
		e.Log.Info("old events removed", "count", n, "older_than_days", days)
	}
}

// sweepTemps removes, at most once per grace period, the temporary files
// that crashed operations left in the pool, the results area and the
// download hierarchy (only names rboinc gives there: .jf_*).
func (e *Engine) sweepTemps(grace time.Duration) {
	now := time.Now()
	last := e.lastSweep.Load()
	if last != 0 && now.Sub(time.Unix(0, last)) < grace || !e.lastSweep.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	before := now.Add(-max(grace, time.Hour))
	ours := func(name string) bool { return strings.HasPrefix(name, ".jf_") && pool.IsTempName(name) }
	for _, d := range []struct {
		dir   string
		match func(string) bool
	}{{e.Pool.Dir, nil}, {filepath.Join(e.Root, "results"), nil}, {e.Proj.DownloadDir, ours}} {
		n, err := pool.SweepTemps(d.dir, 1, before, d.match)
		if err != nil {
			e.Log.Warn("sweeping temporary files", "dir", d.dir, "err", err)
		}
		if n > 0 {
			e.Log.Info("removed temporary files left by interrupted operations", "dir", d.dir, "files", n)
		}
	}
}

// UploadLifetime is how long an upload collection may wait for its
// submission before collection removes it.
const UploadLifetime = 24 * time.Hour
