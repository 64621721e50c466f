package anthropic

import (
	"encoding/json"
	"maps"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/chat"
)

// request is the body of POST /v1/messages; options are merged in beside these fields.
type request struct {
	Model         string    `json:"model"`
	MaxTokens     int       `json:"max_tokens"`
	System        string    `json:"system,omitempty"`
	Messages      []message `json:"messages"`
	Tools         []tool    `json:"tools,omitempty"`
	StopSequences []string  `json:"stop_sequences,omitempty"`
	Stream        bool      `json:"stream,omitempty"`
}

type message struct {
	Role    string  `json:"role"`
	Content []block `json:"content"`
}

// block is a content block of a request: text, tool_use, tool_result, or a thinking or
// redacted_thinking block going back as the model sent it.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	Data      string          `json:"data,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
	ToolUseID string          `json:"tool_use_id,omitempty"`
	Content   string          `json:"content,omitempty"`
	IsError   bool            `json:"is_error,omitempty"`
}

type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// dropped are options of other APIs that the Messages API lacks; a workflow that switches
// provider keeps working without them.
var dropped = []string{"seed", "response_format", "frequency_penalty", "presence_penalty"}

// encodeRequest builds the request body. max_tokens and stop (as stop_sequences) are read from
// the options; options the API lacks ([dropped]) are left out; the rest (temperature, top_p,
// top_k, tool_choice, thinking, metadata, ...) are passed through for the API to judge.
func encodeRequest(model string, req ports.ChatRequest, stream bool) ([]byte, error) {
	opts := maps.Clone(req.Options)
	delete(opts, "model")
	for _, k := range dropped {
		delete(opts, k)
	}
	r := request{Model: model, MaxTokens: DefaultMaxTokens, Stream: stream, Tools: encodeTools(req.Tools)}
	if v, ok := opts["max_tokens"]; ok {
		n, ok := integer(v)
		if !ok || n <= 0 {
			return nil, fault.New(fault.Invalid, "%s: option max_tokens: want a positive integer, got %v", name, v)
		}
		r.MaxTokens = n
		delete(opts, "max_tokens")
	}
	if v, ok := opts["stop"]; ok {
		stops, ok := chat.Strings(v)
		if !ok {
			return nil, fault.New(fault.Invalid, "%s: option stop: want a string or a list of strings, got %v", name, v)
		}
		r.StopSequences = stops
		delete(opts, "stop")
	}
	var err error
	if r.System, r.Messages, err = encodeMessages(req.System, req.Messages); err != nil {
		return nil, err
	}
	body, err := chat.Encode(r)
	if err != nil {
		return nil, fault.New(fault.System, "%s: encode request: %w", name, err)
	}
	return chat.Merge(name, body, opts, "messages", "system", "tools", "stream")
}

// encodeMessages turns the conversation into the API's shape: system messages join the
// top-level system prompt; tool results become tool_result blocks of a user message; and
// consecutive messages of one role merge into one, as the API requires alternating roles.
func encodeMessages(system string, in []state.Message) (string, []message, error) {
	prompts := []string{}
	if system != "" {
		prompts = append(prompts, system)
	}
	var out []message
	for i, m := range in {
		var role string
		var blocks []block
		switch m.Role {
		case "system":
			if m.Content != "" {
				prompts = append(prompts, m.Content)
			}
			continue
		case "user":
			role, blocks = "user", textBlocks(m.Content)
		case "assistant":
			role, blocks = "assistant", append(thinkingBlocks(m.Thinking), textBlocks(m.Content)...)
			for _, c := range m.ToolCalls {
				blocks = append(blocks, block{Type: "tool_use", ID: c.ID, Name: c.Name, Input: chat.Object(c.Arguments)})
			}
		case "tool":
			if m.ToolCallID == "" {
				return "", nil, fault.New(fault.Invalid, "%s: message %d: tool result without tool_call_id", name, i)
			}
			role, blocks = "user", []block{{Type: "tool_result", ToolUseID: m.ToolCallID, Content: m.Content, IsError: m.IsError}}
		default:
			return "", nil, fault.New(fault.Invalid, "%s: message %d has unknown role %q", name, i, m.Role)
		}
		if len(blocks) == 0 {
			continue // the API refuses empty content
		}
		if n := len(out); n > 0 && out[n-1].Role == role {
			out[n-1].Content = append(out[n-1].Content, blocks...)
			continue
		}
		out = append(out, message{Role: role, Content: blocks})
	}
	return strings.Join(prompts, "\n\n"), out, nil
}

// thinkingBlocks returns a reply's thinking as the API sent it: a thinking block with its text
// and signature, or a redacted_thinking block with its data. The API checks the signatures and
// refuses a tool-use turn that comes back without its thinking, so nothing is left out.
func thinkingBlocks(in []state.Thinking) []block {
	out := make([]block, 0, len(in))
	for _, t := range in {
		if t.Redacted != "" {
			out = append(out, block{Type: "redacted_thinking", Data: t.Redacted})
			continue
		}
		out = append(out, block{Type: "thinking", Thinking: &t.Text, Signature: &t.Signature})
	}
	return out
}

// textBlocks is a text block, or none for empty text (which the API refuses).
func textBlocks(text string) []block {
	if strings.TrimSpace(text) == "" {
		return nil
	}
	return []block{{Type: "text", Text: text}}
}

func encodeTools(in []ports.ToolSchema) []tool {
	out := make([]tool, 0, len(in))
	for _, t := range in {
		out = append(out, tool{Name: t.Name, Description: t.Description, InputSchema: chat.Schema(t.Parameters)})
	}
	return out
}

// integer reads a whole number from an option value, as YAML or JSON decoding left it.
func integer(v any) (int, bool) {
	switch n := v.(type) {
	case int:
		return n, true
	case int64:
		return int(n), true
	case uint64:
		return int(n), true
	case float64:
		return int(n), n == float64(int(n))
	case json.Number:
		i, err := n.Int64()
		return int(i), err == nil
	}
	return 0, false
}
