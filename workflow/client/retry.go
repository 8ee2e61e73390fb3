package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/rboinc/rboinc/workflow/wire"
)

// RetryPolicy says how a request that failed for a passing reason is tried
// again: a refused or reset connection, an answer lost on the way (the
// server died between doing the work and answering; every request rboinc
// retries is safe to repeat, submissions included), a proxy's 502, 503 or
// 504, or 429 (too many requests at once). Others (a refusal, a bad token,
// an unknown host) are final at once. Extend is the exception: adding
// steps twice is not the same as once, so it is tried again only when the
// server surely did not do it (see onlyUnsent).
type RetryPolicy struct {
	Attempts int           // tries in all; 1 tries once
	First    time.Duration // wait before the second try; doubled each time, with jitter
	Max      time.Duration // longest wait
	// OnRetry, when set, hears of each retry before its wait (the clients
	// print a line on a terminal, nothing under cron).
	OnRetry func(attempt int, err error, wait time.Duration)
	// onlyUnsent tries again only a request the server did not do: one
	// whose connection was never made, or that the rboinc server refused
	// with 503 or 429; not one whose answer was lost, nor a proxy's 502
	// or 504 (the server behind it may have done it).
	onlyUnsent bool
}

// DefaultRetry tries 6 times over about half a minute; RBOINC_RETRIES sets
// the number of retries (0: none).
func DefaultRetry() RetryPolicy {
	p := RetryPolicy{Attempts: 6, First: 500 * time.Millisecond, Max: 10 * time.Second}
	if v := os.Getenv("RBOINC_RETRIES"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			p.Attempts = n + 1
		}
	}
	return p
}

// Transient tells whether err is worth another try.
func Transient(err error) bool {
	var api *APIError
	if errors.As(err, &api) {
		if api.Code == wire.CodeUploadOffset {
			return true // ask where the server's part ends, and go on from there
		}
		switch api.Status {
		case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout, http.StatusTooManyRequests:
			return true
		}
		return false
	}
	if !errors.Is(err, ErrUnreachable) {
		return false
	}
	// A certificate the client does not trust stays untrusted: asking
	// again only delays the message that says so.
	var unknownCA x509.UnknownAuthorityError
	var hostname x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	if errors.As(err, &unknownCA) || errors.As(err, &hostname) || errors.As(err, &invalid) || errors.As(err, &verify) {
		return false
	}
	var dns *net.DNSError
	return !errors.As(err, &dns) || dns.IsTemporary
}

// again tells whether the attempt-th try's failure is tried again.
func (p RetryPolicy) again(ctx context.Context, attempt int, err error) bool {
	if p.onlyUnsent && !unsent(err) {
		return false
	}
	return ctx.Err() == nil && attempt < p.Attempts && Transient(err)
}

// unsent tells whether a failed request surely was not done by the server:
// its connection was never made, or the server refused it as busy (not a
// 503 outcome_unknown: its database went away during the commit).
func unsent(err error) bool {
	var api *APIError
	if errors.As(err, &api) {
		if api.Code == wire.CodeOutcomeUnknown {
			return false // the server may have done it before its database went away
		}
		return api.Status == http.StatusServiceUnavailable || api.Status == http.StatusTooManyRequests
	}
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// wait sleeps before try attempt+1, or returns ctx's error.
func (p RetryPolicy) wait(ctx context.Context, attempt int, err error) error {
	d := p.First
	for i := 1; i < attempt && d < p.Max; i++ {
		d *= 2
	}
	d = min(d, p.Max)
	d = d/2 + time.Duration(rand.Int64N(int64(d)/2+1)) // jitter: clients that failed together do not return together
	var api *APIError
	if errors.As(err, &api) && api.RetryAfter > d {
		d = min(api.RetryAfter, 2*p.Max)
	}
	if p.OnRetry != nil {
		p.OnRetry(attempt, err, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("interrupted: %w", ctx.Err())
	case <-t.C:
		return nil
	}
}

// Retrying runs try (a request whose body is a stream it makes anew each
// time) until it succeeds, fails for good, or the tries run out.
func (c *Client) Retrying(ctx context.Context, try func() error) error {
	for attempt := 1; ; attempt++ {
		err := try()
		if err == nil || !c.Retry.again(ctx, attempt, err) {
			return err
		}
		if werr := c.Retry.wait(ctx, attempt, err); werr != nil {
			return werr
		}
	}
}
