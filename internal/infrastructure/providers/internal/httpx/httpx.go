// Package httpx is the transport the HTTP model providers share: one JSON POST with retries
// (exponential backoff with jitter, honouring Retry-After), API error bodies turned into
// classified errors, and line readers for server-sent events and JSON lines. It knows no
// provider's wire format.
package httpx

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
)

// ErrTruncated reports a response body that ended before its format says it is complete: a
// stream closed before its end marker, or a line cut off by the end of the body.
var ErrTruncated = errors.New("response ended early")

// Client sends requests for one provider. Its fields are set once; it is safe for concurrent
// use when HTTP is.
type Client struct {
	// Provider names the adapter ("openai") and starts every error message.
	Provider string
	// HTTP sends the requests. Nil means a client with no timeout of its own.
	HTTP *http.Client
	// Retry says how often and how long to wait between attempts.
	Retry Backoff
	// Timeout bounds each attempt, reading the whole response included. Zero means none beyond
	// the caller's context.
	Timeout time.Duration
	// Secret is removed from every error text (an API key a server might echo).
	Secret string
	// Hint is added to network errors, e.g. "is ollama running?".
	Hint string
}

// Do POSTs body to url with header and passes a 2xx response to handle, which reads it.
// Failed attempts are retried when the status is 429, 500, 502, 503, 504 or 529, when the
// connection fails, or when handle returns a transient error (a network error or [ErrTruncated])
// not wrapped with [Permanent]. The body is closed after handle returns. When ctx ends, Do returns
// promptly with ctx's error wrapped, unclassified.
func (c *Client) Do(ctx context.Context, url string, header http.Header, body []byte, handle func(*http.Response) error) error {
	for attempt := 0; ; attempt++ {
		err := c.attempt(ctx, url, header, body, handle)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", c.Provider, ctx.Err())
		}
		after, retry := retryable(err)
		if !retry || attempt >= c.Retry.MaxRetries {
			if attempt > 0 {
				err = fmt.Errorf("%w (gave up after %d attempts)", err, attempt+1)
			}
			return err
		}
		if err := sleep(ctx, c.Retry.Delay(attempt, after)); err != nil {
			return fmt.Errorf("%s: %w", c.Provider, err)
		}
	}
}

func (c *Client) attempt(ctx context.Context, url string, header http.Header, body []byte, handle func(*http.Response) error) error {
	actx := ctx
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		actx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(actx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return fault.New(fault.Usage, "%s: %s", c.Provider, c.redact(err.Error()))
	}
	req.Header = header.Clone()
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return c.networkError(url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return c.statusError(resp)
	}
	return handle(resp)
}

// networkError describes a failed exchange without the request URL's query (which url.Error
// would repeat) and without the secret.
func (c *Client) networkError(target string, err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	if u, perr := url.Parse(target); perr == nil {
		u.RawQuery, u.User = "", nil
		target = u.String()
	}
	msg := fmt.Sprintf("%s: post %s: %s", c.Provider, target, c.redact(err.Error()))
	if c.Hint != "" {
		msg += " (" + c.Hint + ")"
	}
	return fault.Wrap(fault.Execution, &netError{msg: msg, err: err})
}

// netError keeps the cause for errors.Is and the transient check while its text is redacted.
type netError struct {
	msg string
	err error
}

func (e *netError) Error() string { return e.msg }
func (e *netError) Unwrap() error { return e.err }

func (c *Client) statusError(resp *http.Response) error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := ParseError(c.Provider, resp.StatusCode, data)
	e.Message = c.redact(e.Message)
	e.RetryAfter = RetryAfter(resp.Header, time.Now())
	return e
}

func (c *Client) redact(s string) string {
	if len(c.Secret) < 8 {
		return s
	}
	return strings.ReplaceAll(s, c.Secret, "***")
}

// Permanent marks err as not worth another attempt, for example a stream that failed after
// text was already passed to the caller. It keeps err for errors.Is, errors.As and fault.KindOf.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err}
}

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// retryable reports whether err may succeed on another attempt, and how long the server asked
// to wait (zero if it did not say).
func retryable(err error) (time.Duration, bool) {
	if _, ok := errors.AsType[*permanentError](err); ok {
		return 0, false
	}
	if e, ok := errors.AsType[*APIError](err); ok {
		return e.RetryAfter, e.Temporary()
	}
	return 0, Transient(err)
}

// Transient reports whether err is a failure of the connection rather than of the request: a
// reset, refused or timed-out connection, a body cut short, or [ErrTruncated].
func Transient(err error) bool {
	switch {
	case err == nil:
		return false
	case errors.Is(err, ErrTruncated), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.EPIPE), errors.Is(err, context.DeadlineExceeded):
		return true
	}
	if dns, ok := errors.AsType[*net.DNSError](err); ok {
		return !dns.IsNotFound
	}
	_, ok := errors.AsType[net.Error](err)
	return ok
}

// Whole reports whether a body that should be a stream is a single JSON document instead, as a
// server that ignores a request to stream sends: it looks at the first byte that is not space
// (an event stream never starts with "{"). It returns the body to read from in either case.
func Whole(body io.Reader) (io.Reader, bool) {
	br := bufio.NewReader(body)
	for i := range br.Size() {
		b, err := br.Peek(i + 1)
		if err != nil {
			return br, false
		}
		if c := b[i]; c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return br, c == '{'
		}
	}
	return br, false
}
