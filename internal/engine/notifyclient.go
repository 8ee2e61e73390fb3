package engine

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/rboinc/rboinc/internal/dialguard"
)

// notifyConnect bounds a webhook's name resolution and connection (and
// its TLS handshake): a dead target is given up on quickly.
const notifyConnect = 5 * time.Second

// notifyHTTP is the client webhooks are called with: every address it
// dials is checked by the dial guard at connect time, it uses no proxy
// (which would connect anywhere for it) and follows no redirect (a
// redirect is an answer the target must fix; it could lead anywhere).
func (e *Engine) notifyHTTP() (*http.Client, *dialguard.Policy) {
	e.notifyOnce.Do(func() {
		p, err := dialguard.Parse(e.Cfg.NotifyAllow)
		if err != nil {
			// LoadConfig refuses such a file; a Cfg set otherwise allows nothing.
			e.Log.Error("notify_allow is not valid: no inner address is allowed", "err", err)
			p, _ = dialguard.Parse(nil)
		}
		tr := &http.Transport{
			Proxy:                 nil,
			DialContext:           p.DialContext(notifyConnect),
			TLSHandshakeTimeout:   notifyConnect,
			ResponseHeaderTimeout: notifyTimeout,
			MaxIdleConnsPerHost:   2,
			IdleConnTimeout:       90 * time.Second,
			ForceAttemptHTTP2:     true,
		}
		e.notifyGuard = p
		e.notifyClient = &http.Client{Transport: tr, Timeout: notifyTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	})
	return e.notifyClient, e.notifyGuard
}

// CheckWebhookAddress refuses a webhook URL whose host is (or resolves
// to) an address notifications may not reach, as its registration does.
func (e *Engine) CheckWebhookAddress(ctx context.Context, rawURL string) error {
	_, guard := e.notifyHTTP()
	return CheckWebhookAddress(ctx, guard, rawURL)
}

// CheckWebhookAddress is Engine.CheckWebhookAddress under guard.
func CheckWebhookAddress(ctx context.Context, guard *dialguard.Policy, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return fmt.Errorf("webhook URL %q: %w", rawURL, err)
	}
	if err := guard.CheckHost(ctx, nil, u.Hostname()); err != nil {
		return fmt.Errorf("webhook %s: %w", rawURL, err)
	}
	return nil
}
