package engine

import (
	"context"
	"errors"

	"github.com/rboinc/rboinc/internal/store"
	"github.com/rboinc/rboinc/workflow/wire"
)

// Every result has exactly one consumer, which alone lists, downloads and
// acknowledges it: rboinc-retrieve (and the Perl clients: no consumer
// named), the master program whose tag is the group, or the GAHP for a
// batch's group. A chain's consumer is set when it is made, and all the
// live chains of a group share it (store.ErrOtherConsumer), so a group
// belongs to one consumer.

// checkConsumer accepts the consumers a client may name; the GAHP's is
// set by the batch routes, never asked for.
func checkConsumer(c string) error {
	switch c {
	case wire.ConsumerRetriever, wire.ConsumerMaster:
		return nil
	}
	return errf(KindBadRequest, "consumer must be empty or %q, not %q", wire.ConsumerMaster, c)
}

// otherConsumer turns store.ErrOtherConsumer into the requester's error.
func otherConsumer(err error) error {
	if errors.Is(err, store.ErrOtherConsumer) {
		return errf(KindOtherConsumer, "%v", err)
	}
	return err
}

// ownGroup refuses a group whose live chains' results go to another
// consumer than c; a group without chains passes.
func (e *Engine) ownGroup(ctx context.Context, u store.User, c, group string) error {
	got, err := e.db.GroupConsumer(ctx, u.ID, group)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if got != c {
		return errf(KindOtherConsumer, "the results of group %s go to %s, not to %s: each takes only its own results, and a group holds the chains of one of them only",
			group, store.ConsumerName(got), store.ConsumerName(c))
	}
	return nil
}
