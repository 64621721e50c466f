package cliagent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/pkg/toolparse"
)

func TestBuildPrompt(t *testing.T) {
	req := ports.ChatRequest{
		System: "You are careful.",
		Tools: []ports.ToolSchema{{Name: "read_file", Description: "Read a file.",
			Parameters: json.RawMessage(`{"type": "object", "properties": {"path": {"type": "string"}}}`)}},
		Messages: []state.Message{
			{Role: "user", Content: "Look at a.go"},
			{Role: "assistant", Content: "Reading.", ToolCalls: []state.CallRef{{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go","n":2}`}}},
			{Role: "tool", ToolCallID: "call_1", Name: "read_file", Content: "package a\n"},
			{Role: "tool", ToolCallID: "call_2", Name: "read_file", Content: "Denied: outside the project", IsError: true},
		},
	}
	want := `You are careful.

# Tools

You can call the tools below. To call tools, end your message with the calls, written exactly in this form:

<function_calls>
<invoke name="TOOL_NAME">
<parameter name="PARAMETER_NAME">value</parameter>
</invoke>
</function_calls>

Put one <invoke> per call inside one <function_calls> block. Write array and object values as JSON. The calls are run for you and their results come back in the next message. When you have finished, answer in plain text without any call.

## read_file

Read a file.

Parameters (JSON Schema): {"type":"object","properties":{"path":{"type":"string"}}}

# Conversation

[user]
Look at a.go

[assistant]
Reading.
<function_calls>
<invoke name="read_file">
<parameter name="n">2</parameter>
<parameter name="path">a.go</parameter>
</invoke>
</function_calls>

[tool result: read_file call_1]
package a

[tool error: read_file call_2]
Denied: outside the project

# Your turn

Write the assistant's next message, and only that. Call tools in the form described above, or answer in plain text when you are done.
`
	if diff := cmp.Diff(want, buildPrompt(req, FormatXML)); diff != "" {
		t.Errorf("xml prompt (-want +got):\n%s", diff)
	}
	json := buildPrompt(req, FormatJSON)
	for _, s := range []string{jsonForm, "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\":\"a.go\",\"n\":2}}\n</tool_call>"} {
		if !strings.Contains(json, s) {
			t.Errorf("json prompt lacks %q:\n%s", s, json)
		}
	}
}

// The calls a transcript shows must read back as the calls they were, in both forms (XML
// values are trimmed, so the content here has no trailing newline).
func TestRenderedCallsParse(t *testing.T) {
	calls := []state.CallRef{
		{ID: "call_1", Name: "read_file", Arguments: `{"path":"a.go","n":2,"deep":{"x":[1,true]}}`},
		{ID: "call_2", Name: "write_file", Arguments: `{"path":"b.go","content":"package b\n\nfunc B() {}"}`},
	}
	schemas := map[string]json.RawMessage{
		"read_file":  json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"deep":{"type":"object"}}}`),
		"write_file": json.RawMessage(`{"type":"object"}`),
	}
	for _, format := range []string{FormatXML, FormatJSON} {
		t.Run(format, func(t *testing.T) {
			res, err := toolparse.Parse(renderCalls(calls, format), toolparse.Options{Tools: []string{"read_file", "write_file"}, Schemas: schemas})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Calls) != 2 {
				t.Fatalf("calls = %+v", res.Calls)
			}
			for i, c := range res.Calls {
				var got, want any
				_ = json.Unmarshal(c.Arguments, &got)
				_ = json.Unmarshal([]byte(calls[i].Arguments), &want)
				if c.Name != calls[i].Name || !cmp.Equal(got, want) {
					t.Errorf("call %d = %s %s, want %s %s", i, c.Name, c.Arguments, calls[i].Name, calls[i].Arguments)
				}
			}
		})
	}
}

func TestPlainCompletion(t *testing.T) {
	req := ports.ChatRequest{System: "Be brief.", Messages: []state.Message{{Role: "user", Content: "Say hi."}}}
	if got := buildPrompt(req, FormatJSON); got != "Be brief.\n\nSay hi." {
		t.Errorf("prompt = %q, want the system prompt and the message only", got)
	}
}
