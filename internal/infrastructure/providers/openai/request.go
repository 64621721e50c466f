package openai

import (
	"maps"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/chat"
)

// request is the body of POST /chat/completions; options are merged in beside these fields.
type request struct {
	Model         string              `json:"model"`
	Messages      []message           `json:"messages"`
	Tools         []chat.FunctionTool `json:"tools,omitempty"`
	Stream        bool                `json:"stream,omitempty"`
	StreamOptions *streamOptions      `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// message is one chat message. Content is null only for an assistant message that carries
// nothing but tool calls, as OpenAI itself sends it.
type message struct {
	Role       string     `json:"role"`
	Content    *string    `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Function function `json:"function"`
}

type function struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// encodeRequest builds the request body. Every option but "model" is passed through as a
// top-level field (temperature, max_tokens, top_p, seed, stop, response_format, and whatever a
// compatible server adds), so the API, not awf, judges them.
func encodeRequest(model string, req ports.ChatRequest, stream bool) ([]byte, error) {
	msgs, err := encodeMessages(req.System, req.Messages)
	if err != nil {
		return nil, err
	}
	r := request{Model: model, Messages: msgs, Tools: chat.FunctionTools(req.Tools)}
	if stream {
		r.Stream, r.StreamOptions = true, &streamOptions{IncludeUsage: true}
	}
	body, err := chat.Encode(r)
	if err != nil {
		return nil, fault.New(fault.System, "%s: encode request: %w", name, err)
	}
	opts := maps.Clone(req.Options)
	delete(opts, "model")
	return chat.Merge(name, body, opts, "messages", "tools", "stream", "stream_options")
}

func encodeMessages(system string, in []state.Message) ([]message, error) {
	out := make([]message, 0, len(in)+1)
	if system != "" {
		out = append(out, message{Role: "system", Content: &system})
	}
	for i, m := range in {
		content := m.Content
		msg := message{Role: m.Role, Content: &content}
		switch m.Role {
		case "system", "user":
		case "assistant":
			for _, c := range m.ToolCalls {
				args := c.Arguments
				if args == "" {
					args = "{}"
				}
				msg.ToolCalls = append(msg.ToolCalls, toolCall{ID: c.ID, Type: "function", Function: function{Name: c.Name, Arguments: args}})
			}
			if content == "" && len(msg.ToolCalls) > 0 {
				msg.Content = nil
			}
		case "tool":
			// The API has no error flag for results; the text says what went wrong.
			msg.ToolCallID = m.ToolCallID
		default:
			return nil, fault.New(fault.Invalid, "%s: message %d has unknown role %q", name, i, m.Role)
		}
		out = append(out, msg)
	}
	return out, nil
}
