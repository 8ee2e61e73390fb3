package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rboinc/rboinc/internal/words"
	"github.com/rboinc/rboinc/workflow/naming"
	"github.com/rboinc/rboinc/workflow/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

func toUpper(s string) string { return strings.ToUpper(s) }

// Results lists the finished outputs of a group (or one chain) that the
// client has not yet acknowledged, also those of chains still running.
func (e *Engine) Results(ctx context.Context, u store.User, group, name string) (wire.ResultsResponse, error) {
	r := wire.ResultsResponse{Files: []wire.ResultFile{}}
	if err := checkRef(group, name, true); err != nil {
		return r, err
	}
	pend, err := e.DB.PendingResults(ctx, u.ID, group, name)
	if err != nil {
		return r, err
	}
	if len(pend) == 0 {
		chains, err := e.DB.Chains(ctx, u.ID, group, name)
		if err != nil {
			return r, err
		}
		if len(chains) == 0 {
			return r, notFound(group, name)
		}
		return r, nil
	}
	// Keyed by the layout's text: the chains of a group almost always
	// share one, parsed once.
	layouts := map[string]Layout{}
	for _, p := range pend {
		lay, ok := layouts[p.Layout]
		if !ok {
			lay, _ = parseLayout(p.Layout)
			layouts[p.Layout] = lay
		}
		wu, _, _ := naming.ParseResultFile(p.File)
		rf := wire.ResultFile{Group: p.Group, Chain: p.Chain, WU: wu, Step: p.Step, Index: p.Index, Name: p.File, MD5: p.MD5, Size: p.Size,
			Path: wire.PathFiles + "/" + p.Group + "/" + p.File}
		if lo, ok := lay.output(p.Index); ok {
			rf.Aliases, rf.OpenName = lo.Aliases, lo.OpenName
		}
		r.Files = append(r.Files, rf)
	}
	return r, nil
}

// OpenResult opens one pending result file of the user's for reading.
func (e *Engine) OpenResult(ctx context.Context, u store.User, group, file string) (*os.File, store.PendingResult, error) {
	if err := checkRef(group, "", true); err != nil {
		return nil, store.PendingResult{}, err
	}
	if _, _, err := naming.ParseResultFile(file); err != nil || strings.ContainsAny(file, "/\\") {
		return nil, store.PendingResult{}, errf(KindBadRequest, "%q is not a result file name", file)
	}
	p, err := e.DB.PendingResult(ctx, u.ID, group, file)
	if errors.Is(err, store.ErrNotFound) {
		return nil, p, errf(KindNotFound, "no result %s in group %s", file, group)
	}
	if err != nil {
		return nil, p, err
	}
	f, err := os.Open(filepath.Join(e.resultsDir(p.User, group), file))
	if err != nil {
		return nil, p, fmt.Errorf("result %s is recorded but unreadable: %w", file, err)
	}
	return f, p, nil
}

// Ack forgets the result files the client says it has, and only those.
func (e *Engine) Ack(ctx context.Context, u store.User, req wire.AckRequest) (wire.CountResponse, error) {
	if err := checkRef(req.Group, "", true); err != nil {
		return wire.CountResponse{}, err
	}
	for _, f := range req.Files {
		if _, _, err := naming.ParseResultFile(f); err != nil || strings.ContainsAny(f, "/\\") {
			return wire.CountResponse{}, errf(KindBadRequest, "%q is not a result file name", f)
		}
	}
	gone, err := e.DB.Ack(ctx, u.ID, req.Group, req.Files)
	if err != nil {
		return wire.CountResponse{}, err
	}
	dir := e.resultsDir(toUpper(u.Name), req.Group)
	for _, f := range gone {
		if err := os.Remove(filepath.Join(dir, f)); err != nil && !os.IsNotExist(err) {
			e.Log.Warn("ack: removing result", "file", f, "err", err)
		}
	}
	return wire.CountResponse{Count: len(gone), Message: fmt.Sprintf("removed %s from the server", words.Count(len(gone), "file", "files"))}, nil
}
