package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rboinc/rboinc/workflow/wire"
)

// Client is a connection to one rboinc server as one user.
type Client struct {
	Base  *url.URL // e.g. http://host:8080/rboinc_cgi, without trailing slash
	Token string
	HTTP  *http.Client
	// Retry says how requests that failed for a passing reason are tried
	// again (see retry.go).
	Retry RetryPolicy
}

// New checks baseURL and returns a Client sending token with every request.
func New(baseURL, token string) (*Client, error) {
	if baseURL == "" {
		return nil, Usagef("no server address: give -url or set RBOINC_URL")
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, Usagef("server address %q is not a URL: %v", baseURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, Usagef("server address %q must look like http://host:port/rboinc_cgi", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, Usagef("server address %q must not have a query or fragment", baseURL)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	tr := http.DefaultTransport.(*http.Transport).Clone()
	// Uploads and downloads run in parallel against one host.
	tr.MaxIdleConnsPerHost = 8
	// A server that accepts a request and never answers would otherwise
	// hold rboinc-retrieve (and its lock) forever under cron. Generous:
	// a submission of many chains takes the server a while.
	tr.ResponseHeaderTimeout = 10 * time.Minute
	return &Client{Base: u, Token: token, HTTP: &http.Client{Transport: tr}, Retry: DefaultRetry()}, nil
}

// APIError is a non-2xx answer of the server.
type APIError struct {
	Status     int
	Code       string // wire.Code*, or "" when the body was not a wire.Error
	Message    string
	RetryAfter time.Duration // from a Retry-After header in seconds, 0 when none
	Missing    []string      // wire.Error.Missing: the contents a submission lacks, when listed
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	switch {
	case e.Code == wire.CodeQuotaExceeded || e.Code == wire.CodeTooLarge:
		return "refused by the server's limits: " + msg
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden:
		return "authentication failed: " + msg + " (check -authenticator or RBOINC_TOKEN)"
	case e.Status == http.StatusInsufficientStorage:
		if e.Code == wire.CodeNoSpace {
			return msg
		}
		return "the server's disk is full (HTTP 507): " + msg + "; try again once space has been freed"
	case e.Status >= 500:
		return fmt.Sprintf("the rboinc server failed (HTTP %d): %s", e.Status, msg)
	}
	return msg
}

// ErrUnreachable is matched (errors.Is) by every failure to talk to the
// server at all: refused connection, unknown host, broken transfer.
var ErrUnreachable = errors.New("rboinc server unreachable")

type unreachableError struct {
	base string
	err  error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("cannot reach the rboinc server at %s: %s", e.base, describeNetErr(e.err))
}
func (e *unreachableError) Unwrap() error        { return e.err }
func (e *unreachableError) Is(target error) bool { return target == ErrUnreachable }

// describeNetErr keeps the part of a transport error a person can act on
// ("connection refused") rather than Go's full chain of operations.
func describeNetErr(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.Error()
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// unreachable wraps a transport error, leaving cancellation recognisable.
func (c *Client) unreachable(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("interrupted: %w", ctx.Err())
	}
	return &unreachableError{base: c.Base.String(), err: err}
}

// apiURL joins an API path (already escaped) and a query to the base URL.
func (c *Client) apiURL(path string, q url.Values) string {
	s := c.Base.String() + path
	if len(q) > 0 {
		s += "?" + q.Encode()
	}
	return s
}

// hostURL is an absolute path on the server's host, outside the base path.
func (c *Client) hostURL(path string) string {
	u := url.URL{Scheme: c.Base.Scheme, Host: c.Base.Host, Path: path}
	return u.String()
}

// send performs one authenticated request and turns non-2xx answers into
// *APIError. On success the caller owns resp.Body.
func (c *Client) send(ctx context.Context, req *http.Request) (*http.Response, error) {
	for attempt := 1; ; attempt++ {
		resp, err := c.sendOnce(ctx, req)
		if err == nil || !c.Retry.again(ctx, attempt, err) {
			return resp, err
		}
		if req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return resp, err // a stream: its caller starts it again
			}
			body, gerr := req.GetBody()
			if gerr != nil {
				return resp, err
			}
			req.Body = body
		}
		if werr := c.Retry.wait(ctx, attempt, err); werr != nil {
			return nil, werr
		}
	}
}

// sendOnce performs one authenticated request and turns non-2xx answers
// into *APIError.
func (c *Client) sendOnce(ctx context.Context, req *http.Request) (*http.Response, error) {
	req = req.WithContext(ctx)
	if c.Token != "" && req.Header.Get("Authorization") == "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, c.unreachable(ctx, err)
	}
	slog.Debug("http", "method", req.Method, "url", req.URL.String(), "status", resp.StatusCode)
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	e := decodeError(resp)
	if api := resp.Header.Get(wire.HeaderAPIBase); e.Status == http.StatusNotFound && (e.Code == "" || api != "") {
		e.Message = strings.TrimSpace(e.Message + " " + c.pathHint(ctx, api))
	}
	return nil, e
}

// pathHint names the API's URL when the base URL is not it: from the
// path the server says its API has (api, from wire.HeaderAPIBase), else,
// for a server that answers 404 without an rboinc error (a web server
// in front of the CGI program), the first of HOST/rboinc_cgi and
// BASE/rboinc_cgi that answers as rboinc does.
func (c *Client) pathHint(ctx context.Context, api string) string {
	if c.Base == nil {
		return ""
	}
	base := strings.TrimSuffix(c.Base.String(), "/")
	root := *c.Base
	root.Path, root.RawPath, root.RawQuery, root.Fragment = "", "", "", ""
	var want string
	switch {
	case api != "":
		if !strings.HasPrefix(api, "/") {
			return ""
		}
		want = root.String() + api
	case strings.HasSuffix(strings.TrimSuffix(c.Base.Path, "/"), "/rboinc_cgi"):
		return ""
	default:
		want = root.String() + "/rboinc_cgi"
		for _, try := range []string{want, base + "/rboinc_cgi"} {
			if c.alive(ctx, try) {
				want = try
				break
			}
		}
	}
	if want == base {
		return ""
	}
	return "(" + base + " is not an rboinc API: did you mean " + want + "?)"
}

// alive tells whether url answers as the base of an rboinc API (its
// liveness probe), within a few seconds.
func (c *Client) alive(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 256))
	return resp.StatusCode == http.StatusOK && strings.Contains(string(b), "boinc CGI is alive")
}

// decodeError reads a wire.Error body, or keeps a short excerpt of
// whatever else came back (a proxy's HTML page, say).
func decodeError(resp *http.Response) *APIError {
	// Room for a missing_content answer's list (wire.MaxMissingListed).
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096+40*wire.MaxMissingListed))
	e := &APIError{Status: resp.StatusCode}
	if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
		e.RetryAfter = time.Duration(secs) * time.Second
	}
	var we wire.Error
	if json.Unmarshal(body, &we) == nil && (we.Error != "" || we.Code != "") {
		e.Code, e.Message, e.Missing = we.Code, we.Error, we.Missing
		return e
	}
	msg := htmlReason(string(body))
	if msg == "" {
		msg = strings.Join(strings.Fields(string(body)), " ")
	}
	if len(msg) > 200 {
		msg = msg[:200] + "..."
	}
	switch status := http.StatusText(resp.StatusCode); {
	case msg == "":
	case strings.HasPrefix(msg, strconv.Itoa(resp.StatusCode)+" "), strings.HasPrefix(msg, status):
		e.Message = msg // the page's title says it already
	default:
		e.Message = status + ": " + msg
	}
	return e
}

// call sends in (if not nil) as JSON and decodes the answer into out.
func (c *Client) call(ctx context.Context, method, path string, q url.Values, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return fmt.Errorf("encoding the request to %s: %w", path, err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.apiURL(path, q), body)
	if err != nil {
		return fmt.Errorf("building the request to %s: %w", path, err)
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.send(ctx, req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		if ctx.Err() != nil {
			return c.unreachable(ctx, err)
		}
		return fmt.Errorf("the server's answer to %s %s is not valid: %w", method, path, err)
	}
	return nil
}
