package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
)

// transport answers each request with the next of replies (the last repeats) and records when
// each came and what it carried. Use it inside one synctest bubble.
type transport struct {
	replies []func(*http.Request) (*http.Response, error)
	times   []time.Time
	bodies  []string
	headers []http.Header
}

func (tr *transport) RoundTrip(r *http.Request) (*http.Response, error) {
	body, _ := io.ReadAll(r.Body)
	tr.times = append(tr.times, time.Now())
	tr.bodies = append(tr.bodies, string(body))
	tr.headers = append(tr.headers, r.Header)
	reply := tr.replies[min(len(tr.times), len(tr.replies))-1]
	return reply(r)
}

// status answers with code, the headers given as name, value pairs, and body.
func status(code int, body string, header ...string) func(*http.Request) (*http.Response, error) {
	return func(r *http.Request) (*http.Response, error) {
		h := http.Header{}
		for i := 0; i+1 < len(header); i += 2 {
			h.Set(header[i], header[i+1])
		}
		return &http.Response{StatusCode: code, Header: h, Body: io.NopCloser(strings.NewReader(body)), Request: r}, nil
	}
}

func failing(err error) func(*http.Request) (*http.Response, error) {
	return func(*http.Request) (*http.Response, error) { return nil, err }
}

const secret = "sk-secret-0123456789"

func newTestClient(tr http.RoundTripper, retries int) *Client {
	return &Client{Provider: "p", HTTP: &http.Client{Transport: tr}, Retry: DefaultBackoff(retries), Secret: secret}
}

// span is a range of waits, inclusive.
type span struct{ min, max time.Duration }

func exactly(d time.Duration) span { return span{d, d} }

func TestDoRetries(t *testing.T) {
	ok := status(200, "fine")
	tests := []struct {
		name    string
		retries int
		replies []func(*http.Request) (*http.Response, error)
		handle  func(attempt int) error // nil: read the body
		gaps    []span                  // the wait before each retry
		want    string                  // the error; "" for success
		kind    fault.Kind
	}{
		{name: "success at once", retries: 3, replies: []func(*http.Request) (*http.Response, error){ok}},
		{name: "429 with Retry-After in seconds", retries: 3,
			replies: []func(*http.Request) (*http.Response, error){status(429, `{"error":{"message":"slow down"}}`, "Retry-After", "2"), ok},
			gaps:    []span{exactly(2 * time.Second)}},
		{name: "503 with Retry-After as an HTTP date", retries: 3,
			// A bubble's clock starts at 2000-01-01 00:00:00 UTC.
			replies: []func(*http.Request) (*http.Response, error){status(503, "", "Retry-After", "Sat, 01 Jan 2000 00:00:03 GMT"), ok},
			gaps:    []span{exactly(3 * time.Second)}},
		{name: "Retry-After capped", retries: 3,
			replies: []func(*http.Request) (*http.Response, error){status(429, "", "Retry-After", "7200"), ok},
			gaps:    []span{exactly(time.Minute)}},
		{name: "backoff doubles, less up to a quarter", retries: 3,
			replies: []func(*http.Request) (*http.Response, error){status(500, ""), status(502, ""), status(529, ""), ok},
			gaps:    []span{{375 * time.Millisecond, 500 * time.Millisecond}, {750 * time.Millisecond, time.Second}, {1500 * time.Millisecond, 2 * time.Second}}},
		{name: "gives up after the last retry", retries: 2,
			replies: []func(*http.Request) (*http.Response, error){status(503, `{"error":"busy"}`)},
			gaps:    []span{{375 * time.Millisecond, 500 * time.Millisecond}, {750 * time.Millisecond, time.Second}},
			want:    "p: 503 Service Unavailable: busy (gave up after 3 attempts)", kind: fault.Execution},
		{name: "no retries configured", retries: 0,
			replies: []func(*http.Request) (*http.Response, error){status(503, `{"error":"busy"}`)},
			want:    "p: 503 Service Unavailable: busy", kind: fault.Execution},
		{name: "4xx is not retried", retries: 3,
			replies: []func(*http.Request) (*http.Response, error){status(401, `{"error":{"message":"bad key"}}`), ok},
			want:    "p: 401 Unauthorized: bad key", kind: fault.Usage},
		{name: "refused connection is retried", retries: 3,
			replies: []func(*http.Request) (*http.Response, error){failing(syscall.ECONNREFUSED), ok},
			gaps:    []span{{375 * time.Millisecond, 500 * time.Millisecond}}},
		{name: "other transport errors are not", retries: 3,
			replies: []func(*http.Request) (*http.Response, error){failing(errors.New("tls: bad certificate")), ok},
			want:    "p: post http://h/v1/chat: tls: bad certificate", kind: fault.Execution},
		{name: "truncated reply is retried", retries: 3, replies: []func(*http.Request) (*http.Response, error){ok},
			handle: func(attempt int) error {
				if attempt == 0 {
					return fmt.Errorf("stream: %w", ErrTruncated)
				}
				return nil
			},
			gaps: []span{{375 * time.Millisecond, 500 * time.Millisecond}}},
		{name: "permanent failure of the handler is not", retries: 3, replies: []func(*http.Request) (*http.Response, error){ok},
			handle: func(int) error { return Permanent(fault.Wrap(fault.Execution, ErrTruncated)) },
			want:   "response ended early", kind: fault.Execution},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := &transport{replies: tc.replies}
				attempt := 0
				err := newTestClient(tr, tc.retries).Do(t.Context(), "http://h/v1/chat", http.Header{"X-K": {"v"}}, []byte(`{"q":1}`), func(resp *http.Response) error {
					defer func() { attempt++ }()
					if tc.handle != nil {
						return tc.handle(attempt)
					}
					b, err := io.ReadAll(resp.Body)
					if string(b) != "fine" {
						t.Errorf("handle read %q, want the 2xx body", b)
					}
					return err
				})
				if tc.want == "" && err != nil {
					t.Fatalf("Do: %v", err)
				}
				if tc.want != "" && (err == nil || err.Error() != tc.want || fault.KindOf(err) != tc.kind) {
					t.Fatalf("Do = %v (%v), want %q (%v)", err, fault.KindOf(err), tc.want, tc.kind)
				}
				if len(tr.times) != len(tc.gaps)+1 {
					t.Fatalf("%d attempts, want %d", len(tr.times), len(tc.gaps)+1)
				}
				for i, g := range tc.gaps {
					if d := tr.times[i+1].Sub(tr.times[i]); d < g.min || d > g.max {
						t.Errorf("wait before retry %d = %v, want between %v and %v", i+1, d, g.min, g.max)
					}
				}
				for i := range tr.bodies {
					if tr.bodies[i] != `{"q":1}` || tr.headers[i].Get("X-K") != "v" {
						t.Errorf("attempt %d sent %q with X-K %q, want the whole body and header", i+1, tr.bodies[i], tr.headers[i].Get("X-K"))
					}
				}
			})
		})
	}
}

func TestDoCancelledDuringBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		tr := &transport{replies: []func(*http.Request) (*http.Response, error){status(429, "", "Retry-After", "30")}}
		start := time.Now()
		err := newTestClient(tr, 3).Do(ctx, "http://h/", nil, nil, func(*http.Response) error { return nil })
		if !errors.Is(err, context.DeadlineExceeded) || err.Error() != "p: context deadline exceeded" || fault.KindOf(err) != fault.System {
			t.Errorf("Do = %v (%v), want p's context deadline exceeded, unclassified", err, fault.KindOf(err))
		}
		if waited := time.Since(start); waited != 3*time.Second || len(tr.times) != 1 {
			t.Errorf("waited %v over %d attempts, want 3s over 1", waited, len(tr.times))
		}
	})
}

func TestDoAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hang := func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done()
			return nil, r.Context().Err()
		}
		tr := &transport{replies: []func(*http.Request) (*http.Response, error){hang}}
		c := newTestClient(tr, 1)
		c.Timeout = 10 * time.Second
		start := time.Now()
		err := c.Do(t.Context(), "http://h/", nil, nil, func(*http.Response) error { return nil })
		if !errors.Is(err, context.DeadlineExceeded) || fault.KindOf(err) != fault.Execution || !strings.HasSuffix(err.Error(), "(gave up after 2 attempts)") {
			t.Errorf("Do = %v (%v), want a deadline, execution, after 2 attempts", err, fault.KindOf(err))
		}
		if waited := time.Since(start); waited < 20*time.Second+375*time.Millisecond || waited > 20*time.Second+500*time.Millisecond {
			t.Errorf("waited %v, want two 10s attempts and one backoff", waited)
		}
	})
}

// large is an 8 MiB body of "a", counting what was read from it.
type large struct {
	read   int
	closed bool
}

func (l *large) Read(p []byte) (int, error) {
	n := min(len(p), 8<<20-l.read)
	if n == 0 {
		return 0, io.EOF
	}
	for i := range n {
		p[i] = 'a'
	}
	l.read += n
	return n, nil
}

func (l *large) Close() error { l.closed = true; return nil }

func TestDoReadsABoundedErrorBody(t *testing.T) {
	body := &large{}
	tr := &transport{replies: []func(*http.Request) (*http.Response, error){func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 500, Header: http.Header{}, Body: body, Request: r}, nil
	}}}
	err := newTestClient(tr, 0).Do(t.Context(), "http://h/", nil, nil, func(*http.Response) error { return nil })
	want := "p: 500 Internal Server Error: " + strings.Repeat("a", 300) + "..."
	if err == nil || err.Error() != want {
		t.Errorf("Do = %.80v, want the first 300 characters of the body", err)
	}
	if body.read > 64<<10 || !body.closed {
		t.Errorf("read %d bytes of an 8 MiB error body (closed: %v), want at most 64 KiB, closed", body.read, body.closed)
	}
}

func TestDoNetworkErrorText(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &transport{replies: []func(*http.Request) (*http.Response, error){failing(fmt.Errorf("proxy refused key %s: %w", secret, syscall.ECONNREFUSED))}}
		c := newTestClient(tr, 1)
		c.Hint = "is p running?"
		err := c.Do(t.Context(), "http://user:pw@h:8080/v1/chat?key="+secret, nil, nil, func(*http.Response) error { return nil })
		want := "p: post http://h:8080/v1/chat: proxy refused key ***: connection refused (is p running?) (gave up after 2 attempts)"
		if err == nil || err.Error() != want {
			t.Errorf("Do = %v\nwant %s", err, want)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) || fault.KindOf(err) != fault.Execution {
			t.Errorf("Do = %v (%v): want the cause kept, execution", err, fault.KindOf(err))
		}
	})
}
