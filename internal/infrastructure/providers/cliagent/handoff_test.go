package cliagent_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/providers/cliagent"
)

// handoffSetup writes a configuration file into the run's directory, as mcp.SetupAgent does,
// tells the agent where its server records calls (AGENT_CALLS), and remembers the turns.
func handoffSetup(dirs *[]string) func(cliagent.HandoffTurn) ([]string, []string, error) {
	return func(turn cliagent.HandoffTurn) ([]string, []string, error) {
		*dirs = append(*dirs, turn.Dir)
		if turn.CallsFile != filepath.Join(turn.Dir, cliagent.CallsFileName) {
			return nil, nil, fmt.Errorf("calls file %q is not %s in the turn's directory", turn.CallsFile, cliagent.CallsFileName)
		}
		file := filepath.Join(turn.Dir, "awf-mcp.json")
		if err := os.WriteFile(file, []byte(`{"mcpServers":{"awf":{}}}`), 0o600); err != nil {
			return nil, nil, err
		}
		return []string{"--mcp-config", file, "--allowedTools", "mcp__awf"},
			[]string{"AGENT_CONFIG=" + file, "AGENT_CALLS=" + turn.CallsFile}, nil
	}
}

// TestHandoff runs an agent CLI handed the tools through MCP: its configuration is written
// for the run and removed after it, the arguments go after the command's own (after a
// prompt argument too), the prompt names the tools without a call form, and the reply is the
// answer as it is, never parsed for calls.
func TestHandoff(t *testing.T) {
	for _, promptArg := range []bool{false, true} {
		t.Run(map[bool]string{false: "prompt on stdin", true: "prompt as argument"}[promptArg], func(t *testing.T) {
			seen := t.TempDir()
			cfg := cliagent.Config{Command: "sh", Args: []string{"testdata/agent.sh"}, Env: append(os.Environ(), "SEEN="+seen)}
			if promptArg {
				cfg.Args = append(cfg.Args, "{{prompt}}")
				cfg.Env = append(cfg.Env, "PROMPT_ARG=1")
			}
			var dirs []string
			base := newClient(t, cfg)
			c := base.WithHandoff(cliagent.Handoff{Server: "awf", Setup: handoffSetup(&dirs)})
			if base.Handoff() != nil || c.Handoff() == nil {
				t.Fatalf("WithHandoff changed the original client or did not set the hand-off")
			}
			var streamed string
			req := firstTurn()
			req.OnDelta = func(s string) { streamed += s }
			resp, err := c.Chat(t.Context(), req)
			if err != nil {
				t.Fatal(err)
			}
			want := "config: {\"mcpServers\":{\"awf\":{}}}\nDone: the file defines Greet.\n<tool_call>\n" +
				"{\"name\": \"read_file\", \"arguments\": {\"path\": \"greet.go\"}}\n</tool_call>"
			if resp.Content != want || len(resp.ToolCalls) != 0 || resp.FinishReason != "stop" {
				t.Errorf("Chat() = %q with %d calls (%s), want the whole text and no call", resp.Content, len(resp.ToolCalls), resp.FinishReason)
			}
			if streamed != want {
				t.Errorf("OnDelta got %q, want the answer", streamed)
			}
			if len(dirs) != 1 {
				t.Fatalf("Setup ran %d times, want once", len(dirs))
			}
			if _, err := os.Stat(dirs[0]); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the configuration directory %s is still there after the run (%v)", dirs[0], err)
			}
			args := strings.Split(strings.TrimSuffix(read(t, seen, "args"), "\x00"), "\x00")
			wantArgs := []string{"--mcp-config", filepath.Join(dirs[0], "awf-mcp.json"), "--allowedTools", "mcp__awf"}
			if promptArg {
				args = append(args[:0:0], args[1:]...) // the prompt, checked below
			}
			if diff := cmp.Diff(wantArgs, args); diff != "" {
				t.Errorf("arguments (-want +got):\n%s", diff)
			}
			prompt := read(t, seen, "prompt")
			for _, s := range []string{"You are careful.", `The MCP server "awf" gives you the tools below`, "- read_file: Read a file.", "What does greet.go define?"} {
				if !strings.Contains(prompt, s) {
					t.Errorf("the prompt lacks %q:\n%s", s, prompt)
				}
			}
			for _, s := range []string{"<tool_call>", "<function_calls>", "Parameters (JSON Schema)"} {
				if strings.Contains(prompt, s) {
					t.Errorf("the prompt asks for calls in the text (%q):\n%s", s, prompt)
				}
			}
		})
	}
}

// TestHandoffTurnWithoutTools runs a turn offered no tools (the last one after max_calls) as
// a plain completion: no configuration is written.
func TestHandoffTurnWithoutTools(t *testing.T) {
	var dirs []string
	c := newClient(t, cliagent.Config{Command: "sh", Args: []string{"testdata/arg.sh", "{{prompt}}"}}).
		WithHandoff(cliagent.Handoff{Server: "awf", Setup: handoffSetup(&dirs)})
	resp, err := c.Chat(t.Context(), ports.ChatRequest{Messages: []state.Message{{Role: "user", Content: "say hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "arg=say hi stdin=" || len(dirs) != 0 {
		t.Errorf("Chat() = %q after %d setups, want the plain completion and none", resp.Content, len(dirs))
	}
}

func TestHandoffSetupFails(t *testing.T) {
	c := newClient(t, cliagent.Config{Command: "sh testdata/fail.sh"}).WithHandoff(cliagent.Handoff{Server: "awf",
		Setup: func(cliagent.HandoffTurn) ([]string, []string, error) { return nil, nil, errors.New("disk full") }})
	_, err := c.Chat(t.Context(), firstTurn())
	if fault.KindOf(err) != fault.System || err == nil || !strings.Contains(err.Error(), "MCP configuration: disk full") {
		t.Errorf("err = %v (kind %v), want a system error about the configuration", err, fault.KindOf(err))
	}
}

// TestHandoffConversation sends a later turn as a transcript of the text exchanged so far.
func TestHandoffConversation(t *testing.T) {
	seen := t.TempDir()
	var dirs []string
	c := newClient(t, cliagent.Config{Command: "sh", Args: []string{"testdata/agent.sh"}, Env: append(os.Environ(), "SEEN="+seen)}).
		WithHandoff(cliagent.Handoff{Server: "tools", Setup: handoffSetup(&dirs)})
	req := firstTurn()
	req.Messages = append(req.Messages, state.Message{Role: "assistant", Content: "It defines Greet."},
		state.Message{Role: "user", Content: "Reply as JSON."})
	if _, err := c.Chat(t.Context(), req); err != nil {
		t.Fatal(err)
	}
	prompt := read(t, seen, "prompt")
	for _, s := range []string{`The MCP server "tools"`, "# Conversation", "[assistant]\nIt defines Greet.", "[user]\nReply as JSON.", "# Your turn"} {
		if !strings.Contains(prompt, s) {
			t.Errorf("the prompt lacks %q:\n%s", s, prompt)
		}
	}
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Lines of a calls file as `awf mcp serve --calls-file` writes them.
const (
	greetCall  = `{"id":"c1","tool":"read_file","arguments":{"path":"greet.go","limit":20},"result":{"success":true,"output":"package sample","duration_ms":3,"approval":"auto"}}`
	deniedCall = `{"id":"c2","tool":"write_file","arguments":{"path":"x"},"result":{"success":false,"error":"denied: approval required","duration_ms":0,"approval":"non_interactive","denied":true}}`
)

var (
	greetRecord = state.ToolCallRecord{ID: "c1", Tool: "read_file",
		Arguments: map[string]any{"path": "greet.go", "limit": json.Number("20")},
		Result:    &state.ToolCallResult{Success: true, Output: "package sample", DurationMs: 3, Approval: "auto"}}
	deniedRecord = state.ToolCallRecord{ID: "c2", Tool: "write_file", Arguments: map[string]any{"path": "x"},
		Result: &state.ToolCallResult{Error: "denied: approval required", Approval: "non_interactive", Denied: true}}
)

// TestHandoffReturnsHandledCalls reads back the calls the agent's server recorded in the
// turn's calls file: whole lines are the reply's HandledCalls, a torn last line (the server
// killed while writing) is left out, no file means no calls, a line that is not a record
// is an error, and an agent that fails after making calls returns them with its error.
func TestHandoffReturnsHandledCalls(t *testing.T) {
	tests := []struct {
		name     string
		calls    string // what the agent's server appends; "" writes no file
		exit     string
		want     []state.ToolCallRecord
		wantErr  string
		wantKind fault.Kind
	}{
		{name: "two calls", calls: greetCall + "\n" + deniedCall + "\n", want: []state.ToolCallRecord{greetRecord, deniedRecord}},
		{name: "torn last line", calls: greetCall + "\n" + deniedCall[:40], want: []state.ToolCallRecord{greetRecord}},
		{name: "whole last line without its newline", calls: greetCall + "\n" + deniedCall, want: []state.ToolCallRecord{greetRecord, deniedRecord}},
		{name: "no server started", calls: ""},
		{name: "blank lines", calls: "\n" + greetCall + "\n\n", want: []state.ToolCallRecord{greetRecord}},
		{name: "not a record", calls: greetCall + "\n{\"id\":\"c9\"}\n" + deniedCall + "\n", want: []state.ToolCallRecord{greetRecord},
			wantErr: "calls.jsonl:2: not a call record: no id, tool or result", wantKind: fault.System},
		{name: "garbage", calls: "not json\n", wantErr: "calls.jsonl:1: not a call record", wantKind: fault.System},
		{name: "agent fails after calls", calls: greetCall + "\n", exit: "3", want: []state.ToolCallRecord{greetRecord},
			wantErr: "exited with status 3", wantKind: fault.Execution},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := append(os.Environ(), "SEEN="+t.TempDir(), "CALLS="+tc.calls, "EXIT="+tc.exit)
			var dirs []string
			c := newClient(t, cliagent.Config{Command: "sh", Args: []string{"testdata/agent.sh"}, Env: env}).
				WithHandoff(cliagent.Handoff{Server: "awf", Setup: handoffSetup(&dirs)})
			resp, err := c.Chat(t.Context(), firstTurn())
			if tc.wantErr == "" && err != nil {
				t.Fatalf("Chat() = %v", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr) || fault.KindOf(err) != tc.wantKind) {
				t.Fatalf("Chat() error = %v (kind %v), want %v containing %q", err, fault.KindOf(err), tc.wantKind, tc.wantErr)
			}
			if diff := cmp.Diff(tc.want, resp.HandledCalls); diff != "" {
				t.Errorf("HandledCalls (-want +got):\n%s", diff)
			}
			if tc.wantErr == "" && !strings.HasPrefix(resp.Content, "config: ") {
				t.Errorf("Content = %q, want the agent's answer", resp.Content)
			}
			if _, err := os.Stat(dirs[0]); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the turn's directory (and calls file) %s is still there (%v)", dirs[0], err)
			}
		})
	}
}
