package ports

import (
	"context"
	"encoding/json"

	"github.com/awf-dev/awf/internal/domain/state"
)

// Provider is a model behind one of the wire protocols (DESIGN section 4). Implementations are
// hand-written on net/http (or run a CLI) and must be safe for concurrent use.
type Provider interface {
	Chat(ctx context.Context, req ChatRequest) (ChatResponse, error)
}

// ChatRequest is one turn: the whole conversation so far plus the tools the model may call.
type ChatRequest struct {
	Model    string
	System   string
	Messages []state.Message
	Tools    []ToolSchema
	Options  map[string]any // temperature, max_tokens, ... passed through where the API has them
	// OnDelta, when set, receives streamed text as it arrives.
	OnDelta func(text string)
}

// ToolSchema describes one tool to a model.
type ToolSchema struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Finish reasons of a ChatResponse, whatever the provider called them. The loop decides
// whether to run calls on the presence of ToolCalls, never on the finish reason; the reason
// decides whether a final answer is one (a refusal or a cut-off answer is not).
const (
	FinishStop      = "stop"       // the model ended its answer
	FinishToolCalls = "tool_calls" // the model stopped to have tools called
	FinishLength    = "length"     // cut off at the token limit (max_tokens, the context window)
	// FinishContentFilter: the provider's content filter withheld or cut the answer.
	FinishContentFilter = "content_filter"
	// FinishRefusal: the model declined the task (OpenAI's message.refusal, Anthropic's
	// stop_reason "refusal"); ChatResponse.Refusal holds its explanation when it gave one.
	FinishRefusal = "refusal"
)

// ChatResponse is the model's reply. The loop decides on the presence of ToolCalls, never on
// FinishReason.
type ChatResponse struct {
	Content   string
	ToolCalls []state.CallRef
	Usage     state.Tokens
	// FinishReason is one of the Finish* constants, or a provider's own reason passed through.
	FinishReason string
	// Refusal is the model's explanation of a refusal, where the API gives it apart from the
	// content (OpenAI's message.refusal).
	Refusal string
	// Thinking holds the reasoning blocks of the reply (Anthropic's extended thinking), which
	// must go back to the API unmodified with the reply they came with.
	Thinking []state.Thinking
	Model    string
	// Divergence is set by a replayed reply whose request differed from the recorded one
	// in a way replay accepts (see the replay provider): what differed, for the state.
	Divergence string
	// HandledCalls are calls the provider's agent already made through awf's governed path
	// (an agent CLI handed the step's tools through `awf mcp serve`): validated, approved,
	// run and audited there. The loop records them in the step's tool_calls and tool_stats
	// and does not run them; they are not part of the conversation.
	HandledCalls []state.ToolCallRecord
}
