package runner_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/templater"
)

// BenchmarkRun50Steps measures the engine's own cost per step: templates, scope, state
// bookkeeping, events and a save at each boundary, with a process that does nothing. Each
// step after the first binds the previous step's output into its command. "mem" saves into
// portstest's in-memory store (a deep copy of the whole run at each of the ~100 saves, as a
// serialising store would make); "discard" shows the engine alone.
func BenchmarkRun50Steps(b *testing.B) {
	const n = 50
	steps := make([]workflow.Step, n)
	for i := range steps {
		cmd := "step"
		if i > 0 {
			cmd = fmt.Sprintf("step {{ states.s%d.output }}", i-1)
		}
		steps[i] = shell(fmt.Sprintf("s%d", i), cmd)
	}
	w := wf(steps...)
	w.Output = fmt.Sprintf("{{ states.s%d.output }}", n-1)
	tmpl := templater.New()
	var ids atomic.Int64
	newRunner := func(store ports.StateStore) *runner.Runner {
		r, err := runner.New(runner.Deps{
			Store:     store,
			Templater: tmpl,
			Process: portstest.ProcessFunc(func(context.Context, ports.ProcessRequest) (ports.ProcessResult, error) {
				return ports.ProcessResult{Stdout: "out\n"}, nil
			}),
			Loader: loaderFunc(func(string) (*workflow.Workflow, error) { return w, nil }),
			Clock:  ports.ClockFunc(time.Now),
			NewID:  func() string { return fmt.Sprint("run-", ids.Add(1)) },
		})
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	for _, bc := range []struct {
		name  string
		store func() ports.StateStore
	}{
		// A fresh store per run: MemStateStore keeps every saved version.
		{"mem", func() ports.StateStore { return portstest.NewMemStateStore() }},
		{"discard", func() ports.StateStore { return discard{} }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := newRunner(bc.store()).Run(b.Context(), runner.Request{Workflow: w}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1e3, "µs/step")
		})
	}
}

// discard is a StateStore that keeps nothing.
type discard struct{}

func (discard) Save(context.Context, *state.RunState) error { return nil }
func (discard) Load(_ context.Context, id string) (*state.RunState, error) {
	return nil, fmt.Errorf("no run %s", id)
}
func (discard) List(context.Context) ([]ports.RunSummary, error) { return nil, nil }
func (discard) IDs(context.Context) ([]string, error)            { return nil, nil }
func (discard) Path(id string) string                            { return id }
func (discard) Lock(context.Context, string) (func(), error)     { return func() {}, nil }
func (discard) Owner(string) (ports.RunOwner, bool)              { return ports.RunOwner{}, false }

// BenchmarkParallelBlock measures the engine's cost per child of one parallel block of 100
// and of 4,000 children (8 at a time) with a process that does nothing: a child must not
// cost more in a bigger block (each child's end copied the whole states namespace).
func BenchmarkParallelBlock(b *testing.B) {
	for _, n := range []int{100, 4000} {
		b.Run(fmt.Sprintf("children=%d", n), func(b *testing.B) {
			children := make([]workflow.Step, n)
			for i := range children {
				children[i] = shell(fmt.Sprintf("c%05d", i), "child")
			}
			w := wf(shell("before", "start"), workflow.Step{Name: "fan", Type: workflow.StepParallel,
				Parallel: &workflow.ParallelStep{Steps: children, MaxConcurrency: 8}})
			r, err := runner.New(runner.Deps{
				Store:     discard{},
				Templater: templater.New(),
				Process: portstest.ProcessFunc(func(context.Context, ports.ProcessRequest) (ports.ProcessResult, error) {
					return ports.ProcessResult{Stdout: "out\n"}, nil
				}),
				Loader: loaderFunc(func(string) (*workflow.Workflow, error) { return w, nil }),
				Clock:  ports.ClockFunc(time.Now),
				NewID:  func() string { return "run" },
			})
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := r.Run(b.Context(), runner.Request{Workflow: w}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1e3, "µs/child")
		})
	}
}
