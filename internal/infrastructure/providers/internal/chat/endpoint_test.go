package chat

import (
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/httpx"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/wiretest"
)

// testSpec is an API whose wire format names the decoder that read the reply, as its content.
func testSpec() Spec {
	return Spec{
		Provider: "p",
		Path:     "/v1/chat",
		KeyEnv:   "P_KEY",
		Encode: func(model string, _ ports.ChatRequest, stream bool) ([]byte, error) {
			return fmt.Appendf(nil, `{"model":%q,"stream":%v}`, model, stream), nil
		},
		Decode: func(body io.Reader, _ int) (ports.ChatResponse, error) {
			_, err := io.ReadAll(body)
			return ports.ChatResponse{Content: "whole"}, err
		},
		DecodeStream: func(body io.Reader, _ int, onDelta func(string)) (ports.ChatResponse, error) {
			_, err := io.ReadAll(body)
			d := NewDeltas(onDelta)
			d.Emit("streamed")
			return ports.ChatResponse{Content: "stream", Model: "served"}, err
		},
	}
}

func TestEndpointRequest(t *testing.T) {
	const key = "k-0123456789"
	tests := []struct {
		name   string
		spec   func(*Spec)
		cfg    Config
		header map[string]string // "" for a header that must be absent
	}{
		{"no key, none sent", nil, Config{},
			map[string]string{"Authorization": "", "Content-Type": "application/json", "Accept": "application/json", "User-Agent": "awf"}},
		{"key as a bearer token", nil, Config{APIKey: key}, map[string]string{"Authorization": "Bearer " + key}},
		{"key in the API's header", func(s *Spec) { s.KeyHeader = "X-Api-Key" }, Config{APIKey: key},
			map[string]string{"X-Api-Key": key, "Authorization": ""}},
		{"fixed headers, then configured ones over everything", func(s *Spec) { s.Header = map[string]string{"V": "1", "W": "1"} },
			Config{APIKey: key, Headers: map[string]string{"W": "2", "Authorization": "Basic eA==", "User-Agent": "mine"}},
			map[string]string{"V": "1", "W": "2", "Authorization": "Basic eA==", "User-Agent": "mine"}},
		{"events", nil, Config{Stream: true}, map[string]string{"Accept": "text/event-stream"}},
		{"JSON lines", func(s *Spec) { s.Streaming = JSONLines }, Config{Stream: true}, map[string]string{"Accept": "application/x-ndjson"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := wiretest.New(t, wiretest.Reply{Body: "data: {}\n\n"})
			spec := testSpec()
			if tc.spec != nil {
				tc.spec(&spec)
			}
			tc.cfg.BaseURL, tc.cfg.Model, tc.cfg.HTTPClient = srv.URL+"/", "m", wiretest.Client()
			e, err := NewEndpoint(spec, tc.cfg)
			if err != nil {
				t.Fatalf("NewEndpoint: %v", err)
			}
			if _, err := e.Chat(t.Context(), ports.ChatRequest{}); err != nil {
				t.Fatalf("Chat: %v", err)
			}
			srv.Requests()[0].Check(t, "/v1/chat", tc.header, fmt.Sprintf(`{"model":"m","stream":%v}`, tc.cfg.Stream))
		})
	}
}

func TestNewEndpointChecks(t *testing.T) {
	always := func(string) bool { return true }
	tests := []struct {
		name     string
		needsKey func(string) bool
		cfg      Config
		want     string // "" for no error
	}{
		{"no key needed", nil, Config{BaseURL: "http://h"}, ""},
		{"key the API needs", always, Config{BaseURL: "http://h"}, "p: no API key: set P_KEY"},
		{"key a named variable promises", nil, Config{BaseURL: "http://h", APIKeyEnv: "MINE"}, "p: no API key: set MINE"},
		{"key needed for one server only", func(base string) bool { return base == "https://api.p.com" }, Config{}, "p: no API key: set P_KEY"},
		{"not needed for another", func(base string) bool { return base == "https://api.p.com" }, Config{BaseURL: "http://localhost:8080/"}, ""},
		{"bad base URL", nil, Config{BaseURL: "localhost:8080"}, `p: base URL "localhost:8080": want http(s)://host[:port][/path]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := testSpec()
			spec.DefaultBaseURL, spec.NeedsKey = "https://api.p.com", tc.needsKey
			_, err := NewEndpoint(spec, tc.cfg)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("NewEndpoint(%+v) = %v, want no error", tc.cfg, err)
			case tc.want != "" && (err == nil || err.Error() != tc.want || fault.KindOf(err) != fault.Usage):
				t.Errorf("NewEndpoint(%+v) = %v (%v), want %q (usage)", tc.cfg, err, fault.KindOf(err), tc.want)
			}
		})
	}
}

func TestEndpointDecode(t *testing.T) {
	tests := []struct {
		name      string
		streaming Streaming
		stream    bool
		body      string
		want      ports.ChatResponse
		deltas    []string
	}{
		{"whole reply asked for", Events, false, `{}`, ports.ChatResponse{Content: "whole", Model: "m"}, nil},
		{"events", Events, true, "data: {}\n\n", ports.ChatResponse{Content: "stream", Model: "served"}, []string{"streamed"}},
		{"whole reply instead of events", Events, true, "\n {}", ports.ChatResponse{Content: "whole", Model: "m"}, []string{"whole"}},
		{"JSON lines, which look like a whole reply", JSONLines, true, "{}\n{}\n", ports.ChatResponse{Content: "stream", Model: "served"}, []string{"streamed"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := wiretest.New(t, wiretest.Reply{Body: tc.body})
			spec := testSpec()
			spec.Streaming = tc.streaming
			e, err := NewEndpoint(spec, Config{BaseURL: srv.URL, Model: "m", Stream: tc.stream, HTTPClient: wiretest.Client()})
			if err != nil {
				t.Fatal(err)
			}
			var deltas []string
			got, err := e.Chat(t.Context(), ports.ChatRequest{OnDelta: func(s string) { deltas = append(deltas, s) }})
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Chat (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.deltas, deltas); diff != "" {
				t.Errorf("deltas (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEndpointWithoutModel(t *testing.T) {
	srv := wiretest.New(t, wiretest.Reply{Body: `{}`})
	e, err := NewEndpoint(testSpec(), Config{BaseURL: srv.URL, HTTPClient: wiretest.Client()})
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.Chat(t.Context(), ports.ChatRequest{})
	if want := "p: no model: use --model, or set model: in the provider's definition or options.model in the step"; err == nil || err.Error() != want || fault.KindOf(err) != fault.Usage {
		t.Errorf("Chat = %v, want %q (usage)", err, want)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("server got %d requests, want 0", n)
	}
}

func TestReadJSON(t *testing.T) {
	type reply struct{ A int }
	tests := []struct {
		body io.Reader
		want string // the error; "" for {A: 1}
	}{
		{iotest.OneByteReader(strings.NewReader(`{"A":1}`)), ""},
		{strings.NewReader(`{"A":`), `p: malformed response: unexpected end of JSON input: "{\"A\":"`},
		{strings.NewReader(``), `p: malformed response: unexpected end of JSON input: ""`},
		{iotest.ErrReader(errors.New("reset")), "p: read response: reset"},
	}
	for _, tc := range tests {
		got, _, err := ReadJSON[reply]("p", tc.body)
		switch {
		case tc.want == "" && (err != nil || got.A != 1):
			t.Errorf("ReadJSON = %+v, %v; want {A: 1}", got, err)
		case tc.want != "" && (err == nil || err.Error() != tc.want || fault.KindOf(err) != fault.Execution):
			t.Errorf("ReadJSON = %v, want %q (execution)", err, tc.want)
		}
	}
}

func TestDeltas(t *testing.T) {
	var got []string
	d := NewDeltas(func(s string) { got = append(got, s) })
	if _, err := d.Fail(httpx.ErrTruncated); err != httpx.ErrTruncated {
		t.Errorf("Fail before any text = %v, want ErrTruncated as is", err)
	}
	d.Emit("")
	d.Emit("a")
	if _, err := d.Fail(httpx.ErrTruncated); !errors.Is(err, httpx.ErrTruncated) || !isPermanent(err) {
		t.Errorf("Fail after text = %v, want ErrTruncated made permanent", err)
	}
	if diff := cmp.Diff([]string{"a"}, got); diff != "" {
		t.Errorf("emitted (-want +got):\n%s", diff)
	}
	var zero Deltas
	zero.Emit("x") // passes nothing on, does not panic
	if _, err := zero.Fail(io.EOF); isPermanent(err) {
		t.Error("a Deltas without OnDelta made a failure permanent")
	}
}

// isPermanent reports whether err is marked with httpx.Permanent.
func isPermanent(err error) bool {
	return reflect.TypeOf(err) == reflect.TypeOf(httpx.Permanent(io.EOF))
}

func TestStreamError(t *testing.T) {
	tests := []struct {
		err       error
		want      string
		truncated bool
	}{
		{io.EOF, "p: stream ended before [DONE]: response ended early", true},
		{fmt.Errorf("event cut off: %w", httpx.ErrTruncated), "p: stream ended before [DONE]: event cut off: response ended early", true},
		{io.ErrUnexpectedEOF, "p: read stream: unexpected EOF", false},
	}
	for _, tc := range tests {
		err := StreamError("p", "[DONE]", tc.err)
		if err.Error() != tc.want || fault.KindOf(err) != fault.Execution || errors.Is(err, httpx.ErrTruncated) != tc.truncated {
			t.Errorf("StreamError(%v) = %v (%v, truncated %v), want %q (execution, truncated %v)",
				tc.err, err, fault.KindOf(err), errors.Is(err, httpx.ErrTruncated), tc.want, tc.truncated)
		}
		if !errors.Is(err, tc.err) && tc.err != io.EOF {
			t.Errorf("StreamError(%v) lost its cause", tc.err)
		}
	}
}
