package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// submissionDigest identifies what a chain was submitted as: queue, length,
// priority, work parameters, input layout, templates (their names derive
// from their contents and the options) and every input's content. Two
// submissions with the same digest are the same submission.
func submissionDigest(c store.NewChain) string {
	h := sha256.New()
	parts := []string{"rboinc-submission-1", c.Queue, strconv.Itoa(c.NSteps), strconv.Itoa(c.Priority),
		c.Params, c.Layout, c.WUTmpl, c.ResTmpl, strings.Join(c.Inputs, ",")}
	if c.Args != "" {
		// Only then: the digests of chains without arguments stay as
		// they were before chains had any.
		parts = append(parts, "args", c.Args)
	}
	for _, part := range parts {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// splitResubmitted sorts the chains of a request refused because a name is
// taken: those that exist already from an identical submission (answered
// as made), and those still to make. A name taken by a different chain
// keeps the request refused (taken, the refusal, is returned).
func (e *Engine) splitResubmitted(ctx context.Context, u store.User, group string, chains []store.NewChain, taken error) ([]wire.ChainCreated, []store.NewChain, error) {
	names := make([]string, len(chains))
	for i, c := range chains {
		names[i] = c.Name
	}
	live, err := e.db.LiveByName(ctx, u, group, names)
	if err != nil {
		return nil, nil, err
	}
	var existing []wire.ChainCreated
	var fresh []store.NewChain
	for _, c := range chains {
		lc, ok := live[c.Name]
		switch {
		case !ok:
			fresh = append(fresh, c)
		case lc.Digest != "" && lc.Digest == c.Digest:
			existing = append(existing, wire.ChainCreated{Name: c.Name, FirstWU: lc.FirstWU, Existing: true})
		default:
			return nil, nil, taken
		}
	}
	if len(existing) == 0 {
		return nil, nil, taken // taken meanwhile by a chain since purged, or another race: refuse as before
	}
	e.Log.Info("resubmission of chains that exist already: answered with them", "user", u.Name, "group", group, "existing", len(existing), "new", len(fresh))
	return existing, fresh, nil
}
