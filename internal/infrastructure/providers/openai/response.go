package openai

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/chat"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/httpx"
)

// response is a chat completion or one streamed chunk of it.
type response struct {
	Model   string          `json:"model"`
	Choices []choice        `json:"choices"`
	Usage   *usage          `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

// choice holds a whole message (a completion, or a chunk of a server that repeats the message
// so far) or a delta (a chunk).
type choice struct {
	Message      *reply `json:"message"`
	Delta        *reply `json:"delta"`
	FinishReason string `json:"finish_reason"`
}

type reply struct {
	Content text `json:"content"`
	// Refusal is the model's explanation when it declines (structured outputs and newer
	// models): null, or text, streamed in pieces like the content.
	Refusal   text        `json:"refusal"`
	ToolCalls []replyCall `json:"tool_calls"`
}

type replyCall struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

func (u *usage) tokens() state.Tokens {
	if u == nil {
		return state.Tokens{}
	}
	return state.Tokens{Input: u.PromptTokens, Output: u.CompletionTokens, Total: max(u.TotalTokens, u.PromptTokens+u.CompletionTokens)}
}

// text is message content: a string, null, or (on some servers) a list of parts whose text
// parts are joined.
type text string

func (t *text) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		*t = ""
		return nil
	case len(b) > 0 && b[0] == '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(b, &parts); err != nil {
			return err
		}
		var s strings.Builder
		for _, p := range parts {
			if p.Type == "" || p.Type == "text" {
				s.WriteString(p.Text)
			}
		}
		*t = text(s.String())
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*t = text(s)
	return nil
}

// decodeResponse reads a non-streamed completion. Calls without an id get call_N, numbered from
// firstID.
func decodeResponse(body io.Reader, firstID int) (ports.ChatResponse, error) {
	r, data, err := chat.ReadJSON[response](name, body)
	if err != nil {
		return ports.ChatResponse{}, err
	}
	if err := httpx.EmbeddedError(name, r.Error); err != nil {
		return ports.ChatResponse{}, err
	}
	if len(r.Choices) == 0 || r.Choices[0].Message == nil {
		return ports.ChatResponse{}, fault.New(fault.Execution, "%s: response has no message: %s", name, chat.Snippet(data))
	}
	c := r.Choices[0]
	out := ports.ChatResponse{Content: string(c.Message.Content), Model: r.Model, Usage: r.Usage.tokens()}
	for i, tc := range c.Message.ToolCalls {
		id := tc.ID
		if id == "" {
			id = chat.CallID(firstID + i)
		}
		out.ToolCalls = append(out.ToolCalls, state.CallRef{ID: id, Name: tc.Function.Name, Arguments: chat.Arguments(tc.Function.Arguments)})
	}
	out.FinishReason, out.Refusal = finishOf(c.FinishReason, string(c.Message.Refusal), len(out.ToolCalls) > 0)
	return out, nil
}

// finishOf settles the finish reason: a reply carrying a refusal was refused, whatever
// finish_reason says (OpenAI sends "stop" with it).
func finishOf(reason, refusal string, hasCalls bool) (string, string) {
	if refusal != "" && !hasCalls {
		return chat.FinishRefusal, refusal
	}
	return chat.Finish(reason, hasCalls), refusal
}
