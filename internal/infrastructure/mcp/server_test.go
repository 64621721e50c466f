package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// exposedTools are what the test servers expose.
var exposedTools = []ports.ToolInfo{
	{Schema: ports.ToolSchema{Name: "read_file", Description: "Read a file.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`)},
		Annotations: tool.Annotations{ReadOnly: true, Idempotent: true}},
	{Schema: ports.ToolSchema{Name: "write_file", Description: "Write a file."}},
	{Schema: ports.ToolSchema{Name: "boom", Description: "Panics."}},
	{Schema: ports.ToolSchema{Name: "faulty", Description: "Ends with a fault."}},
}

func testInvoker() *portstest.ToolSet {
	return &portstest.ToolSet{Tools: map[string]portstest.ToolFunc{
		"read_file": func(_ context.Context, req ports.ToolRequest) (tool.Result, error) {
			return tool.OK(fmt.Sprintf("content of %v", req.Args["path"])), nil
		},
		"write_file": func(context.Context, ports.ToolRequest) (tool.Result, error) {
			return tool.Result{Status: tool.StatusError, Error: "denied by policy: no writes here", Denied: true}, nil
		},
		"boom": func(context.Context, ports.ToolRequest) (tool.Result, error) {
			panic("kaboom")
		},
		"faulty": func(context.Context, ports.ToolRequest) (tool.Result, error) {
			return tool.Result{}, fault.New(fault.Denied, "approval needed and nobody to ask: %w", ports.ErrAbortStep)
		},
	}}
}

func newTestServer(t *testing.T, inv ports.ToolInvoker) *Server {
	t.Helper()
	var n atomic.Int64
	s, err := NewServer(ServerConfig{Tools: exposedTools, Invoker: inv, Refuser: noRefusals, RunID: "mcp-run",
		NewID: func() string { return fmt.Sprintf("call-%d", n.Add(1)) },
		Scope: ports.Scope{"inputs": map[string]any{"x": 1}}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// serveStdio serves s over a pair of pipes and returns a client session on the other ends.
func serveStdio(t testing.TB, s *Server) *sdk.ClientSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, inR, outW) }()
	client := sdk.NewClient(&sdk.Implementation{Name: "tester", Version: "1"}, nil)
	sess, err := client.Connect(t.Context(), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sess.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve() = %v after the client left", err)
		}
		cancel()
	})
	return sess
}

func call(t *testing.T, sess *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	res, err := sess.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s) = %v", name, err)
	}
	return res
}

func resultText(r *sdk.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func TestServerListsTools(t *testing.T) {
	sess := serveStdio(t, newTestServer(t, testInvoker()))
	res, err := sess.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*sdk.Tool{}
	for _, tl := range res.Tools {
		got[tl.Name] = tl
	}
	if len(got) != len(exposedTools) {
		t.Fatalf("ListTools() = %d tools, want %d", len(got), len(exposedTools))
	}
	rf := got["read_file"]
	if rf.Description != "Read a file." || rf.Annotations == nil || !rf.Annotations.ReadOnlyHint || !rf.Annotations.IdempotentHint {
		t.Errorf("read_file = %+v %+v", rf, rf.Annotations)
	}
	want := map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}},
		"required": []any{"path"}}
	if diff := cmp.Diff(want, rf.InputSchema); diff != "" {
		t.Errorf("read_file input schema (-want +got):\n%s", diff)
	}
	if wf := got["write_file"]; wf.Annotations.ReadOnlyHint || wf.Annotations.DestructiveHint == nil || !*wf.Annotations.DestructiveHint {
		t.Errorf("write_file annotations = %+v, want not read-only, destructive", wf.Annotations)
	}
	if diff := cmp.Diff(map[string]any{"type": "object"}, got["boom"].InputSchema); diff != "" {
		t.Errorf("schema of a tool without one (-want +got):\n%s", diff)
	}
}

func TestServerCalls(t *testing.T) {
	inv := testInvoker()
	sess := serveStdio(t, newTestServer(t, inv))
	tests := []struct {
		tool    string
		args    any
		want    string
		isError bool
	}{
		{"read_file", map[string]any{"path": "a.txt"}, "content of a.txt", false},
		{"write_file", map[string]any{"path": "a.txt"}, "denied by policy: no writes here", true},
		{"boom", nil, `tool "boom" crashed: kaboom`, true},
		{"faulty", nil, "approval needed and nobody to ask", true},
		// The server goes on serving after a panic and a fault.
		{"read_file", map[string]any{"path": "b.txt"}, "content of b.txt", false},
	}
	for _, tc := range tests {
		res := call(t, sess, tc.tool, tc.args)
		if res.IsError != tc.isError || !strings.Contains(resultText(res), tc.want) {
			t.Errorf("CallTool(%s, %v) = %q (isError %v), want %q (isError %v)", tc.tool, tc.args, resultText(res), res.IsError, tc.want, tc.isError)
		}
	}
	reqs := inv.Requests()
	if len(reqs) != len(tests) {
		t.Fatalf("the invoker saw %d requests, want %d", len(reqs), len(tests))
	}
	first := reqs[0]
	want := ports.ToolRequest{RunID: "mcp-run", Step: "mcp:tester", CallID: "call-1", Name: "read_file",
		Args: map[string]any{"path": "a.txt"}, Scope: ports.Scope{"inputs": map[string]any{"x": 1}}}
	if diff := cmp.Diff(want, first); diff != "" {
		t.Errorf("first request (-want +got):\n%s", diff)
	}
	if reqs[4].CallID != "call-5" {
		t.Errorf("fifth call id = %q, want call-5", reqs[4].CallID)
	}
}

func TestServerRefusesArgumentsThatAreNotAnObject(t *testing.T) {
	inv := testInvoker()
	sess := serveStdio(t, newTestServer(t, inv))
	res := call(t, sess, "read_file", []string{"a.txt"})
	if !res.IsError || !strings.Contains(resultText(res), "must be a JSON object") {
		t.Errorf("CallTool with an array = %q (isError %v), want an error result", resultText(res), res.IsError)
	}
	if n := len(inv.Requests()); n != 0 {
		t.Errorf("the invoker saw %d requests, want 0", n)
	}
}

func TestServerOverHTTP(t *testing.T) {
	hs := httptest.NewServer(newTestServer(t, testInvoker()).Handler())
	t.Cleanup(hs.Close)
	client := sdk.NewClient(&sdk.Implementation{Name: "web-tester"}, nil)
	sess, err := client.Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: hs.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if res := call(t, sess, "read_file", map[string]any{"path": "x"}); res.IsError || resultText(res) != "content of x" {
		t.Errorf("read_file over HTTP = %q (isError %v)", resultText(res), res.IsError)
	}
	if res := call(t, sess, "boom", nil); !res.IsError {
		t.Errorf("boom over HTTP succeeded")
	}
}

func TestNewServerNeedsItsDependencies(t *testing.T) {
	_, err := NewServer(ServerConfig{})
	if fault.KindOf(err) != fault.System || !strings.Contains(err.Error(), "Invoker, NewID, Refuser") {
		t.Errorf("NewServer({}) = %v, want a system error naming Invoker and NewID", err)
	}
}

// noRefusals is a refuser for servers whose tests do not look at refusals.
var noRefusals = ports.CallRefuserFunc(func(context.Context, ports.ToolRequest, string, string) error { return nil })

// TestRefusedCallsAreAudited: a call of a tool the server does not serve (answered with a
// JSON-RPC error, invalid params) and a call whose arguments are not an object never reach the
// invoker, and each is audited once through the refuser with the arguments as sent.
func TestRefusedCallsAreAudited(t *testing.T) {
	type refusal struct {
		Tool, Rule string
		Args       map[string]any
	}
	var (
		mu  sync.Mutex
		got []refusal
	)
	refuser := ports.CallRefuserFunc(func(_ context.Context, req ports.ToolRequest, rule, _ string) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, refusal{req.Name, rule, req.Args})
		return nil
	})
	inv := testInvoker()
	s, err := NewServer(ServerConfig{Tools: exposedTools, Invoker: inv, Refuser: refuser, RunID: "r",
		NewID: func() string { return "id" }})
	if err != nil {
		t.Fatal(err)
	}
	sess := serveStdio(t, s)
	if _, err := sess.CallTool(t.Context(), &sdk.CallToolParams{Name: "READ_FILE", Arguments: map[string]any{"path": "x"}}); err == nil {
		t.Error("a call of an unserved tool succeeded")
	}
	if res := call(t, sess, "read_file", []string{"a.txt"}); !res.IsError {
		t.Error("a call with array arguments succeeded")
	}
	want := []refusal{
		{"READ_FILE", ports.RuleUnknownTool, map[string]any{"path": "x"}},
		{"read_file", ports.RuleArgsObject, map[string]any{state.RawArgsKey: `["a.txt"]`}},
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audited refusals (-want +got):\n%s", diff)
	}
	if n := len(inv.Requests()); n != 0 {
		t.Errorf("invoker called %d times, want 0", n)
	}
}
