package portstest

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// ScriptedProvider is a [ports.Provider] that answers with queued replies, in order, and
// records every request it receives (with its messages copied, so a caller that keeps
// appending to its slice does not change what was recorded). A request beyond the script is a
// fault.Execution error, so a loop that asks once too often fails its test. Safe for
// concurrent use.
type ScriptedProvider struct {
	mu       sync.Mutex
	replies  []Reply
	requests []ports.ChatRequest
}

var _ ports.Provider = (*ScriptedProvider)(nil)

// Reply is one scripted answer: a response, an error, or a function that computes either from
// the request (to answer from what the model was sent, or to block until a test says so).
type Reply struct {
	Response ports.ChatResponse
	Err      error
	Func     func(ctx context.Context, req ports.ChatRequest) (ports.ChatResponse, error)
}

// NewScriptedProvider returns a provider that will answer with replies in order.
func NewScriptedProvider(replies ...Reply) *ScriptedProvider {
	return &ScriptedProvider{replies: replies}
}

// Text is a reply with text and no tool call.
func Text(content string) Reply {
	return Reply{Response: ports.ChatResponse{Content: content, FinishReason: "stop"}}
}

// Calls is a reply asking for tool calls; each call is a name and its JSON arguments, with
// ids call_<n> numbered from first.
func Calls(first int, calls ...[2]string) Reply {
	r := Reply{Response: ports.ChatResponse{FinishReason: "tool_calls"}}
	for i, c := range calls {
		r.Response.ToolCalls = append(r.Response.ToolCalls,
			state.CallRef{ID: fmt.Sprintf("call_%d", first+i), Name: c[0], Arguments: c[1]})
	}
	return r
}

// Push queues more replies.
func (p *ScriptedProvider) Push(replies ...Reply) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.replies = append(p.replies, replies...)
}

// Chat records req and returns the next scripted reply.
func (p *ScriptedProvider) Chat(ctx context.Context, req ports.ChatRequest) (ports.ChatResponse, error) {
	if err := ctx.Err(); err != nil {
		return ports.ChatResponse{}, err
	}
	p.mu.Lock()
	req.Messages = slices.Clone(req.Messages)
	req.Tools = slices.Clone(req.Tools)
	p.requests = append(p.requests, req)
	n := len(p.requests)
	if len(p.replies) == 0 {
		p.mu.Unlock()
		return ports.ChatResponse{}, fault.New(fault.Execution, "scripted provider: request %d has no scripted reply", n)
	}
	r := p.replies[0]
	p.replies = p.replies[1:]
	p.mu.Unlock()
	if r.Func != nil {
		return r.Func(ctx, req)
	}
	return r.Response, r.Err
}

// Requests returns the requests received so far, in order.
func (p *ScriptedProvider) Requests() []ports.ChatRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.requests)
}

// Remaining returns how many scripted replies have not been used.
func (p *ScriptedProvider) Remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.replies)
}

// Providers is a [ports.ProviderSource] that gives every step the same provider (Use) and
// records the references it was asked to resolve. Model is what it resolves a reference naming
// no model to. Safe for concurrent use.
type Providers struct {
	Use     ports.Provider
	Name    string
	Model   string
	Options map[string]any
	// Handoff is what a reference with tools resolves to in ResolvedProvider.Handoff.
	Handoff string
	Err     error

	mu   sync.Mutex
	refs []ports.ProviderRef
}

var _ ports.ProviderSource = (*Providers)(nil)

// Provider records ref and returns the configured provider, or Err.
func (p *Providers) Provider(_ context.Context, ref ports.ProviderRef) (ports.ResolvedProvider, error) {
	p.mu.Lock()
	p.refs = append(p.refs, ref)
	p.mu.Unlock()
	if p.Err != nil {
		return ports.ResolvedProvider{}, p.Err
	}
	model := ref.Model
	if model == "" {
		model = p.Model
	}
	name := p.Name
	if name == "" {
		name = ref.Name
	}
	rp := ports.ResolvedProvider{Provider: p.Use, Name: name, Model: model, Options: p.Options}
	if len(ref.Tools) > 0 {
		rp.Handoff = p.Handoff
	}
	return rp, nil
}

// Refs returns the references resolved so far.
func (p *Providers) Refs() []ports.ProviderRef {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.refs)
}
