package client

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"net/http"
	"net/url"
	"strings"

	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/workflow/wire"
)

// IdentFor turns a batch or job name (any printable text, as HTCondor
// makes them: "condor#host#12#1700000000", "...#12.0") into a group or
// chain name: the name itself when it is one, else its letters, digits and
// underscores followed by a hash of the whole name, so that two names
// never meet. Made names are at most identForMax characters, so that the
// work-unit names built from a group and a chain stay well inside BOINC's.
func IdentFor(name string) string {
	if naming.CheckIdent("name", name) == nil {
		return name
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	sum := md5.Sum([]byte(name))
	h := hex.EncodeToString(sum[:6])
	s := b.String()
	if keep := identForMax - len(h) - 1; len(s) > keep {
		s = s[len(s)-keep:] // the end of HTCondor's names differs most
	}
	return s + "_" + h
}

const identForMax = 40

// Batches lists the user's batches (without their jobs).
func (c *Client) Batches(ctx context.Context) (*wire.BatchesResponse, error) {
	var r wire.BatchesResponse
	if err := c.call(ctx, http.MethodGet, wire.PathBatches, nil, nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// QueryBatches lists the jobs of batches changed since q.MinModTime.
func (c *Client) QueryBatches(ctx context.Context, q wire.BatchQuery) (*wire.BatchesResponse, error) {
	var r wire.BatchesResponse
	if err := c.call(ctx, http.MethodPost, wire.PathBatchQuery, nil, q, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// JobOutput reports a job's outcome and its output files on the server.
func (c *Client) JobOutput(ctx context.Context, job string) (*wire.JobOutput, error) {
	var r wire.JobOutput
	if err := c.call(ctx, http.MethodGet, wire.PathBatchOutput, url.Values{"job": {job}}, nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// AbortJobs aborts jobs of the user's batches.
func (c *Client) AbortJobs(ctx context.Context, jobs []string) (*wire.CountResponse, error) {
	return c.count(ctx, wire.PathBatchAbort, wire.JobsRef{Jobs: jobs})
}

// RetireBatch forgets a batch and frees its files.
func (c *Client) RetireBatch(ctx context.Context, name string) (*wire.CountResponse, error) {
	return c.count(ctx, wire.PathBatchRetire, wire.BatchRef{Name: name})
}

// SetLease sets a batch's lease (seconds since the epoch).
func (c *Client) SetLease(ctx context.Context, name string, lease int64) (*wire.CountResponse, error) {
	return c.count(ctx, wire.PathBatchLease, wire.BatchRef{Name: name, Lease: lease})
}
