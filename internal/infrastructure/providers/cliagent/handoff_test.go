package cliagent_test

import (
	"errors"
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
// and remembers the directory.
func handoffSetup(dirs *[]string) func(string) ([]string, []string, error) {
	return func(dir string) ([]string, []string, error) {
		*dirs = append(*dirs, dir)
		file := filepath.Join(dir, "awf-mcp.json")
		if err := os.WriteFile(file, []byte(`{"mcpServers":{"awf":{}}}`), 0o600); err != nil {
			return nil, nil, err
		}
		return []string{"--mcp-config", file, "--allowedTools", "mcp__awf"}, []string{"AGENT_CONFIG=" + file}, nil
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
		Setup: func(string) ([]string, []string, error) { return nil, nil, errors.New("disk full") }})
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
