package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/templates"
	"github.com/rboinc/rboinc/workflow/wire"
)

// resumeInputs checks the files a resume brings (parameters of the chains'
// queue, as a submission gives them), takes their contents into the pool
// as a submission does (from the upload collection, each checked against
// its MD5, within the user's pool quota), and says which input position
// each replaces. The chains resumed with files must be of one queue whose
// inputs are where they were when the chains were submitted.
func (e *Engine) resumeInputs(ctx context.Context, u store.User, req wire.ResumeRequest, brought *fresh) (*store.NewInputs, error) {
	if len(req.Files) == 0 {
		return nil, errf(KindBadRequest, "an upload collection without files to resume with")
	}
	chains, err := e.db.Chains(ctx, u.ID, req.Group, req.Name)
	if err != nil {
		return nil, err
	}
	var queue string
	var layouts []Layout
	for _, c := range chains {
		if c.State != wire.StateStopped && c.State != wire.StateFailed && c.State != wire.StateAborted {
			continue
		}
		if queue != "" && c.Queue != queue {
			return nil, errf(KindBadRequest, "the chains of group %s to resume are of queues %s and %s: give new inputs to the chains of one queue at a time (-name)", req.Group, queue, c.Queue)
		}
		queue = c.Queue
		l, err := parseLayout(c.Layout)
		if err != nil {
			return nil, fmt.Errorf("chain %s: reading its inputs' layout: %w", c.Name, err)
		}
		layouts = append(layouts, l)
	}
	if queue == "" {
		return nil, errf(KindBadRequest, "%s has no stopped, failed or aborted chain to resume with new inputs", describeRef(req.ChainRef))
	}
	q, err := e.Queues.Get(queue)
	if err != nil {
		if errors.Is(err, templates.ErrUnknownQueue) {
			return nil, errf(KindBadRequest, "queue %s of the chains is no longer on the server: their inputs cannot be replaced", queue)
		}
		return nil, queueMisconfigured(queue, err)
	}
	byName := map[string]templates.Input{}
	var names []string
	for _, in := range q.Parameters() {
		byName[in.Parameter] = in
		names = append(names, "-"+in.Parameter)
	}
	out := &store.NewInputs{At: map[int]string{}}
	given := make([]string, 0, len(req.Files))
	for name := range req.Files {
		given = append(given, name)
	}
	sort.Strings(given)
	for _, name := range given {
		in, ok := byName[name]
		if !ok {
			return nil, errf(KindBadRequest, "queue %s has no parameter -%s (its parameters: %s)", queue, name, strings.Join(names, ", "))
		}
		// The chains read their inputs by position, as the templates had
		// them when they were submitted.
		for _, l := range layouts {
			if in.Position >= len(l.Inputs) || l.Inputs[in.Position].OpenName != in.OpenName {
				return nil, errf(KindBadRequest, "the templates of queue %s changed since the chains were submitted: input -%s cannot be replaced", queue, name)
			}
		}
		out.At[in.Position] = req.Files[name].MD5
	}
	sreq := wire.SubmitRequest{Queue: queue, Group: req.Group, Upload: req.Upload, Chains: []wire.ChainSpec{{Name: "resume", Files: req.Files}}}
	if err := e.checkQuota(ctx, u, sreq); err != nil {
		return nil, err
	}
	if err := e.takeUploads(ctx, u, sreq, nil, brought); err != nil {
		return nil, err
	}
	if req.Upload != "" {
		defer e.dropUpload(ctx, u, req.Upload)
	}
	for _, name := range given {
		in := byName[name]
		if !in.Encode {
			continue
		}
		enc, _, err := e.encode(ctx, out.At[in.Position])
		if err != nil {
			return nil, fmt.Errorf("input %s: %w", name, err)
		}
		out.At[in.Position] = enc
	}
	return out, nil
}

// describeRef names a group, or a chain of it, for a message.
func describeRef(ref wire.ChainRef) string {
	if ref.Name != "" {
		return "chain " + ref.Name + " of group " + ref.Group
	}
	return "group " + ref.Group
}
