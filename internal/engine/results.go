package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/internal/words"
	"github.com/rboinc/rboinc/workflow/wire"
)

func toUpper(s string) string { return strings.ToUpper(s) }

// Results lists the finished outputs of a group (or one chain) that the
// client has not yet acknowledged, also those of chains still running,
// for rboinc-retrieve (and the clients that name no consumer).
func (e *Engine) Results(ctx context.Context, u store.User, group, name string) (wire.ResultsResponse, error) {
	return e.resultsOf(ctx, u, wire.ConsumerRetriever, group, name)
}

// ResultsFor is Results for the consumer a client names (wire.Consumer*):
// a group whose results go to another consumer is refused.
func (e *Engine) ResultsFor(ctx context.Context, u store.User, consumer, group, name string) (wire.ResultsResponse, error) {
	if err := checkConsumer(consumer); err != nil {
		return wire.ResultsResponse{Files: []wire.ResultFile{}}, err
	}
	return e.resultsOf(ctx, u, consumer, group, name)
}

func (e *Engine) resultsOf(ctx context.Context, u store.User, consumer, group, name string) (wire.ResultsResponse, error) {
	r := wire.ResultsResponse{Files: []wire.ResultFile{}}
	if err := checkRef(group, name, true); err != nil {
		return r, err
	}
	pend, err := e.db.PendingResultsOf(ctx, u.ID, consumer, group, name)
	if err != nil {
		return r, err
	}
	if len(pend) == 0 {
		chains, err := e.db.Chains(ctx, u.ID, group, name)
		if err != nil {
			return r, err
		}
		if len(chains) == 0 {
			return r, notFound(group, name)
		}
		return r, e.ownGroup(ctx, u, consumer, group)
	}
	query := ""
	if consumer != wire.ConsumerRetriever {
		// The download names its consumer too (older clients name none).
		query = "?consumer=" + consumer
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
			Path: wire.PathFiles + "/" + p.Group + "/" + p.File + query}
		if lo, ok := lay.output(p.Index); ok {
			rf.Aliases, rf.OpenName = lo.Aliases, lo.OpenName
		}
		r.Files = append(r.Files, rf)
	}
	return r, nil
}

// OpenResult opens one pending result file of the user's for reading, of
// a chain whose results go to rboinc-retrieve.
func (e *Engine) OpenResult(ctx context.Context, u store.User, group, file string) (*os.File, store.PendingResult, error) {
	return e.OpenResultFor(ctx, u, wire.ConsumerRetriever, group, file)
}

// OpenResultFor is OpenResult for the consumer the download names (the
// GAHP's too: its paths come from JobOutput).
func (e *Engine) OpenResultFor(ctx context.Context, u store.User, consumer, group, file string) (*os.File, store.PendingResult, error) {
	if err := checkConsumer(consumer); err != nil && consumer != wire.ConsumerBatch {
		return nil, store.PendingResult{}, err
	}
	if err := checkRef(group, "", true); err != nil {
		return nil, store.PendingResult{}, err
	}
	if _, _, err := naming.ParseResultFile(file); err != nil || strings.ContainsAny(file, "/\\") {
		return nil, store.PendingResult{}, errf(KindBadRequest, "%q is not a result file name", file)
	}
	p, err := e.db.PendingResult(ctx, u.ID, consumer, group, file)
	if errors.Is(err, store.ErrNotFound) {
		if err := e.ownGroup(ctx, u, consumer, group); err != nil {
			return nil, p, err
		}
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
	if err := checkConsumer(req.Consumer); err != nil {
		return wire.CountResponse{}, err
	}
	// Refused whole, rather than acknowledging nothing in silence: the
	// client believes in a group that is not its own.
	if err := e.ownGroup(ctx, u, req.Consumer, req.Group); err != nil {
		return wire.CountResponse{}, err
	}
	for _, f := range req.Files {
		if _, _, err := naming.ParseResultFile(f); err != nil || strings.ContainsAny(f, "/\\") {
			return wire.CountResponse{}, errf(KindBadRequest, "%q is not a result file name", f)
		}
	}
	gone, err := e.db.Ack(ctx, u.ID, req.Consumer, req.Group, req.Files)
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
