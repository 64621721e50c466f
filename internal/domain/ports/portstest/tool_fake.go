package portstest

import (
	"context"
	"slices"
	"sync"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// ToolFunc adapts a function to [ports.ToolInvoker].
type ToolFunc func(ctx context.Context, req ports.ToolRequest) (tool.Result, error)

var _ ports.ToolInvoker = ToolFunc(nil)

// Invoke calls f.
func (f ToolFunc) Invoke(ctx context.Context, req ports.ToolRequest) (tool.Result, error) {
	return f(ctx, req)
}

// ToolSet is a [ports.ToolInvoker] over named functions that records every request. Like the
// real invoker, an unknown name is a fault.Invalid error suggesting the nearest name. Safe for
// concurrent use once built.
type ToolSet struct {
	Tools map[string]ToolFunc

	mu       sync.Mutex
	requests []ports.ToolRequest
}

var _ ports.ToolInvoker = (*ToolSet)(nil)

// Invoke records req and runs the named tool.
func (s *ToolSet) Invoke(ctx context.Context, req ports.ToolRequest) (tool.Result, error) {
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	f, ok := s.Tools[req.Name]
	if !ok {
		names := make([]string, 0, len(s.Tools))
		for name := range s.Tools {
			names = append(names, name)
		}
		slices.Sort(names)
		if hint := workflow.DidYouMean(req.Name, names); hint != "" {
			return tool.Result{}, fault.New(fault.Invalid, "unknown tool %q (%s)", req.Name, hint)
		}
		return tool.Result{}, fault.New(fault.Invalid, "unknown tool %q", req.Name)
	}
	return f(ctx, req)
}

// Requests returns a copy of the requests received so far, in order of arrival.
func (s *ToolSet) Requests() []ports.ToolRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ports.ToolRequest(nil), s.requests...)
}
