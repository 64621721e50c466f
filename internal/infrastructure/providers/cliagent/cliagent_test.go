package cliagent_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/providers/cliagent"
)

var readFile = ports.ToolSchema{Name: "read_file", Description: "Read a file.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"limit":{"type":"integer"}},"required":["path"]}`)}

func newClient(t *testing.T, cfg cliagent.Config) *cliagent.Client {
	t.Helper()
	c, err := cliagent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func firstTurn() ports.ChatRequest {
	return ports.ChatRequest{System: "You are careful.", Tools: []ports.ToolSchema{readFile},
		Messages: []state.Message{{Role: "user", Content: "What does greet.go define?"}}}
}

// secondTurn is the conversation after the first call, whose id was callID.
func secondTurn(callID string) ports.ChatRequest {
	req := firstTurn()
	req.Messages = append(req.Messages,
		state.Message{Role: "assistant", ToolCalls: []state.CallRef{{ID: callID, Name: "read_file", Arguments: `{"path":"greet.go","limit":20}`}}},
		state.Message{Role: "tool", ToolCallID: callID, Name: "read_file", Content: "package sample\nfunc Greet() {}"})
	return req
}

func TestEveryCallFormat(t *testing.T) {
	tests := []struct{ format, content string }{
		{"xml", "I will read the file first."},
		{"json", "I will read the file first."},
		{"fence", ""},
		{"mistral", ""},
		{"pythonic", ""},
		{"openai", ""},
	}
	for _, tc := range tests {
		t.Run(tc.format, func(t *testing.T) {
			c := newClient(t, cliagent.Config{Command: "sh", Args: []string{"testdata/model.sh"},
				Env: append(os.Environ(), "FORMAT="+tc.format)})
			resp, err := c.Chat(t.Context(), firstTurn())
			if err != nil {
				t.Fatal(err)
			}
			if resp.Content != tc.content {
				t.Errorf("Content = %q, want %q", resp.Content, tc.content)
			}
			if len(resp.ToolCalls) != 1 {
				t.Fatalf("ToolCalls = %+v, want one call", resp.ToolCalls)
			}
			got := resp.ToolCalls[0]
			var args map[string]any
			if err := json.Unmarshal([]byte(got.Arguments), &args); err != nil {
				t.Fatalf("arguments %q: %v", got.Arguments, err)
			}
			if got.ID != "call_1" || got.Name != "read_file" || !cmp.Equal(args, map[string]any{"path": "greet.go", "limit": float64(20)}) {
				t.Errorf("call = %+v, want call_1 read_file {path: greet.go, limit: 20}", got)
			}
			resp, err = c.Chat(t.Context(), secondTurn(got.ID))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Content != "greet.go defines Greet." || len(resp.ToolCalls) != 0 {
				t.Errorf("second turn = %+v, want the answer without calls", resp)
			}
		})
	}
}

func TestCallIDsContinueTheConversation(t *testing.T) {
	c := newClient(t, cliagent.Config{Command: "sh", Args: []string{"testdata/repair.sh"}})
	req := secondTurn("call_1")
	req.Messages = append(req.Messages, state.Message{Role: "user", Content: "could not be read"})
	resp, err := c.Chat(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].ID != "call_2" {
		t.Errorf("calls = %+v, want one numbered after the conversation's", resp.ToolCalls)
	}
}

func TestMalformedCallIsSentBack(t *testing.T) {
	c := newClient(t, cliagent.Config{Command: "sh testdata/repair.sh"})
	resp, err := c.Chat(t.Context(), firstTurn())
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].Arguments != `{"path":"greet.go"}` {
		t.Errorf("calls = %+v, want the repaired call", resp.ToolCalls)
	}

	never := newClient(t, cliagent.Config{Command: "sh testdata/repair.sh", MaxRepairs: -1})
	_, err = never.Chat(t.Context(), firstTurn())
	if fault.KindOf(err) != fault.Execution || !strings.Contains(err.Error(), "could not be read after 1 attempts") {
		t.Errorf("err = %v, want an execution error about the malformed call", err)
	}
}

func TestCommandErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  cliagent.Config
		kind fault.Kind
		want string
	}{
		{"exit status", cliagent.Config{Command: "sh testdata/fail.sh"}, fault.Execution, "sh exited with status 3: error: rate limited, try again later"},
		{"not found", cliagent.Config{Command: "awf-no-such-model -p"}, fault.Usage, `command "awf-no-such-model" not found`},
		{"timeout", cliagent.Config{Command: "sleep 30", Timeout: 50 * time.Millisecond}, fault.Execution, "sleep did not answer within 50ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newClient(t, tc.cfg).Chat(t.Context(), firstTurn())
			if fault.KindOf(err) != tc.kind || err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v (kind %v), want %v containing %q", err, fault.KindOf(err), tc.kind, tc.want)
			}
		})
	}
}

func TestPromptAsArgument(t *testing.T) {
	c := newClient(t, cliagent.Config{Command: "sh", Args: []string{"testdata/arg.sh", "{{prompt}}"}})
	resp, err := c.Chat(t.Context(), ports.ChatRequest{Messages: []state.Message{{Role: "user", Content: "say hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "arg=say hi stdin=" {
		t.Errorf("Content = %q, want the prompt as the argument and nothing on stdin", resp.Content)
	}
}

func TestNew(t *testing.T) {
	tests := []struct {
		name   string
		cfg    cliagent.Config
		format string
		err    string
	}{
		{"claude is xml", cliagent.Config{Command: "claude -p"}, "xml", ""},
		{"claude by path", cliagent.Config{Command: "/usr/local/bin/claude", Args: []string{"-p"}}, "xml", ""},
		{"others are json", cliagent.Config{Command: "gemini -p"}, "json", ""},
		{"explicit", cliagent.Config{Command: "llm", ToolFormat: "xml"}, "xml", ""},
		{"quoted", cliagent.Config{Command: `llm -m "gpt 4o"`}, "json", ""},
		{"no command", cliagent.Config{}, "", "no command"},
		{"bad quote", cliagent.Config{Command: `llm "x`}, "", "unterminated"},
		{"bad format", cliagent.Config{Command: "llm", ToolFormat: "yaml"}, "", `tool_format "yaml"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := cliagent.New(tc.cfg)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) || fault.KindOf(err) != fault.Usage {
					t.Errorf("New = %v, want a usage error containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.Format() != tc.format {
				t.Errorf("Format = %q, want %q", c.Format(), tc.format)
			}
		})
	}
}
