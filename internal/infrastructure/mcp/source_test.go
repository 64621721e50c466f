package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

var fsPos = workflow.Pos{File: "wf.yaml", Line: 7, Col: 3}

// newSource returns a source over the test server as "fs", closed at the end of the test.
func newSource(t *testing.T, cfg SourceConfig) *Source {
	t.Helper()
	if cfg.Servers == nil {
		cfg.Servers = map[string]workflow.MCPServer{"fs": {Name: "fs", Command: serverBin, Pos: fsPos,
			Env: map[string]string{"NOTES_FILE": filepath.Join(t.TempDir(), "notes")}}}
	}
	cfg.Log = slog.New(slog.NewTextHandler(t.Output(), nil))
	s := NewSource(cfg)
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	})
	return s
}

// tools loads s and returns its tools by name.
func tools(t *testing.T, s *Source) map[string]tool.Tool {
	t.Helper()
	set, err := s.Load()
	if err != nil {
		t.Fatalf("Load() = %v", err)
	}
	if len(set.Problems) > 0 {
		t.Fatalf("Load() problems: %v", set.Problems)
	}
	out := map[string]tool.Tool{}
	for _, tl := range set.Tools {
		out[tl.Name()] = tl
	}
	return out
}

func TestLoadListsToolsUnderServerNames(t *testing.T) {
	s := newSource(t, SourceConfig{})
	got := tools(t, s)
	var names []string
	for _, imp := range s.Imported() {
		names = append(names, imp.Name)
		if got[imp.Name] == nil {
			t.Errorf("Imported() lists %s, which Load did not return", imp.Name)
		}
	}
	want := []string{"fs__add", "fs__crash", "fs__echo", "fs__fail", "fs__get_data", "fs__hang", "fs__write_note"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Fatalf("imported names (-want +got):\n%s", diff)
	}

	echo := got["fs__echo"]
	if ann := echo.(tool.Annotated).Annotations(); !ann.ReadOnly || ann.Source != "mcp:fs" {
		t.Errorf("fs__echo annotations = %+v, want read-only from mcp:fs", ann)
	}
	if ann := got["fs__write_note"].(tool.Annotated).Annotations(); ann.ReadOnly {
		t.Errorf("fs__write_note is read-only; the server does not declare it so")
	}
	if pos := echo.(tool.Located).Pos(); pos != fsPos {
		t.Errorf("fs__echo Pos() = %v, want the mcp_servers entry %v", pos, fsPos)
	}
	var schema struct {
		Type       string         `json:"type"`
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(echo.Parameters(), &schema); err != nil || schema.Type != "object" || schema.Properties["text"] == nil {
		t.Errorf("fs__echo Parameters() = %s, want an object schema with text", echo.Parameters())
	}
	if d := echo.Description(tool.Context{}); d != "Echo the text back." {
		t.Errorf("fs__echo Description() = %q", d)
	}
	if m := echo.(tool.Summarizer).Meta(map[string]any{"text": "hi"}); m != `fs.echo {"text":"hi"}` {
		t.Errorf("fs__echo Meta() = %q", m)
	}
	imp := s.Imported()[5]
	if imp.Ref != "fs.hang" || imp.Tool != "hang" || imp.Server != "fs" {
		t.Errorf("Imported()[5] = %+v, want fs.hang", imp)
	}
}

func TestLoadOnce(t *testing.T) {
	s := newSource(t, SourceConfig{})
	first := tools(t, s)
	second := tools(t, s)
	if first["fs__echo"] != second["fs__echo"] {
		t.Errorf("a second Load started the servers again")
	}
	if len(s.conns) != 1 {
		t.Errorf("%d sessions, want 1", len(s.conns))
	}
}

func TestExecute(t *testing.T) {
	s := newSource(t, SourceConfig{})
	ts := tools(t, s)
	tests := []struct {
		name string
		tool string
		args map[string]any
		want tool.Result
	}{
		{"text", "fs__echo", map[string]any{"text": "hello"}, tool.Result{Status: tool.StatusOK, Output: "echo: hello"}},
		{"numbers", "fs__add", map[string]any{"a": json.Number("2"), "b": 3.5}, tool.Result{Status: tool.StatusOK, Output: "5.5"}},
		{"dotted name", "fs__get_data", nil, tool.Result{Status: tool.StatusOK, Output: "data"}},
		{"tool error", "fs__fail", nil, tool.Result{Status: tool.StatusError, Error: "it failed on purpose"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ts[tc.tool].Execute(t.Context(), tool.Invocation{Args: tc.args})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Execute(%s, %v) (-want +got):\n%s", tc.tool, tc.args, diff)
			}
		})
	}
}

func TestServerThatDiesMidCallIsAnErrorResult(t *testing.T) {
	s := newSource(t, SourceConfig{})
	ts := tools(t, s)
	pid := s.conns["fs"].cmd.Process.Pid
	got := ts["fs__crash"].Execute(t.Context(), tool.Invocation{})
	if got.Succeeded() {
		t.Fatalf("crash call = %+v, want an error result", got)
	}
	for _, want := range []string{`MCP server "fs" stopped`, "exit status 3", "crashing on purpose"} {
		if !strings.Contains(got.Error, want) {
			t.Errorf("crash call error = %q, want it to mention %q", got.Error, want)
		}
	}
	after := ts["fs__echo"].Execute(t.Context(), tool.Invocation{Args: map[string]any{"text": "x"}})
	if after.Succeeded() || !strings.Contains(after.Error, `MCP server "fs" stopped`) {
		t.Errorf("call after the crash = %+v, want an error result saying the server stopped", after)
	}
	if err := processGone(pid); err != nil {
		t.Errorf("the crashed server %d is still there: kill(0) = %v", pid, err)
	}
}

func TestServerThatNeverAnswersTimesOut(t *testing.T) {
	s := newSource(t, SourceConfig{CallTimeout: 200 * time.Millisecond})
	ts := tools(t, s)
	got := ts["fs__hang"].Execute(t.Context(), tool.Invocation{})
	if got.Succeeded() || !strings.Contains(got.Error, "timed out") {
		t.Fatalf("hang call = %+v, want a timeout error result", got)
	}
	// The session survives a call that timed out.
	if r := ts["fs__echo"].Execute(t.Context(), tool.Invocation{Args: map[string]any{"text": "still"}}); r.Output != "echo: still" {
		t.Errorf("call after the timeout = %+v, want echo: still", r)
	}
}

func TestCallerDeadlineWins(t *testing.T) {
	s := newSource(t, SourceConfig{CallTimeout: time.Hour})
	ts := tools(t, s)
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	if got := ts["fs__hang"].Execute(ctx, tool.Invocation{}); got.Succeeded() || !strings.Contains(got.Error, "timed out") {
		t.Errorf("hang call under a 100ms deadline = %+v, want a timeout error result", got)
	}
}

func TestCloseStopsServers(t *testing.T) {
	s := newSource(t, SourceConfig{})
	tools(t, s)
	pid := s.conns["fs"].cmd.Process.Pid
	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if err := processGone(pid); err != nil {
		t.Errorf("server %d still runs after Close: kill(0) = %v", pid, err)
	}
	if _, err := s.Load(); err == nil {
		t.Errorf("Load() after Close succeeded")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close() = %v", err)
	}
}

func TestServerEnvironment(t *testing.T) {
	s := newSource(t, SourceConfig{
		Servers: map[string]workflow.MCPServer{"fs": {Command: serverBin,
			Env: map[string]string{"TESTSERVER_ENV": "${GREETING} world"}}},
		Environ: []string{"GREETING=hello", "TESTSERVER_ENV=overridden"},
	})
	ts := tools(t, s)
	if got := ts["fs__env"].Execute(t.Context(), tool.Invocation{}); got.Output != "hello world" {
		t.Errorf("env tool = %+v, want hello world", got)
	}
}

func TestStartFailureIsAProblemAtTheServer(t *testing.T) {
	pos := workflow.Pos{File: "wf.yaml", Line: 4, Col: 3}
	tests := []struct {
		name string
		spec workflow.MCPServer
		srv  string
		want string
	}{
		{"no such command", workflow.MCPServer{Command: "/nonexistent/awf-mcp-server", Pos: pos}, "gone", `start MCP server "gone"`},
		{"not an MCP server", workflow.MCPServer{Command: "true", Pos: pos}, "quiet", `start MCP server "quiet"`},
		{"bad name", workflow.MCPServer{Command: serverBin, Pos: pos}, "a__b", `MCP server name "a__b"`},
		{"nothing to start", workflow.MCPServer{Pos: pos}, "empty", "needs a command or a url"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSource(t, SourceConfig{Servers: map[string]workflow.MCPServer{tc.srv: tc.spec}, StartTimeout: 10 * time.Second})
			set, err := s.Load()
			if err != nil {
				t.Fatalf("Load() = %v, want problems in the set", err)
			}
			if len(set.Problems) != 1 || set.Problems[0].Pos != pos || !strings.Contains(set.Problems[0].Msg, tc.want) {
				t.Fatalf("Load() problems = %v, want one at %v mentioning %q", set.Problems, pos, tc.want)
			}
			if fault.KindOf(set.Problems.Err()) != fault.Invalid {
				t.Errorf("problems error kind = %v, want invalid", fault.KindOf(set.Problems.Err()))
			}
		})
	}
}

func TestForWorkflowStartsOnlyReferencedServers(t *testing.T) {
	wf := &workflow.Workflow{
		MCPServers: map[string]workflow.MCPServer{
			"fs":     {Command: serverBin},
			"unused": {Command: "/nonexistent/would-fail"},
		},
		Steps: []workflow.Step{{Name: "a", Type: workflow.StepAgent, Agent: &workflow.AgentStep{Tools: []string{"fs.echo", "read_file"}}}},
	}
	s := ForWorkflow(wf, SourceConfig{Log: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { s.Close() })
	set, err := s.Load()
	if err != nil || len(set.Problems) > 0 {
		t.Fatalf("Load() = %v, %v; the unused server must not start", set.Problems, err)
	}
	if _, started := s.conns["unused"]; started {
		t.Errorf("the unused server was started")
	}

	empty := ForWorkflow(&workflow.Workflow{MCPServers: wf.MCPServers}, SourceConfig{})
	set, err = empty.Load()
	if err != nil || len(set.Tools) > 0 || len(empty.conns) > 0 {
		t.Errorf("Load() of a workflow using no server = %v, %v, %d sessions; want nothing started", set, err, len(empty.conns))
	}
}

func TestExpand(t *testing.T) {
	s := newSource(t, SourceConfig{})
	tests := []struct {
		names   []string
		want    []string
		wantErr string
	}{
		{[]string{"fs.echo", "read_file"}, []string{"fs__echo", "read_file"}, ""},
		{[]string{"fs__echo", "fs.echo"}, []string{"fs__echo"}, ""},
		{[]string{"fs.get.data"}, []string{"fs__get_data"}, ""},
		{[]string{"fs.*"}, []string{"fs__add", "fs__crash", "fs__echo", "fs__fail", "fs__get_data", "fs__hang", "fs__write_note"}, ""},
		{[]string{"summarize@^1.0", "official/summarize"}, []string{"summarize@^1.0", "official/summarize"}, ""},
		{[]string{"fs.ecko"}, nil, `MCP server "fs" has no tool "ecko" (did you mean "echo"?)`},
		{[]string{"fs__ecko"}, nil, `MCP server "fs" has no tool "ecko"`},
		{[]string{"fz.echo"}, nil, `no MCP server "fz" is declared in mcp_servers (did you mean "fs"?)`},
	}
	for _, tc := range tests {
		got, err := s.Expand(tc.names)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || fault.KindOf(err) != fault.Invalid {
				t.Errorf("Expand(%q) = %v, %v; want an invalid error containing %q", tc.names, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Expand(%q) = %v", tc.names, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Expand(%q) (-want +got):\n%s", tc.names, diff)
		}
	}
}

func TestResolveRewritesTheWorkflow(t *testing.T) {
	pos := workflow.Pos{File: "wf.yaml", Line: 20, Col: 5}
	wf := &workflow.Workflow{
		MCPServers: map[string]workflow.MCPServer{"fs": {Command: serverBin}},
		Approval: &workflow.ApprovalPolicy{Rules: []workflow.ApprovalRule{
			{Tool: "fs.write_*", Decision: "deny"}, {Tool: "fs.*", Decision: "auto"}, {Tool: "shell", Decision: "prompt"},
		}},
		Steps: []workflow.Step{
			{Name: "a", Agent: &workflow.AgentStep{Tools: []string{"fs.echo", "fs.add", "grep"}}},
			{Name: "p", Parallel: &workflow.ParallelStep{Steps: []workflow.Step{
				{Name: "b", Tool: &workflow.ToolStep{Tool: "fs.write_note"}},
				{Name: "c", Tool: &workflow.ToolStep{Tool: "fs.*"}, Fields: map[string]workflow.Pos{"tool": pos}},
				{Name: "d", Agent: &workflow.AgentStep{Tools: []string{"fs.nope"}}, Fields: map[string]workflow.Pos{"tools": pos}},
			}}},
		},
	}
	s := ForWorkflow(wf, SourceConfig{Log: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { s.Close() })
	probs := s.Resolve(wf)

	if diff := cmp.Diff([]string{"fs__echo", "fs__add", "grep"}, wf.Steps[0].Agent.Tools); diff != "" {
		t.Errorf("agent tools (-want +got):\n%s", diff)
	}
	if got := wf.Steps[1].Parallel.Steps[0].Tool.Tool; got != "fs__write_note" {
		t.Errorf("tool step tool = %q, want fs__write_note", got)
	}
	var rules []string
	for _, r := range wf.Approval.Rules {
		rules = append(rules, r.Tool)
	}
	if diff := cmp.Diff([]string{"fs__write_*", "fs__*", "shell"}, rules); diff != "" {
		t.Errorf("approval rule tools (-want +got):\n%s", diff)
	}
	if len(probs) != 2 {
		t.Fatalf("Resolve() problems = %v, want 2", probs)
	}
	for i, want := range []string{"names 7 tools; a tool step calls one", `has no tool "nope"`} {
		if probs[i].Pos != pos || !strings.Contains(probs[i].Msg, want) {
			t.Errorf("problem %d = %v, want one at %v containing %q", i, probs[i], pos, want)
		}
	}
}

func TestHTTPServer(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "remote"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "shout", Description: "Upper-case the text."},
		func(_ context.Context, _ *sdk.CallToolRequest, in struct {
			Text string `json:"text"`
		}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.ToUpper(in.Text)}}}, nil, nil
		})
	hs := httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	t.Cleanup(hs.Close)

	s := newSource(t, SourceConfig{Servers: map[string]workflow.MCPServer{"web": {URL: "${BASE}/mcp"}},
		Environ: []string{"BASE=" + hs.URL}})
	ts := tools(t, s)
	got := ts["web__shout"].Execute(t.Context(), tool.Invocation{Args: map[string]any{"text": "hi"}})
	if got.Output != "HI" {
		t.Errorf("web__shout = %+v, want HI", got)
	}
	if ann := ts["web__shout"].(tool.Annotated).Annotations(); ann.ReadOnly {
		t.Errorf("web__shout is read-only without the server saying so")
	}
	hs.CloseClientConnections()
	hs.Close()
	if got := ts["web__shout"].Execute(t.Context(), tool.Invocation{Args: map[string]any{"text": "hi"}}); got.Succeeded() {
		t.Errorf("call after the HTTP server went away = %+v, want an error result", got)
	}
}

func TestListTools(t *testing.T) {
	list, err := ListTools(map[string]workflow.MCPServer{"fs": {Command: serverBin}}, SourceConfig{})
	if err != nil {
		t.Fatalf("ListTools() = %v", err)
	}
	if len(list) != 7 || list[2] != (Imported{Name: "fs__echo", Ref: "fs.echo", Server: "fs", Tool: "echo",
		Description: "Echo the text back.", ReadOnly: true}) {
		t.Errorf("ListTools() = %+v", list)
	}
	_, err = ListTools(map[string]workflow.MCPServer{"gone": {Command: "/nonexistent/x"}}, SourceConfig{})
	if err == nil || !strings.Contains(err.Error(), `start MCP server "gone"`) {
		t.Errorf("ListTools() of a server that does not start = %v", err)
	}
}
