package anthropic

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/chat"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/httpx"
)

// response is a message, whole or as message_start announces it.
type response struct {
	Type       string          `json:"type"`
	Model      string          `json:"model"`
	Content    []contentBlock  `json:"content"`
	StopReason string          `json:"stop_reason"`
	Usage      usage           `json:"usage"`
	Error      json.RawMessage `json:"error"`
}

// contentBlock is a content block of a reply: text, tool_use, thinking (with its signature)
// or redacted_thinking (its data). Others awf does not use are read and ignored.
type contentBlock struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	Thinking  string          `json:"thinking"`
	Signature string          `json:"signature"`
	Data      string          `json:"data"`
}

// thinking is a thinking or redacted_thinking block as the state keeps it, false for other
// blocks.
func thinking(typ, text, signature, data string) (state.Thinking, bool) {
	switch typ {
	case "thinking":
		return state.Thinking{Text: text, Signature: signature}, true
	case "redacted_thinking":
		return state.Thinking{Redacted: data}, true
	}
	return state.Thinking{}, false
}

// usage counts tokens. Input is what the prompt cost: fresh, cache-written and cache-read
// tokens together.
type usage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

func (u usage) input() int {
	return u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
}

func tokens(input, output int) state.Tokens {
	return state.Tokens{Input: input, Output: output, Total: input + output}
}

// finishReason maps a stop_reason onto the neutral finish reasons.
func finishReason(stop string, hasCalls bool) string {
	switch stop {
	case "end_turn", "stop_sequence":
		stop = chat.FinishStop
	case "tool_use":
		stop = chat.FinishToolCalls
	case "max_tokens", "model_context_window_exceeded":
		stop = chat.FinishLength
	case "refusal":
		stop = chat.FinishRefusal
	}
	return chat.Finish(stop, hasCalls)
}

// decodeResponse reads a non-streamed message. Text blocks are joined; tool_use blocks become
// calls, numbered from firstID if a proxy left out their ids; thinking blocks are kept as
// they came.
func decodeResponse(body io.Reader, firstID int) (ports.ChatResponse, error) {
	r, data, err := chat.ReadJSON[response](name, body)
	if err != nil {
		return ports.ChatResponse{}, err
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		return ports.ChatResponse{}, streamError(r.Error)
	}
	if r.Type != "message" && r.Content == nil {
		return ports.ChatResponse{}, fault.New(fault.Execution, "%s: response is not a message: %s", name, chat.Snippet(data))
	}
	var text strings.Builder
	out := ports.ChatResponse{Model: r.Model, Usage: tokens(r.Usage.input(), r.Usage.OutputTokens)}
	for _, b := range r.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			id := b.ID
			if id == "" {
				id = chat.CallID(firstID + len(out.ToolCalls))
			}
			out.ToolCalls = append(out.ToolCalls, state.CallRef{ID: id, Name: b.Name, Arguments: chat.Arguments(b.Input)})
		default:
			if t, ok := thinking(b.Type, b.Thinking, b.Signature, b.Data); ok {
				out.Thinking = append(out.Thinking, t)
			}
		}
	}
	out.Content = text.String()
	out.FinishReason = finishReason(r.StopReason, len(out.ToolCalls) > 0)
	return out, nil
}

// errorStatus is the HTTP status that goes with each error type, for errors that arrive inside
// a stream.
var errorStatus = map[string]int{
	"invalid_request_error": 400,
	"authentication_error":  401,
	"billing_error":         402,
	"permission_error":      403,
	"not_found_error":       404,
	"request_too_large":     413,
	"rate_limit_error":      429,
	"api_error":             500,
	"timeout_error":         504,
	"overloaded_error":      httpx.StatusOverloaded,
}

// streamError turns an error object found in a 2xx body or stream into an error that is
// classified and retried as its HTTP status would be.
func streamError(raw json.RawMessage) error {
	e := httpx.ParseEmbedded(name, raw)
	if e.Status == 0 {
		e.Status = errorStatus[e.Type]
	}
	return e
}
