package client

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/rboinc/rboinc/workflow/wire"
)

// ResumeReport is what a resume with new inputs did.
type ResumeReport struct {
	wire.CountResponse
	UploadedFiles int   `json:"uploaded_files"`
	UploadedBytes int64 `json:"uploaded_bytes"`
	ReusedFiles   int   `json:"reused_files"`
}

// ResumeWithFiles resumes the chains of ref, the step each restarts
// reading the files given (local paths by parameter name) instead of its
// inputs. The files go as a submission's do: hashed, and only the
// contents the server lacks uploaded.
func (c *Client) ResumeWithFiles(ctx context.Context, ref wire.ChainRef, files map[string]string, cache *HashCache) (*ResumeReport, error) {
	req := wire.ResumeRequest{ChainRef: ref, Files: map[string]wire.FileRef{}}
	hasher := newInputHasher(cache)
	hasher.checkFiles = true
	params := make([]string, 0, len(files))
	for p := range files {
		params = append(params, p)
	}
	sort.Strings(params)
	byMD5 := map[string]content{}
	var md5s []string
	for _, p := range params {
		ref, data, err := hasher.hash(files[p])
		var ue *unreadableError
		if errors.As(err, &ue) {
			return nil, Usagef("cannot read -%s %s: %v", p, files[p], ue.reason)
		}
		if err != nil {
			return nil, err
		}
		req.Files[p] = ref
		if _, dup := byMD5[ref.MD5]; !dup {
			byMD5[ref.MD5] = content{path: files[p], ref: ref, data: data}
			md5s = append(md5s, ref.MD5)
		}
	}
	if cache != nil {
		cache.Save()
	}
	rep := &ResumeReport{}
	missing, err := c.Missing(ctx, md5s)
	if err != nil {
		return nil, fmt.Errorf("asking which files the server already has: %w", err)
	}
	var toSend []content
	for _, m := range missing {
		if ct, ok := byMD5[m]; ok {
			toSend = append(toSend, ct)
			rep.UploadedBytes += ct.ref.Size
			delete(byMD5, m)
		}
	}
	rep.UploadedFiles, rep.ReusedFiles = len(toSend), len(md5s)-len(toSend)
	if len(toSend) > 0 {
		var up wire.UploadResponse
		if err := c.upload(ctx, &up, toSend, nil, false); err != nil {
			return nil, err
		}
		req.Upload = up.ID
	}
	var r wire.CountResponse
	if err := c.call(ctx, "POST", wire.PathResume, nil, req, &r); err != nil {
		return nil, err
	}
	rep.CountResponse = r
	return rep, nil
}
