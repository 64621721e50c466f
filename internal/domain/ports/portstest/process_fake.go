package portstest

import (
	"context"
	"sync"

	"github.com/awf-dev/awf/internal/domain/ports"
)

// ProcessFunc adapts a function to [ports.ProcessRunner], so a test can script what each
// shell step prints and how it exits without spawning anything.
type ProcessFunc func(ctx context.Context, req ports.ProcessRequest) (ports.ProcessResult, error)

var _ ports.ProcessRunner = ProcessFunc(nil)

// Run calls f.
func (f ProcessFunc) Run(ctx context.Context, req ports.ProcessRequest) (ports.ProcessResult, error) {
	return f(ctx, req)
}

// ProcessRecorder is a [ports.ProcessRunner] that records every request and answers with
// Func (or an empty successful result when Func is nil). Safe for concurrent use.
type ProcessRecorder struct {
	Func ProcessFunc

	mu       sync.Mutex
	requests []ports.ProcessRequest
}

var _ ports.ProcessRunner = (*ProcessRecorder)(nil)

// Run records req, then answers it.
func (p *ProcessRecorder) Run(ctx context.Context, req ports.ProcessRequest) (ports.ProcessResult, error) {
	p.mu.Lock()
	p.requests = append(p.requests, req)
	p.mu.Unlock()
	if p.Func == nil {
		return ports.ProcessResult{}, nil
	}
	return p.Func(ctx, req)
}

// Requests returns a copy of the requests received so far, in order of arrival.
func (p *ProcessRecorder) Requests() []ports.ProcessRequest {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]ports.ProcessRequest(nil), p.requests...)
}

// Calls counts the requests received so far.
func (p *ProcessRecorder) Calls() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.requests)
}
