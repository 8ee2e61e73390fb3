package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rboinc/rboinc/internal/naming"
	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// BulkResults picks the result files of a bulk download (wire.BulkRequest):
// of req.Files, those that are u's, waiting and go to req.Consumer, in
// the order asked; with req.Files nil, the first limit waiting files of
// the group (or chain). Names of other users' files, or of files not
// waiting, are left out without a word, as a file of no one: the answer
// tells nothing of what others have. A group whose results go to another
// consumer is refused, as by Ack.
func (e *Engine) BulkResults(ctx context.Context, u store.User, req wire.BulkRequest, limit int) ([]store.PendingResult, error) {
	if err := checkConsumer(req.Consumer); err != nil {
		return nil, err
	}
	if err := checkRef(req.Group, req.Name, true); err != nil {
		return nil, err
	}
	if req.Files != nil && req.Name != "" {
		return nil, errf(KindBadRequest, "name picks the next waiting files of a chain: give it or files, not both")
	}
	if len(req.Files) > limit {
		return nil, errf(KindTooLarge, "more than %d files in one bulk request", limit)
	}
	for _, f := range req.Files {
		if _, _, err := naming.ParseResultFile(f); err != nil || strings.ContainsAny(f, "/\\") {
			return nil, errf(KindBadRequest, "%q is not a result file name", f)
		}
	}
	if err := e.ownGroup(ctx, u, req.Consumer, req.Group); err != nil {
		return nil, err
	}
	if req.Files == nil {
		return e.db.PendingResultsFirst(ctx, u.ID, req.Consumer, req.Group, req.Name, limit)
	}
	if len(req.Files) == 0 {
		return nil, nil
	}
	return e.db.PendingResultsNamed(ctx, u.ID, req.Consumer, req.Group, req.Files)
}

// OpenPendingResult opens a result file BulkResults picked.
func (e *Engine) OpenPendingResult(p store.PendingResult) (*os.File, error) {
	f, err := os.Open(filepath.Join(e.resultsDir(p.User, p.Group), p.File))
	if err != nil {
		return nil, fmt.Errorf("result %s is recorded but unreadable: %w", p.File, err)
	}
	return f, nil
}
