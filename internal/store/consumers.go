package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ErrOtherConsumer: the group's live chains have another consumer than the
// one asking (a master's tag for rboinc-retrieve, a batch's group for a
// master, ...). Every result has exactly one consumer, and all the live
// chains of a group share theirs.
var ErrOtherConsumer = errors.New("the group's results go to another consumer")

// ConsumerName words a consumer for the person reading an error.
func ConsumerName(consumer string) string {
	switch consumer {
	case "":
		return "rboinc-retrieve (chains submitted with rboinc-submit)"
	case "master":
		return "a master program (the group is its tag)"
	case "batch":
		return "the GAHP (the group is an HTCondor batch's)"
	}
	return fmt.Sprintf("consumer %q", consumer)
}

// GroupConsumer is the consumer of a user's group (that of its live
// chains); ErrNotFound when it has none.
func (d *DB) GroupConsumer(ctx context.Context, userID int64, group string) (string, error) {
	var c string
	err := d.queryRow(ctx, `SELECT consumer FROM chains WHERE user_id = ? AND grp = ? AND state != 'purged' LIMIT 1`, userID, group).Scan(&c)
	if err == sql.ErrNoRows {
		return "", ErrNotFound
	}
	return c, err
}

// checkConsumers refuses, inside a submission's transaction, chains whose
// group has live chains of another consumer, or a submission mixing
// consumers in one group.
func checkConsumers(ctx context.Context, st *stmtCache, userID int64, chains []NewChain) error {
	want := map[string]string{}
	for _, nc := range chains {
		c, ok := want[nc.Group]
		if !ok {
			want[nc.Group] = nc.Consumer
			continue
		}
		if c != nc.Consumer {
			return fmt.Errorf("group %s: one submission gives its chains two consumers: %w", nc.Group, ErrOtherConsumer)
		}
	}
	for group, consumer := range want {
		// One live chain tells the group's consumer: this check keeps them
		// all the same (a scan for a different one would read the whole
		// group at every submission).
		var other string
		err := st.QueryRowContext(ctx, `SELECT consumer FROM chains WHERE user_id = ? AND grp = ? AND state != 'purged' LIMIT 1`,
			userID, group).Scan(&other)
		if err == sql.ErrNoRows || (err == nil && other == consumer) {
			continue
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("the results of group %s go to %s, not to %s: give this submission a group (tag) of its own: %w",
			group, ConsumerName(other), ConsumerName(consumer), ErrOtherConsumer)
	}
	return nil
}
