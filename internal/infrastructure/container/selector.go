package container

import (
	"context"
	"sync"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// Selector is the ProcessRunner to wire where a policy may ask for either backend: requests
// whose policy says `backend: container` run in a container, all others with Process. The
// container Runner is built on the first such request, so a workflow that never asks for one
// never needs a Docker engine. Safe for concurrent use.
type Selector struct {
	// Process runs every request whose policy does not ask for a container.
	Process ports.ProcessRunner
	// Container is the Config of the container Runner.
	Container Config

	once sync.Once
	r    *Runner
	err  error
}

var _ ports.ProcessRunner = (*Selector)(nil)

// Run runs req with the backend its policy names. An error building the container Runner is
// returned by every request that needs it.
func (s *Selector) Run(ctx context.Context, req ports.ProcessRequest) (ports.ProcessResult, error) {
	if req.Policy == nil || req.Policy.Backend != "container" {
		return s.Process.Run(ctx, req)
	}
	r, err := s.containers()
	if err != nil {
		return ports.ProcessResult{}, err
	}
	return r.Run(ctx, req)
}

// Describe is the container Runner's Describe for a policy that asks for a container, nil
// otherwise. The policy checker copies it into the audit record's sandbox.applied.
func (s *Selector) Describe(p *workflow.Policy) (map[string]string, error) {
	if p == nil || p.Backend != "container" {
		return nil, nil
	}
	r, err := s.containers()
	if err != nil {
		return nil, err
	}
	return r.Describe(p)
}

// Close closes the container Runner, if one was built. Call it after the last Run.
func (s *Selector) Close() error {
	if s.r != nil {
		return s.r.Close()
	}
	return nil
}

func (s *Selector) containers() (*Runner, error) {
	s.once.Do(func() { s.r, s.err = New(s.Container) })
	return s.r, s.err
}
