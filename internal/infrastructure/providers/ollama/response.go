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
	data, err := io.ReadAll(body)
	if err != nil {
		return ports.ChatResponse{}, fault.Wrap(fault.Execution, fmt.Errorf("%s: read response: %w", name, err))
	}
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		return ports.ChatResponse{}, chat.Malformed(name, "response", data, err)
	}
	if len(r.Error) > 0 && string(r.Error) != "null" {
		return ports.ChatResponse{}, httpx.ParseEmbedded(name, r.Error)
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
	a := assembler{firstID: firstID, onDelta: onDelta}
	lines := httpx.NewLines(body)
	for {
		line, terminated, err := lines.Next()
		switch {
		case err == io.EOF:
			return a.fail(fault.Wrap(fault.Execution, fmt.Errorf("%s: stream ended before done: %w", name, httpx.ErrTruncated)))
		case err != nil:
			return a.fail(fault.Wrap(fault.Execution, fmt.Errorf("%s: read stream: %w", name, err)))
		}
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		var r response
		if err := json.Unmarshal(line, &r); err != nil {
			if !terminated { // the body ended inside this line
				return a.fail(fault.Wrap(fault.Execution, fmt.Errorf("%s: stream ended before done: line cut off: %w", name, httpx.ErrTruncated)))
			}
			return a.fail(chat.Malformed(name, "stream line", line, err))
		}
		if len(r.Error) > 0 && string(r.Error) != "null" {
			return a.fail(httpx.ParseEmbedded(name, r.Error))
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
	firstID int
	onDelta func(string)
	emitted bool

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
		if m.Content != "" && a.onDelta != nil {
			a.emitted = true
			a.onDelta(m.Content)
		}
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

func (a *assembler) fail(err error) (ports.ChatResponse, error) {
	if a.emitted {
		err = httpx.Permanent(err)
	}
	return ports.ChatResponse{}, err
}
