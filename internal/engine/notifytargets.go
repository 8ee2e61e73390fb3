package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/rboinc/rboinc/internal/notifytarget"
	"github.com/rboinc/rboinc/internal/store"
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

// checkNotify checks a submission's -notify targets as written.
func checkNotify(targets []string) error {
	if len(targets) > maxNotifyTargets {
		return errf(KindBadTarget, "too many notification targets: %d (at most %d)", len(targets), maxNotifyTargets)
	}
	for _, t := range targets {
		if _, _, err := notifytarget.Parse(t); err != nil {
			return errf(KindBadTarget, "%v", err)
		}
	}
	return nil
}

// CheckNotifyTarget refuses a target the user may not name: a webhook
// whose host is (or resolves to) an inner address notify_allow does not
// allow, an e-mail address the user has not confirmed.
func (e *Engine) CheckNotifyTarget(ctx context.Context, userID int64, kind, address string) error {
	switch kind {
	case store.NotifyWebhook:
		if err := e.CheckWebhookAddress(ctx, address); err != nil {
			return errf(KindBadTarget, "%v", err)
		}
	case store.NotifyEmail:
		ok, err := e.db.EmailConfirmed(ctx, userID, address)
		if err != nil {
			return err
		}
		if !ok {
			return unconfirmed(address)
		}
	}
	return nil
}

func unconfirmed(address string) error {
	return errf(KindBadTarget, "e-mail address %s is not confirmed: e-mail goes only to addresses you confirmed or the administrator registered. "+
		"Run rboinc-retrieve -confirm-email %s to be mailed a code, then rboinc-retrieve -confirm-email %s -code CODE", address, address, address)
}

// checkSubmissionTargets is CheckNotifyTarget for each of a submission's
// targets (checkNotify has read them).
func (e *Engine) checkSubmissionTargets(ctx context.Context, userID int64, targets []string) error {
	// A few seconds for all the names to resolve, not for each (a name
	// that does not resolve in time is checked when it is called).
	rctx, cancel := context.WithTimeout(ctx, notifyConnect)
	defer cancel()
	for _, t := range targets {
		kind, addr, err := notifytarget.Parse(t)
		if err != nil {
			return errf(KindBadTarget, "%v", err)
		}
		c := ctx
		if kind == store.NotifyWebhook {
			c = rctx
		}
		if err := e.CheckNotifyTarget(c, userID, kind, addr); err != nil {
			return err
		}
	}
	return nil
}

// addSubmissionTargets registers a submission's targets for its group,
// with the default events, all or none.
func (e *Engine) addSubmissionTargets(ctx context.Context, userID int64, group string, targets []string) error {
	var ts []store.NotifyTarget
	for _, t := range targets {
		kind, addr, err := notifytarget.Parse(t)
		if err != nil {
			return errf(KindBadTarget, "%v", err)
		}
		ts = append(ts, store.NotifyTarget{UserID: userID, Group: group, Kind: kind, Address: addr,
			Events: slices.Clone(store.DefaultNotifyEvents)})
	}
	if len(ts) == 0 {
		return nil
	}
	return e.AddNotifyTargets(ctx, ts)
}

// AddNotifyTargets registers targets (checked already) under the user's
// bound, max_notify_targets.
func (e *Engine) AddNotifyTargets(ctx context.Context, ts []store.NotifyTarget) error {
	err := e.db.AddNotifyTargets(ctx, ts, e.Cfg.MaxNotifyTargets)
	switch {
	case errors.Is(err, store.ErrTooManyTargets):
		return errf(KindQuota, "%v (rboinc.json's max_notify_targets): remove some first (rboinc-server user notify --remove)", err)
	case errors.Is(err, store.ErrEmailUnconfirmed):
		addr := strings.TrimPrefix(err.Error(), store.ErrEmailUnconfirmed.Error()+": ")
		return unconfirmed(addr)
	case err != nil:
		return fmt.Errorf("registering notification targets: %w", err)
	}
	return nil
}
