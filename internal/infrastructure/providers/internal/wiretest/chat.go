package wiretest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// WeatherTool is a tool with a parameters schema, for request tests.
var WeatherTool = ports.ToolSchema{
	Name:        "get_weather",
	Description: "Weather for a city",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
}

// Case is one chat with the provider under test against scripted replies, and what must come
// of it.
type Case struct {
	Name string
	// Stream makes the client ask for a streamed reply.
	Stream bool
	// Replies are the server's answers, one per attempt; the last repeats. None means one
	// reply with status 200 and Body.
	Replies []Reply
	Body    string
	// Req is the request; without messages it carries one user message, "hi". Its OnDelta is
	// replaced by one that records the text.
	Req ports.ChatRequest
	// Want is the reply, when Err is empty.
	Want ports.ChatResponse
	// Deltas is the text the client must have passed to OnDelta, in order.
	Deltas []string
	// Err is the text of the error Chat must return, and Kind its class.
	Err  string
	Kind fault.Kind
	// Requests, when not 0, is how many requests the server must have received.
	Requests int
	// Waited, when not 0, is how long the chat must have taken on the bubble's fake clock.
	Waited time.Duration
}

// Run runs each case as a subtest: a [Server] with the case's replies, a client on it from
// newClient (which must use [Client], as it runs inside the bubble), and one Chat inside a
// testing/synctest bubble, so that backoff and Retry-After take no real time.
func Run[P ports.Provider](t *testing.T, newClient func(*testing.T, *Server, bool) P, cases []Case) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			replies := tc.Replies
			if len(replies) == 0 {
				replies = []Reply{{Body: tc.Body}}
			}
			srv := New(t, replies...)
			synctest.Test(t, func(t *testing.T) {
				tc.check(t, newClient(t, srv, tc.Stream))
			})
			if n := len(srv.Requests()); tc.Requests != 0 && n != tc.Requests {
				t.Errorf("server got %d requests, want %d", n, tc.Requests)
			}
		})
	}
}

func (tc Case) check(t *testing.T, p ports.Provider) {
	t.Helper()
	req := tc.Req
	if req.Messages == nil {
		req.Messages = []state.Message{{Role: "user", Content: "hi"}}
	}
	var deltas []string
	req.OnDelta = func(s string) { deltas = append(deltas, s) }
	start := time.Now()
	got, err := p.Chat(t.Context(), req)
	if waited := time.Since(start); tc.Waited != 0 && waited != tc.Waited {
		t.Errorf("waited %v, want %v", waited, tc.Waited)
	}
	if diff := cmp.Diff(tc.Deltas, deltas); diff != "" {
		t.Errorf("deltas mismatch (-want +got):\n%s", diff)
	}
	if tc.Err == "" {
		if err != nil {
			t.Fatalf("Chat: %v", err)
		}
		if diff := cmp.Diff(tc.Want, got); diff != "" {
			t.Errorf("Chat response mismatch (-want +got):\n%s", diff)
		}
		return
	}
	if err == nil || err.Error() != tc.Err {
		t.Fatalf("Chat error = %v, want %q", err, tc.Err)
	}
	if kind := fault.KindOf(err); kind != tc.Kind {
		t.Errorf("KindOf(%v) = %v, want %v", err, kind, tc.Kind)
	}
}

// Sent chats once with a client from newClient on a server answering reply, and returns the one
// request the server received.
func Sent[P ports.Provider](t *testing.T, newClient func(*testing.T, *Server, bool) P, stream bool, reply string, req ports.ChatRequest) Request {
	t.Helper()
	srv := New(t, Reply{Body: reply})
	if _, err := newClient(t, srv, stream).Chat(t.Context(), req); err != nil {
		t.Fatalf("Chat: %v", err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("server got %d requests, want 1", len(reqs))
	}
	return reqs[0]
}

// Check fails the test unless r is a POST to path with the values in header ("" for a header
// that must be absent) and a body that is the JSON value body.
func (r Request) Check(t testing.TB, path string, header map[string]string, body string) {
	t.Helper()
	JSONEqual(t, r.Body, body)
	if r.Method != http.MethodPost || r.Path != path {
		t.Errorf("request = %s %s, want POST %s", r.Method, r.Path, path)
	}
	for h, want := range header {
		if got := r.Header.Get(h); got != want {
			t.Errorf("header %s = %q, want %q", h, got, want)
		}
	}
}

// Bench measures decode, a provider's stream decoder, on body: a streamed reply that must
// decode to one tool call with JSON arguments, which is checked once before the timed loop.
func Bench(b *testing.B, body []byte, decode func(io.Reader, int, func(string)) (ports.ChatResponse, error)) {
	b.Helper()
	out, err := decode(bytes.NewReader(body), 1, func(string) {})
	if err != nil || len(out.ToolCalls) != 1 || !json.Valid([]byte(out.ToolCalls[0].Arguments)) {
		b.Fatalf("decode = %+v, %v; want one call with JSON arguments", out, err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if out, err := decode(bytes.NewReader(body), 1, func(string) {}); err != nil || len(out.ToolCalls) != 1 {
			b.Fatalf("decode = %+v, %v", out, err)
		}
	}
}
