package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// failFast is the cause given to the children of a fail-fast parallel step when a sibling
// fails: they end interrupted, not failed.
type failFast struct{ step string }

func (f *failFast) Error() string { return fmt.Sprintf("step %q failed", f.step) }

// parallel runs a parallel step: its children at once, at most max_concurrency at a time
// (0: all), each recorded as a step of its own. With fail_fast the first failure cancels the
// running children (recorded interrupted) and starts no more; otherwise all run and every
// failure is reported. The output is a JSON object mapping each completed child to its output.
func (e *execution) parallel(ctx context.Context, sr *stepRun) (StepOutcome, error) {
	p := sr.step.Parallel
	children := p.Steps
	limit := p.MaxConcurrency
	if limit <= 0 || limit > len(children) {
		limit = len(children)
	}
	e.share(1)
	defer e.share(-1)
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	errs := make([]error, len(children))
	e.r.d.Fork(cctx, len(children), limit, func(ctx context.Context, i int) {
		errs[i] = e.step(ctx, &children[i])
		if errs[i] != nil && p.FailFast {
			cancel(&failFast{step: children[i].Name})
		}
	})
	if ctx.Err() != nil {
		return StepOutcome{}, context.Cause(ctx)
	}
	out, err := e.parallelOutput(children)
	if err != nil {
		return StepOutcome{}, err
	}
	var failures []error
	for _, err := range errs {
		var ff *failFast
		if err != nil && !errors.As(err, &ff) {
			failures = append(failures, err)
		}
	}
	if len(failures) > 0 {
		return out, joinErrors(failures)
	}
	return out, nil
}

// fork is the default Deps.Fork: goroutines, a semaphore of limit slots.
func fork(ctx context.Context, n, limit int, run func(ctx context.Context, i int)) {
	sem := make(chan struct{}, max(limit, 1))
	var wg sync.WaitGroup
	for i := range n {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			run(ctx, i)
		})
	}
	wg.Wait()
}

func (e *execution) parallelOutput(children []workflow.Step) (StepOutcome, error) {
	outputs := map[string]string{}
	e.mu.Lock()
	for i := range children {
		if s, ok := e.st.States[children[i].Name]; ok && s.Status == state.Completed {
			outputs[children[i].Name] = s.Output
		}
	}
	e.mu.Unlock()
	b, err := json.Marshal(outputs)
	if err != nil {
		return StepOutcome{}, fmt.Errorf("parallel output: %w", err)
	}
	return StepOutcome{Output: string(b)}, nil
}

// multiError is several failures of one parallel step; errors.Is and errors.As see each.
type multiError []error

func (m multiError) Error() string {
	msgs := make([]string, len(m))
	for i, err := range m {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (m multiError) Unwrap() []error { return m }

func joinErrors(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return multiError(errs)
}
