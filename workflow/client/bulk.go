package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/rboinc/rboinc/workflow/wire"
)

// Small result files are fetched many to a request (wire.PathFilesBulk):
// for them the request, not the bytes, is the cost, on both sides. A file
// larger than bulkFileMax keeps a request of its own: there the bytes
// dominate, a cut transfer resumes where it stopped (a Range request; a
// bulk answer cut in an entry starts that file over), and downloadWorkers
// of them move at once.
const bulkFileMax = 1 << 20

// A bulk request asks for at most wire.MaxBulkFiles files and about
// bulkRequestBytes (within wire.MaxBulkBytes): a cut answer costs at most
// that much again.
const bulkRequestBytes = 16 << 20

// bulkWorkers is how many bulk requests run at once: one reads the
// answer while the other's server side reads its files.
const bulkWorkers = 2

// errNoBulk: the server predates wire.PathFilesBulk.
var errNoBulk = errors.New("the server has no bulk download")

// bulkPlan splits the files of todo at idx (small ones) into requests:
// one group each, within the bounds, in listing order.
func bulkPlan(todo []wire.ResultFile, idx []int, group string) [][]int {
	var plans [][]int
	open := map[string]int{} // group -> its request being filled
	var bytes []int64
	for _, i := range idx {
		g := todo[i].Group
		if g == "" {
			g = group
		}
		k, ok := open[g]
		if ok && (len(plans[k]) == wire.MaxBulkFiles || bytes[k]+todo[i].Size > bulkRequestBytes) {
			ok = false
		}
		if !ok {
			k = len(plans)
			open[g] = k
			plans = append(plans, nil)
			bytes = append(bytes, 0)
		}
		plans[k] = append(plans[k], i)
		bytes[k] += todo[i].Size
	}
	return plans
}

// bulkFetch fetches the files of todo at idx with bulk requests, hands
// each verified one to cm and marks it in got (by index in todo). What it
// does not get is left to the per-file downloads: files the answer left
// out or that came damaged, the rest of an answer cut short, all of them
// when the server has no bulk download.
func (c *Client) bulkFetch(ctx context.Context, in RetrieveInput, todo []wire.ResultFile, idx []int, cm *committer,
	progress func(int64), dirs *sync.Map, got []bool) {
	plans := bulkPlan(todo, idx, in.Group)
	var none atomic.Bool
	parallel(ctx, len(plans), bulkWorkers, false, func(ctx context.Context, k int) error {
		if none.Load() {
			return nil
		}
		err := c.bulkOnce(ctx, in, todo, plans[k], cm, progress, dirs, got)
		if errors.Is(err, errNoBulk) {
			none.Store(true)
		}
		return err
	})
}

// bulkOnce sends one bulk request and takes in its answer.
func (c *Client) bulkOnce(ctx context.Context, in RetrieveInput, todo []wire.ResultFile, plan []int, cm *committer,
	progress func(int64), dirs *sync.Map, got []bool) error {
	files := make([]wire.ResultFile, len(plan))
	req := wire.BulkRequest{Group: todo[plan[0]].Group, Consumer: in.Consumer, Files: make([]string, len(plan))}
	if req.Group == "" {
		req.Group = in.Group
	}
	for k, i := range plan {
		files[k] = todo[i]
		req.Files[k] = todo[i].Name
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	hr, err := http.NewRequest(http.MethodPost, c.apiURL(wire.PathFilesBulk, nil), bytes.NewReader(body))
	if err != nil {
		return err
	}
	hr.Header.Set("Content-Type", "application/json")
	hr.Header.Set("Accept", wire.BulkContentType)
	resp, err := c.send(ctx, hr)
	var ae *APIError
	if errors.As(err, &ae) && ae.Code == "" && (ae.Status == http.StatusNotFound || ae.Status == http.StatusMethodNotAllowed) {
		return errNoBulk
	}
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != wire.BulkContentType {
		// Not an rboinc answer (a proxy's page): as an older server.
		return errNoBulk
	}
	rcv := newBulkReceiver(files)
	rcv.write = func(k int, content io.Reader) (string, error) {
		return writePartial(files[k], TargetDir(in.Dir, files[k], in.Tree), content, dirs)
	}
	rcv.drop = func(tmp string) { os.Remove(tmp) }
	rcv.accept = func(k int, tmp string) {
		rf := files[k]
		cm.add(pendingFile{i: plan[k], tmp: tmp, dest: filepath.Join(TargetDir(in.Dir, rf, in.Tree), LocalName(rf)), size: rf.Size})
		got[plan[k]] = true
		if progress != nil {
			progress(rf.Size)
		}
	}
	if err := rcv.read(resp.Body); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return c.unreachable(ctx, err)
	}
	return nil
}

// writePartial writes content into rf's temporary name in dir (made if
// needed), as fetch does, unsynced: the committer makes it durable.
func writePartial(rf wire.ResultFile, dir string, content io.Reader, dirs *sync.Map) (string, error) {
	if _, ok := dirs.Load(dir); !ok {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("cannot create %s: %w", dir, err)
		}
		dirs.Store(dir, true)
	}
	path := partialName(filepath.Join(dir, LocalName(rf)), rf)
	f, err := openPartial(path)
	if err == nil {
		if err = f.Truncate(0); err != nil {
			f.Close()
		}
	}
	if err != nil {
		return "", fmt.Errorf("cannot write into %s: %w", dir, err)
	}
	bufp := writeBufs.Get().(*[]byte)
	defer writeBufs.Put(bufp)
	_, err = io.CopyBuffer(onlyWriter{f}, content, *bufp)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return path, fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}

// onlyWriter hides *os.File's ReadFrom, so that CopyBuffer uses the
// buffer given (a whole small file in one write).
type onlyWriter struct{ io.Writer }
