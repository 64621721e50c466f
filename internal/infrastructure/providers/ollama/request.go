package ollama

import (
	"encoding/json"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/chat"
)

// request is the body of POST /api/chat. Stream is always sent: Ollama streams by default.
type request struct {
	Model     string              `json:"model"`
	Messages  []message           `json:"messages"`
	Tools     []chat.FunctionTool `json:"tools,omitempty"`
	Stream    bool                `json:"stream"`
	Format    any                 `json:"format,omitempty"`
	Options   map[string]any      `json:"options,omitempty"`
	KeepAlive any                 `json:"keep_alive,omitempty"`
	Think     any                 `json:"think,omitempty"`
}

// message is one chat message. A tool result names its tool (tool_name) and, for servers
// that read it, the call (tool_call_id).
type message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []toolCall `json:"tool_calls,omitempty"`
	ToolName   string     `json:"tool_name,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

type toolCall struct {
	ID       string       `json:"id,omitempty"`
	Function callFunction `json:"function"`
}

type callFunction struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// encodeRequest builds the request body. Options go where Ollama reads them: format,
// keep_alive and think at the top; response_format ({"type": "json_object"} or a json_schema)
// becomes format; max_tokens becomes options.num_predict; a stop string becomes a list; an
// "options" map and every other option (temperature, top_p, seed, num_ctx, ...) go in options.
func encodeRequest(model string, req ports.ChatRequest, stream bool) ([]byte, error) {
	msgs, err := encodeMessages(req.System, req.Messages)
	if err != nil {
		return nil, err
	}
	r := request{Model: model, Messages: msgs, Tools: chat.FunctionTools(req.Tools), Stream: stream}
	if err := applyOptions(&r, req.Options); err != nil {
		return nil, err
	}
	body, err := chat.Encode(r)
	if err != nil {
		return nil, fault.New(fault.Invalid, "%s: encode request: %w", name, err)
	}
	return body, nil
}

func applyOptions(r *request, opts map[string]any) error {
	if err := chat.CheckReserved(name, opts, "messages", "tools", "stream"); err != nil {
		return err
	}
	set := func(k string, v any) {
		if r.Options == nil {
			r.Options = map[string]any{}
		}
		r.Options[k] = v
	}
	for k, v := range opts {
		switch k {
		case "model":
		case "format":
			r.Format = v
		case "keep_alive":
			r.KeepAlive = v
		case "think":
			r.Think = v
		case "response_format":
			if f, ok := responseFormat(v); ok {
				r.Format = f
			} else {
				return fault.New(fault.Invalid, "%s: option response_format: want {type: json_object} or {type: json_schema, json_schema: {schema: ...}}, got %v", name, v)
			}
		case "max_tokens":
			set("num_predict", v)
		case "stop":
			stops, ok := chat.Strings(v)
			if !ok {
				return fault.New(fault.Invalid, "%s: option stop: want a string or a list of strings, got %v", name, v)
			}
			set("stop", stops)
		case "options":
			m, ok := v.(map[string]any)
			if !ok {
				return fault.New(fault.Invalid, "%s: option options: want a map, got %v", name, v)
			}
			for mk, mv := range m {
				set(mk, mv)
			}
		default:
			set(k, v)
		}
	}
	return nil
}

// responseFormat maps OpenAI's response_format onto Ollama's format: "json" or a schema; nil
// for plain text.
func responseFormat(v any) (any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	switch m["type"] {
	case "text":
		return nil, true
	case "json_object":
		return "json", true
	case "json_schema":
		js, _ := m["json_schema"].(map[string]any)
		if schema, ok := js["schema"]; ok {
			return schema, true
		}
	}
	return nil, false
}

func encodeMessages(system string, in []state.Message) ([]message, error) {
	out := make([]message, 0, len(in)+1)
	if system != "" {
		out = append(out, message{Role: "system", Content: system})
	}
	var names map[string]string
	for i, m := range in {
		msg := message{Role: m.Role, Content: m.Content}
		switch m.Role {
		case "system", "user":
		case "assistant":
			for _, c := range m.ToolCalls {
				msg.ToolCalls = append(msg.ToolCalls, toolCall{ID: c.ID, Function: callFunction{Name: c.Name, Arguments: chat.Object(c.Arguments)}})
			}
		case "tool":
			// The API has no error flag for results; the text says what went wrong.
			msg.ToolName, msg.ToolCallID = m.Name, m.ToolCallID
			if msg.ToolName == "" {
				if names == nil {
					names = chat.ToolNames(in)
				}
				msg.ToolName = names[m.ToolCallID]
			}
		default:
			return nil, fault.New(fault.Invalid, "%s: message %d has unknown role %q", name, i, m.Role)
		}
		out = append(out, msg)
	}
	return out, nil
}
