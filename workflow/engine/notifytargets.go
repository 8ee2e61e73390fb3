package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/rboinc/rboinc/workflow/notifytarget"
	"github.com/rboinc/rboinc/workflow/store"
)

// maxNotifyTargets bounds the targets one submission may register.
const maxNotifyTargets = 8

// ParseNotifyEvents reads a comma-separated choice of event types ("all"
// for every one; empty: store.DefaultNotifyEvents).
func ParseNotifyEvents(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return slices.Clone(store.DefaultNotifyEvents), nil
	}
	var out []string
	for _, t := range strings.Split(s, ",") {
		t = strings.TrimSpace(t)
		if t != "all" && !slices.Contains(store.EventTypes, t) {
			return nil, fmt.Errorf("unknown event type %q: choose among all, %s", t, strings.Join(store.EventTypes, ", "))
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// checkNotify checks a submission's -notify targets.
func checkNotify(targets []string) error {
	if len(targets) > maxNotifyTargets {
		return errf(KindBadRequest, "too many notification targets: %d (at most %d)", len(targets), maxNotifyTargets)
	}
	for _, t := range targets {
		if _, _, err := notifytarget.Parse(t); err != nil {
			return errf(KindBadRequest, "%v", err)
		}
	}
	return nil
}

// addSubmissionTargets registers a submission's targets for its group,
// with the default events.
func (e *Engine) addSubmissionTargets(ctx context.Context, userID int64, group string, targets []string) error {
	for _, t := range targets {
		kind, addr, err := notifytarget.Parse(t)
		if err != nil {
			return errf(KindBadRequest, "%v", err)
		}
		if err := e.DB.AddNotifyTarget(ctx, store.NotifyTarget{UserID: userID, Group: group, Kind: kind, Address: addr,
			Events: slices.Clone(store.DefaultNotifyEvents)}); err != nil {
			return fmt.Errorf("registering notification target %s: %w", addr, err)
		}
	}
	return nil
}
