// Package wiretest serves scripted HTTP replies to the provider adapters' tests and records the
// requests they sent, so that adapters are tested at their transport, byte for byte; [Run] plays
// a table of chats against such replies, the same way for every adapter. It is for tests only.
package wiretest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Reply is one scripted answer.
type Reply struct {
	// Status is the HTTP status; 0 means 200.
	Status int
	// Header is added to the response. Content-Type defaults to what the body looks like:
	// text/event-stream, application/x-ndjson or application/json.
	Header map[string]string
	// Body is written as is, and flushed.
	Body string
	// Abort drops the connection after Body, as a crashed server would, instead of ending the
	// response properly.
	Abort bool
	// Hold keeps the response open after Body until the client goes away.
	Hold bool
}

// Request is what the adapter sent.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// Server answers each request with the next Reply; the last one repeats. It is safe for
// concurrent use.
type Server struct {
	URL string

	mu       sync.Mutex
	replies  []Reply
	requests []Request
}

// New starts a server, closed when the test ends.
func New(t testing.TB, replies ...Reply) *Server {
	t.Helper()
	if len(replies) == 0 {
		t.Fatal("wiretest.New: no replies")
	}
	s := &Server{replies: replies}
	srv := httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(srv.Close)
	s.URL = srv.URL
	return s
}

// Requests returns the requests received so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	n := len(s.requests)
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
	reply := s.replies[min(n, len(s.replies)-1)]
	s.mu.Unlock()

	w.Header().Set("Content-Type", contentType(reply.Body))
	for k, v := range reply.Header {
		w.Header().Set(k, v)
	}
	if reply.Status != 0 {
		w.WriteHeader(reply.Status)
	}
	_, _ = io.WriteString(w, reply.Body)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	switch {
	case reply.Abort:
		panic(http.ErrAbortHandler)
	case reply.Hold:
		<-r.Context().Done()
	}
}

// contentType is the media type a body looks like: server-sent events, JSON lines (a line after
// the first starts an object) or one JSON document.
func contentType(body string) string {
	switch {
	case strings.HasPrefix(body, "data:") || strings.HasPrefix(body, "event:") || strings.HasPrefix(body, ":"):
		return "text/event-stream"
	case strings.HasPrefix(body, "{") && strings.Contains(body, "\n{"):
		return "application/x-ndjson"
	}
	return "application/json"
}

// Client returns an HTTP client that keeps no idle connections, so that a testing/synctest
// bubble holds no goroutine blocked on the network while fake time should pass. Create it
// inside the bubble.
func Client() *http.Client {
	return &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
}

// JSONEqual fails the test when got and want are not the same JSON value.
func JSONEqual(t testing.TB, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("request body is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want is not JSON: %v\n%s", err, want)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("request body mismatch (-want +got):\n%s\ngot: %s", diff, got)
	}
}

// SSE joins events written one per string, each given as its lines, into a stream body with
// the line ending eol ("\n" or "\r\n").
func SSE(eol string, events ...string) string {
	var b bytes.Buffer
	for _, e := range events {
		for line := range strings.Lines(e) {
			b.WriteString(strings.TrimRight(line, "\r\n"))
			b.WriteString(eol)
		}
		b.WriteString(eol)
	}
	return b.String()
}
