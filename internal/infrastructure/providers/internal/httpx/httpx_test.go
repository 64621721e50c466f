package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/fault"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		header map[string]string
		want   time.Duration
	}{
		{nil, 0},
		{map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{map[string]string{"Retry-After": " 1.5 "}, 1500 * time.Millisecond},
		{map[string]string{"Retry-After": "0"}, 0},
		{map[string]string{"Retry-After": "-3"}, 0},
		{map[string]string{"Retry-After": "1e300"}, 24 * time.Hour},
		{map[string]string{"Retry-After": "Sat, 01 Mar 2025 12:00:30 GMT"}, 30 * time.Second},
		{map[string]string{"Retry-After": "Sat, 01 Mar 2025 11:59:00 GMT"}, 0},
		{map[string]string{"Retry-After": "soon"}, 0},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "1"}, 250 * time.Millisecond},
		{map[string]string{"Retry-After-Ms": "x", "Retry-After": "1"}, time.Second},
	}
	for _, tc := range tests {
		h := http.Header{}
		for k, v := range tc.header {
			h.Set(k, v)
		}
		if got := RetryAfter(h, now); got != tc.want {
			t.Errorf("RetryAfter(%v) = %v, want %v", tc.header, got, tc.want)
		}
	}
}

func TestDelay(t *testing.T) {
	b := DefaultBackoff(10)
	tests := []struct {
		retry      int
		retryAfter time.Duration
		min, max   time.Duration
	}{
		{0, 0, 375 * time.Millisecond, 500 * time.Millisecond},
		{1, 0, 750 * time.Millisecond, time.Second},
		{2, 0, 1500 * time.Millisecond, 2 * time.Second},
		{5, 0, 6 * time.Second, 8 * time.Second},
		{60, 0, 6 * time.Second, 8 * time.Second},
		{0, 3 * time.Second, 3 * time.Second, 3 * time.Second},
		{0, time.Hour, time.Minute, time.Minute},
	}
	for _, tc := range tests {
		for range 50 {
			if got := b.Delay(tc.retry, tc.retryAfter); got < tc.min || got > tc.max {
				t.Fatalf("Delay(%d, %v) = %v, want between %v and %v", tc.retry, tc.retryAfter, got, tc.min, tc.max)
			}
		}
	}
}

func TestParseError(t *testing.T) {
	tests := []struct {
		name   string
		status int
		body   string
		want   string
		kind   fault.Kind
		temp   bool
	}{
		{"openai", 401, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`,
			"openai: 401 Unauthorized: Incorrect API key provided", fault.Usage, false},
		{"anthropic", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			"openai: 529 Overloaded: Overloaded", fault.Execution, true},
		{"ollama", 404, `{"error":"model \"x\" not found, try pulling it first"}`,
			`openai: 404 Not Found: model "x" not found, try pulling it first`, fault.Usage, false},
		{"fastapi detail list", 422, `{"detail":[{"loc":["body","model"],"msg":"field required","type":"value_error.missing"}]}`,
			"openai: 422 Unprocessable Entity: field required", fault.Usage, false},
		{"fastapi detail string", 400, `{"detail":"Not Found"}`, "openai: 400 Bad Request: Not Found", fault.Usage, false},
		{"message only", 500, `{"message":"internal"}`, "openai: 500 Internal Server Error: internal", fault.Execution, true},
		{"type only", 429, `{"error":{"type":"rate_limit_error"}}`, "openai: 429 Too Many Requests: rate_limit_error", fault.Execution, true},
		{"plain text", 502, "upstream connect error\nmore", "openai: 502 Bad Gateway: upstream connect error", fault.Execution, true},
		{"html page", 503, "<html><body>Service Unavailable</body></html>", "openai: 503 Service Unavailable", fault.Execution, true},
		{"empty", 504, "", "openai: 504 Gateway Timeout", fault.Execution, true},
		{"long message", 400, `{"error":"` + strings.Repeat("a ", 200) + `"}`, "openai: 400 Bad Request: " + strings.Repeat("a ", 150)[:300] + "...", fault.Usage, false},
		{"request timeout", 408, `{}`, "openai: 408 Request Timeout", fault.Execution, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := ParseError("openai", tc.status, []byte(tc.body))
			if got := e.Error(); got != tc.want {
				t.Errorf("ParseError(%d, %q) = %q, want %q", tc.status, tc.body, got, tc.want)
			}
			if got := fault.KindOf(e); got != tc.kind {
				t.Errorf("KindOf = %v, want %v", got, tc.kind)
			}
			if got := e.Temporary(); got != tc.temp {
				t.Errorf("Temporary = %v, want %v", got, tc.temp)
			}
		})
	}
}

func TestParseEmbedded(t *testing.T) {
	tests := []struct {
		raw  string
		want string
	}{
		{`"boom"`, "p: error in response: boom"},
		{`{"message":"context too long","code":400}`, "p: 400 Bad Request: context too long"},
		{`{"message":"x","code":"server_error"}`, "p: error in response: x"},
		{`42`, "p: error in response: 42"},
	}
	for _, tc := range tests {
		if got := ParseEmbedded("p", []byte(tc.raw)).Error(); got != tc.want {
			t.Errorf("ParseEmbedded(%s) = %q, want %q", tc.raw, got, tc.want)
		}
	}
}

func TestEmbeddedError(t *testing.T) {
	for _, raw := range []string{"", "null"} {
		if err := EmbeddedError("p", []byte(raw)); err != nil {
			t.Errorf("EmbeddedError(%q) = %v, want nil", raw, err)
		}
	}
	if err := EmbeddedError("p", []byte(`{"message":"x","code":503}`)); err == nil || err.Error() != "p: 503 Service Unavailable: x" || fault.KindOf(err) != fault.Execution {
		t.Errorf("EmbeddedError(object) = %v, want the parsed error", err)
	}
}

func TestTransient(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("x"), false},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{fmt.Errorf("stream: %w", ErrTruncated), true},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, true},
		{syscall.ECONNRESET, true},
		{&net.DNSError{Err: "no such host", Name: "x", IsNotFound: true}, false},
		{&net.DNSError{Err: "timeout", Name: "x", IsTimeout: true}, true},
		{context.DeadlineExceeded, true},
		{context.Canceled, false},
	}
	for _, tc := range tests {
		if got := Transient(tc.err); got != tc.want {
			t.Errorf("Transient(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestRetryable(t *testing.T) {
	rateLimited := &APIError{Provider: "p", Status: 429, RetryAfter: time.Second}
	tests := []struct {
		name  string
		err   error
		after time.Duration
		want  bool
	}{
		{"rate limit", fmt.Errorf("x: %w", rateLimited), time.Second, true},
		{"bad request", &APIError{Status: 400}, 0, false},
		{"permanent rate limit", Permanent(rateLimited), 0, false},
		{"truncated", fault.Wrap(fault.Execution, ErrTruncated), 0, true},
		{"permanent truncated", Permanent(ErrTruncated), 0, false},
	}
	for _, tc := range tests {
		after, ok := retryable(tc.err)
		if after != tc.after || ok != tc.want {
			t.Errorf("retryable(%s) = %v, %v; want %v, %v", tc.name, after, ok, tc.after, tc.want)
		}
	}
	if fault.KindOf(Permanent(rateLimited)) != fault.Execution || !errors.Is(Permanent(ErrTruncated), ErrTruncated) {
		t.Error("Permanent hides its cause")
	}
}

func TestLines(t *testing.T) {
	type line struct {
		Text       string
		Terminated bool
	}
	tests := []struct {
		in   string
		want []line
	}{
		{"", nil},
		{"a\nb\n", []line{{"a", true}, {"b", true}}},
		{"a\r\nb\r\n\r\n", []line{{"a", true}, {"b", true}, {"", true}}},
		{"a\rb\r\rc", []line{{"a", true}, {"b", true}, {"", true}, {"c", false}}},
		{"a\r", []line{{"a", true}}},
		{"\n\n", []line{{"", true}, {"", true}}},
	}
	for _, tc := range tests {
		for _, oneByte := range []bool{false, true} {
			var r io.Reader = strings.NewReader(tc.in)
			if oneByte {
				r = iotest.OneByteReader(r) // a "\r" at the end of every read
			}
			l := NewLines(r)
			var got []line
			for {
				text, term, err := l.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("Lines(%q).Next: %v", tc.in, err)
				}
				got = append(got, line{string(text), term})
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Lines(%q) one byte at a time=%v (-want +got):\n%s", tc.in, oneByte, diff)
			}
		}
	}
}

func TestSSE(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Event
		err  error
	}{
		{"plain", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []Event{{Data: []byte(`{"a":1}`)}, {Data: []byte("[DONE]")}}, nil},
		{"event names, comments, ids, CRLF", ": ping\r\n\r\nevent: message_start\r\nid: 7\r\nretry: 10\r\ndata: {}\r\n\r\nevent: ping\r\n\r\ndata:x\r\n\r\n",
			[]Event{{Type: "message_start", Data: []byte("{}")}, {Data: []byte("x")}}, nil},
		{"multi-line data", "data: a\ndata:  b\ndata\n\n", []Event{{Data: []byte("a\n b\n")}}, nil},
		{"last event without blank line", "data: a\n\ndata: b\n", []Event{{Data: []byte("a")}, {Data: []byte("b")}}, nil},
		{"cut inside a line", "data: a\n\ndata: {\"b", []Event{{Data: []byte("a")}}, ErrTruncated},
		{"empty", "", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSSE(strings.NewReader(tc.in))
			var got []Event
			var err error
			for {
				var ev Event
				if ev, err = s.Next(); err != nil {
					break
				}
				got = append(got, Event{Type: ev.Type, Data: append([]byte(nil), ev.Data...)})
			}
			if err == io.EOF {
				err = nil
			}
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Errorf("SSE(%q) error = %v, want %v", tc.in, err, tc.err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SSE(%q) events (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestLinesTooLong(t *testing.T) {
	l := NewLines(io.MultiReader(strings.NewReader("data: "), iotest.DataErrReader(strings.NewReader(strings.Repeat("x", MaxLine+1)))))
	if _, _, err := l.Next(); err == nil || !strings.Contains(err.Error(), "line longer than") {
		t.Errorf("Next on an endless line = %v, want a too-long error", err)
	}
}

func TestWhole(t *testing.T) {
	tests := []struct {
		in    string
		whole bool
	}{
		{`{"choices":[]}`, true},
		{"\r\n  \t{}", true},
		{"data: {}\n\n", false},
		{"event: ping\n", false},
		{": comment\n", false},
		{"   ", false},
		{"", false},
		{strings.Repeat(" ", 5000) + "{}", false},
	}
	for _, tc := range tests {
		body, whole := Whole(strings.NewReader(tc.in))
		if whole != tc.whole {
			t.Errorf("Whole(%.20q) = %v, want %v", tc.in, whole, tc.whole)
		}
		if got, _ := io.ReadAll(body); string(got) != tc.in {
			t.Errorf("Whole(%.20q) lost bytes: read back %.20q", tc.in, got)
		}
	}
}
