package ollama

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/chat"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/httpx"
)

// response is a whole reply, or one line of a streamed one.
type response struct {
	Model           string          `json:"model"`
	Message         *reply          `json:"message"`
	Done            bool            `json:"done"`
	DoneReason      string          `json:"done_reason"`
	PromptEvalCount int             `json:"prompt_eval_count"`
	EvalCount       int             `json:"eval_count"`
	Error           json.RawMessage `json:"error"`
}

// reply is the assistant's message; its thinking, if any, is not used.
type reply struct {
	Content   string      `json:"content"`
	ToolCalls []replyCall `json:"tool_calls"`
}

type replyCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// decodeResponse reads a non-streamed reply.
func decodeResponse(body io.Reader, firstID int) (ports.ChatResponse, error) {
	r, data, err := chat.ReadJSON[response](name, body)
	if err != nil {
		return ports.ChatResponse{}, err
	}
	if err := httpx.EmbeddedError(name, r.Error); err != nil {
		return ports.ChatResponse{}, err
	}
	if r.Message == nil {
		return ports.ChatResponse{}, fault.New(fault.Execution, "%s: response has no message: %s", name, chat.Snippet(data))
	}
	a := assembler{firstID: firstID}
	a.add(&r)
	return a.result(), nil
}

// decodeStream reads a streamed reply: one JSON object per line, the last with done true and
// the token counts. A body that ends before it is truncated. Once text has gone to onDelta a
// failure is final, so that a retry cannot show the same text twice.
func decodeStream(body io.Reader, firstID int, onDelta func(string)) (ports.ChatResponse, error) {
	a := assembler{Deltas: chat.NewDeltas(onDelta), firstID: firstID}
	lines := httpx.NewLines(body)
	for {
		line, terminated, err := lines.Next()
		if err != nil {
			return a.Fail(chat.StreamError(name, "done", err))
		}
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		var r response
		if err := json.Unmarshal(line, &r); err != nil {
			if !terminated { // the body ended inside this line
				return a.Fail(chat.StreamError(name, "done", fmt.Errorf("line cut off: %w", httpx.ErrTruncated)))
			}
			return a.Fail(chat.Malformed(name, "stream line", line, err))
		}
		if err := httpx.EmbeddedError(name, r.Error); err != nil {
			return a.Fail(err)
		}
		a.add(&r)
		if r.Done {
			return a.result(), nil
		}
	}
}

// assembler builds a reply from one response or many streamed lines. Ollama streams text as
// deltas and each tool call whole.
type assembler struct {
	chat.Deltas
	firstID int

	text   strings.Builder
	calls  []state.CallRef
	model  string
	reason string
	usage  state.Tokens
}

func (a *assembler) add(r *response) {
	if r.Model != "" {
		a.model = r.Model
	}
	if m := r.Message; m != nil {
		a.text.WriteString(m.Content)
		a.Emit(m.Content)
		for _, c := range m.ToolCalls {
			id := c.ID
			if id == "" {
				id = chat.CallID(a.firstID + len(a.calls))
			}
			a.calls = append(a.calls, state.CallRef{ID: id, Name: c.Function.Name, Arguments: chat.Arguments(c.Function.Arguments)})
		}
	}
	if r.Done {
		a.reason = r.DoneReason
		a.usage = state.Tokens{Input: r.PromptEvalCount, Output: r.EvalCount, Total: r.PromptEvalCount + r.EvalCount}
	}
}

func (a *assembler) result() ports.ChatResponse {
	return ports.ChatResponse{
		Content:      a.text.String(),
		ToolCalls:    a.calls,
		Usage:        a.usage,
		FinishReason: chat.Finish(a.reason, len(a.calls) > 0),
		Model:        a.model,
	}
}
