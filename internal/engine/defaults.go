package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// defaultEntry caches the MD5 of a server default file by its identity.
type defaultEntry struct {
	mod  time.Time
	size int64
	md5  string
}

// defaultFile finds the server's default content for a name: first
// etc/<queue>/default_<name>, then etc/default_<name> (the original's
// ETC_DIR layout). ok is false when there is none.
func (e *Engine) defaultFile(ctx context.Context, queue, name string) (sum string, size int64, ok bool, err error) {
	for _, p := range []string{
		filepath.Join(e.etcDir(), queue, "default_"+name),
		filepath.Join(e.etcDir(), "default_"+name),
	} {
		fi, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", 0, false, err
		}
		if !fi.Mode().IsRegular() {
			return "", 0, false, fmt.Errorf("default file %s is not a regular file", p)
		}
		e.defaultsMu.Lock()
		c, hit := e.defaults[p]
		e.defaultsMu.Unlock()
		if hit && c.mod.Equal(fi.ModTime()) && c.size == fi.Size() && e.Pool.Has(c.md5) {
			return c.md5, c.size, true, nil
		}
		sum, n, err := e.addFile(ctx, p)
		if err != nil {
			return "", 0, false, fmt.Errorf("default file %s: %w", p, err)
		}
		e.defaultsMu.Lock()
		e.defaults[p] = defaultEntry{mod: fi.ModTime(), size: fi.Size(), md5: sum}
		e.defaultsMu.Unlock()
		return sum, n, true, nil
	}
	return "", 0, false, nil
}

// addFile copies a server-side file into the pool.
func (e *Engine) addFile(ctx context.Context, path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	sum, n, err := e.Pool.WriteContent(f)
	if err != nil {
		return "", 0, err
	}
	return sum, n, e.db.PoolAdd(ctx, sum, n)
}

// encode runs the configured encoder on a pooled content and pools the
// result: `Encoder IN OUT CODE`, argv only, never a shell.
func (e *Engine) encode(ctx context.Context, sum string) (string, int64, error) {
	if e.Cfg.Encoder == "" {
		return "", 0, errors.New("this input must be encoded but the server has no encoder configured (\"encoder\" in rboinc.json)")
	}
	tmp, err := os.MkdirTemp(e.Root, ".enc")
	if err != nil {
		return "", 0, err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "out")
	cmd := exec.CommandContext(ctx, e.Cfg.Encoder, e.Pool.Path(sum), out, e.Cfg.EncodeCode)
	var msg bytes.Buffer
	cmd.Stdout, cmd.Stderr = &msg, &msg
	if err := cmd.Run(); err != nil {
		return "", 0, fmt.Errorf("encoder returned an error (%v): %s", err, strings.TrimSpace(msg.String()))
	}
	return e.addFile(ctx, out)
}
