package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/rboinc/rboinc/workflow/wire"
)

// Queue describes one application queue, with its parameters.
func (c *Client) Queue(ctx context.Context, name string) (*wire.Queue, error) {
	var q wire.Queue
	if err := c.call(ctx, http.MethodGet, wire.PathQueues+"/"+url.PathEscape(name), nil, nil, &q); err != nil {
		return nil, err
	}
	return &q, nil
}

// Queues lists the application queues the server offers.
func (c *Client) Queues(ctx context.Context) ([]wire.QueueSummary, error) {
	var raw json.RawMessage
	if err := c.call(ctx, http.MethodGet, wire.PathQueues, nil, nil, &raw); err != nil {
		return nil, err
	}
	// wire.go documents no envelope for this list: accept a bare array or
	// {"queues": [...]}.
	var list []wire.QueueSummary
	if err := json.Unmarshal(raw, &list); err == nil {
		return list, nil
	}
	var env struct {
		Queues []wire.QueueSummary `json:"queues"`
	}
	if err := json.Unmarshal(raw, &env); err != nil {
		return nil, fmt.Errorf("the server's list of queues is not valid: %w", err)
	}
	return env.Queues, nil
}

// Missing returns the subset of md5s whose contents the server lacks.
// A long list is asked about in pieces of wire.MaxMissingMD5s, what one
// request may carry.
func (c *Client) Missing(ctx context.Context, md5s []string) ([]string, error) {
	missing := []string{}
	for part := range slices.Chunk(md5s, wire.MaxMissingMD5s) {
		var r wire.MissingResponse
		if err := c.call(ctx, http.MethodPost, wire.PathMissing, nil, wire.MissingRequest{MD5s: part}, &r); err != nil {
			return nil, err
		}
		missing = append(missing, r.Missing...)
	}
	return missing, nil
}

// NewUpload opens a fresh WebDAV collection for the missing contents.
func (c *Client) NewUpload(ctx context.Context) (wire.UploadResponse, error) {
	var r wire.UploadResponse
	err := c.call(ctx, http.MethodPost, wire.PathUploads, nil, struct{}{}, &r)
	return r, err
}

// Submit creates the chains of req (or checks them, in a dry run).
func (c *Client) Submit(ctx context.Context, req wire.SubmitRequest) (*wire.SubmitResponse, error) {
	var r wire.SubmitResponse
	if err := c.call(ctx, http.MethodPost, wire.PathSubmit, nil, req, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// groupQuery builds ?group=G&name=N, leaving out empty values.
func groupQuery(group, name string) url.Values {
	q := url.Values{}
	if group != "" {
		q.Set("group", group)
	}
	if name != "" {
		q.Set("name", name)
	}
	return q
}

// Status reports the chains of a group (all of the user's chains when
// group is empty), or one chain when name is set.
func (c *Client) Status(ctx context.Context, group, name string) (*wire.StatusResponse, error) {
	var r wire.StatusResponse
	if err := c.call(ctx, http.MethodGet, wire.PathStatus, groupQuery(group, name), nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Progress returns the progress of the user's groups (or one), with the
// estimated time to finish each.
func (c *Client) Progress(ctx context.Context, group string) (*wire.ProgressResponse, error) {
	var r wire.ProgressResponse
	if err := c.call(ctx, http.MethodGet, wire.PathProgress, groupQuery(group, ""), nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// StatusBoinc is Status with, for each running chain, its current work
// unit's results in BOINC (as far as the server can read BOINC's database).
func (c *Client) StatusBoinc(ctx context.Context, group, name string) (*wire.StatusResponse, error) {
	var r wire.StatusResponse
	q := groupQuery(group, name)
	q.Set("boinc", "1")
	if err := c.call(ctx, http.MethodGet, wire.PathStatus, q, nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// GridStatus reports the user's groups (or one): chains by state and
// BOINC's counts of their work units. A server without it answers
// ErrNoGridStatus.
func (c *Client) GridStatus(ctx context.Context, group string) (*wire.GridStatusResponse, error) {
	var r wire.GridStatusResponse
	err := c.call(ctx, http.MethodGet, wire.PathGridStatus, groupQuery(group, ""), nil, &r)
	var ae *APIError
	if errors.As(err, &ae) && ae.Code == "" && (ae.Status == http.StatusNotFound || ae.Status == http.StatusMethodNotAllowed) {
		return nil, ErrNoGridStatus
	}
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// ErrNoGridStatus: the server predates PathGridStatus.
var ErrNoGridStatus = errors.New("the server has no grid status")

// Stop stops a group, or one chain of it: no further steps are created.
func (c *Client) Stop(ctx context.Context, ref wire.ChainRef) (*wire.CountResponse, error) {
	var r wire.CountResponse
	if err := c.call(ctx, http.MethodPost, wire.PathStop, nil, ref, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Purge removes a group, or one chain of it, from the server for good.
func (c *Client) Purge(ctx context.Context, ref wire.ChainRef) (*wire.CountResponse, error) {
	var r wire.CountResponse
	if err := c.call(ctx, http.MethodPost, wire.PathPurge, nil, ref, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Results lists the result files waiting on the server.
func (c *Client) Results(ctx context.Context, group, name string) (*wire.ResultsResponse, error) {
	return c.ResultsFor(ctx, wire.ConsumerRetriever, group, name)
}

// ResultsFor is Results for a consumer (wire.ConsumerMaster): the server
// lists only the results that go to it, and refuses another's group.
func (c *Client) ResultsFor(ctx context.Context, consumer, group, name string) (*wire.ResultsResponse, error) {
	q := groupQuery(group, name)
	if consumer != wire.ConsumerRetriever {
		q.Set("consumer", consumer)
	}
	var r wire.ResultsResponse
	if err := c.call(ctx, http.MethodGet, wire.PathResults, q, nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Ack tells the server the client holds these files, so it may drop them.
// A long list goes in pieces of wire.MaxAckFiles, what one request may
// carry; the counts add up.
func (c *Client) Ack(ctx context.Context, req wire.AckRequest) (*wire.CountResponse, error) {
	if len(req.Files) <= wire.MaxAckFiles {
		var r wire.CountResponse
		if err := c.call(ctx, http.MethodPost, wire.PathAck, nil, req, &r); err != nil {
			return nil, err
		}
		return &r, nil
	}
	var n int
	for part := range slices.Chunk(req.Files, wire.MaxAckFiles) {
		var r wire.CountResponse
		if err := c.call(ctx, http.MethodPost, wire.PathAck, nil, wire.AckRequest{Group: req.Group, Files: part}, &r); err != nil {
			return nil, err
		}
		n += r.Count
	}
	return &wire.CountResponse{Count: n, Message: fmt.Sprintf("removed %d file(s) from the server", n)}, nil
}

// Resume sets stopped, failed or aborted chains running again.
func (c *Client) Resume(ctx context.Context, ref wire.ChainRef) (*wire.CountResponse, error) {
	return c.count(ctx, wire.PathResume, ref)
}

// Abort stops chains and cancels their work units in BOINC.
func (c *Client) Abort(ctx context.Context, ref wire.ChainRef) (*wire.CountResponse, error) {
	return c.count(ctx, wire.PathAbort, ref)
}

// Extend adds steps to chains. It is not tried again once the request may
// have reached the server (an answer lost when the server died after
// adding the steps): a second try would add them twice.
func (c *Client) Extend(ctx context.Context, req wire.ExtendRequest) (*wire.CountResponse, error) {
	once := *c
	once.Retry.onlyUnsent = true
	r, err := once.count(ctx, wire.PathExtend, req)
	var api *APIError
	switch {
	case err != nil && !unsent(err) && errors.Is(err, ErrUnreachable):
		return nil, fmt.Errorf("the answer to -extend was lost, the steps may have been added: look at -status before extending again: %w", err)
	case errors.As(err, &api) && api.Code == wire.CodeOutcomeUnknown:
		return nil, fmt.Errorf("the server lost its database while adding the steps, they may have been added: look at -status before extending again: %w", err)
	}
	return r, err
}

// SetPriority gives chains a new base priority (their next steps, and
// their work units BOINC has not sent yet).
func (c *Client) SetPriority(ctx context.Context, req wire.PriorityRequest) (*wire.CountResponse, error) {
	return c.count(ctx, wire.PathPriority, req)
}

func (c *Client) count(ctx context.Context, path string, body any) (*wire.CountResponse, error) {
	var r wire.CountResponse
	if err := c.call(ctx, http.MethodPost, path, nil, body, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Events waits up to wait for the user's events after id (after < 0: none,
// only the newest id, to start from).
func (c *Client) Events(ctx context.Context, after int64, wait time.Duration) (*wire.EventsResponse, error) {
	q := url.Values{}
	if after >= 0 {
		q.Set("after", strconv.FormatInt(after, 10))
	}
	if wait > 0 {
		q.Set("wait", wait.String())
	}
	var r wire.EventsResponse
	if err := c.call(ctx, http.MethodGet, wire.PathEvents, q, nil, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// WhoAmI returns the name of the user the server knows the token as.
func (c *Client) WhoAmI(ctx context.Context) (string, error) {
	var r wire.WhoAmI
	if err := c.call(ctx, http.MethodGet, wire.PathWhoAmI, nil, nil, &r); err != nil {
		return "", err
	}
	return r.User, nil
}
