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

// ChatResponse is the model's reply. The loop decides on the presence of ToolCalls, never on
// FinishReason.
type ChatResponse struct {
	Content      string
	ToolCalls    []state.CallRef
	Usage        state.Tokens
	FinishReason string
	Model        string
	// HandledCalls are calls the provider's agent already made through awf's governed path
	// (an agent CLI handed the step's tools through `awf mcp serve`): validated, approved,
	// run and audited there. The loop records them in the step's tool_calls and tool_stats
	// and does not run them; they are not part of the conversation.
	HandledCalls []state.ToolCallRecord
}
