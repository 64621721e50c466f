package agent_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/application/agent"
	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/schema"
	"github.com/awf-dev/awf/internal/infrastructure/statestore"
	"github.com/awf-dev/awf/internal/infrastructure/templater"
)

// loopProvider is a zero-latency model: one call per reply, each with new arguments, for
// calls replies, then an answer. It keeps the time of every request, so that the cost of the
// k-th call is the time between request k and request k+1. It copies nothing.
type loopProvider struct {
	calls int
	at    []time.Time
}

func (p *loopProvider) Chat(_ context.Context, req ports.ChatRequest) (ports.ChatResponse, error) {
	p.at = append(p.at, time.Now())
	n := len(p.at)
	if n > p.calls {
		return ports.ChatResponse{Content: "done"}, nil
	}
	id := "c" + strconv.Itoa(n)
	return ports.ChatResponse{ToolCalls: []state.CallRef{{ID: id, Name: "noop", Arguments: `{"path":"f` + strconv.Itoa(n) + `"}`}}}, nil
}

// window is the mean cost of calls [from, to) in the last run.
func (p *loopProvider) window(from, to int) time.Duration {
	return p.at[to].Sub(p.at[from]) / time.Duration(to-from)
}

// memSave is a step record saved in memory, as the runner's Save callback applies it.
type memSave struct {
	mu sync.Mutex
	s  state.StepState
}

func (m *memSave) save(_ context.Context, mutate func(*state.StepState)) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	mutate(&m.s)
	return nil
}

// storeSave persists the whole run through the real state store at every Save, as the runner
// does: the cost of rewriting the state file is included.
type storeSave struct {
	mu    sync.Mutex
	store *statestore.Store
	run   *state.RunState
}

func (s *storeSave) save(ctx context.Context, mutate func(*state.StepState)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	mutate(s.run.Step("implement"))
	return s.store.Save(ctx, s.run)
}

func benchExecutor(b *testing.B, prov ports.Provider) *agent.Executor {
	tools := &portstest.ToolSet{Tools: map[string]portstest.ToolFunc{
		"noop": func(context.Context, ports.ToolRequest) (tool.Result, error) { return tool.OK("ok"), nil },
	}}
	x, err := agent.New(agent.Deps{
		Providers: &portstest.Providers{Use: prov, Model: "m"},
		Tools:     tools,
		Catalog:   portstest.Catalog{"noop": {Annotations: tool.Annotations{ReadOnly: true}}},
		Templater: templater.New(),
		Schemas:   schema.New(),
		Clock:     ports.ClockFunc(time.Now),
	})
	if err != nil {
		b.Fatal(err)
	}
	return x
}

// BenchmarkLoopPerCall measures the engine's overhead per tool call: a zero-latency provider,
// a no-op tool, and the step state persisted before and after every call (a memory record,
// as the runner's Save callback applies it). ns/call is the mean over the run; ns/call@k is
// the mean cost of the 20 calls ending at call k, so that call@2000 against call@100 shows
// whether a call costs more as the step grows.
func BenchmarkLoopPerCall(b *testing.B) {
	for _, calls := range []int{100, 2000} {
		b.Run(fmt.Sprintf("calls=%d", calls), func(b *testing.B) {
			var at100, atEnd time.Duration
			runs := 0
			for b.Loop() {
				prov := &loopProvider{calls: calls}
				runStep(b, prov, calls, (&memSave{}).save)
				at100 += prov.window(80, 100)
				atEnd += prov.window(calls-20, calls)
				runs++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(runs*calls), "ns/call")
			b.ReportMetric(float64(at100.Nanoseconds())/float64(runs), "ns/call@100")
			b.ReportMetric(float64(atEnd.Nanoseconds())/float64(runs), fmt.Sprintf("ns/call@%d", calls))
		})
	}
}

// BenchmarkLoopPerCallStatestore is BenchmarkLoopPerCall with the whole run state written by
// the real state store at every save (YAML, temporary file, fsync, rename): the cost of a call
// at call k, measured over 20 calls made after k-20 already recorded in the step.
func BenchmarkLoopPerCallStatestore(b *testing.B) {
	for _, at := range []int{100, 2000} {
		b.Run(fmt.Sprintf("at=%d", at), func(b *testing.B) {
			const n = 20
			for b.Loop() {
				b.StopTimer()
				store, err := statestore.New(b.TempDir())
				if err != nil {
					b.Fatal(err)
				}
				run := &state.RunState{ID: "bench", Workflow: "wf", Status: state.Running}
				step := run.Step("implement")
				for i := range at - n {
					step.ToolCalls = append(step.ToolCalls, state.ToolCallRecord{ID: "p" + strconv.Itoa(i), Tool: "noop",
						Arguments: map[string]any{"path": "f" + strconv.Itoa(i)},
						Result:    &state.ToolCallResult{Success: true, Output: "ok", DurationMs: 1}})
				}
				if err := store.Save(b.Context(), run); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				runStep(b, &loopProvider{calls: n}, n, (&storeSave{store: store, run: run}).save)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/call")
		})
	}
}

func runStep(b *testing.B, prov ports.Provider, calls int, save func(context.Context, func(*state.StepState)) error) {
	b.Helper()
	x := benchExecutor(b, prov)
	a := &workflow.AgentStep{Prompt: "go", Tools: []string{"noop"}, ToolOptions: workflow.ToolOptions{MaxCalls: calls}}
	out, err := x.Execute(b.Context(), runner.StepContext{
		RunID: "bench", Workflow: &workflow.Workflow{Name: "wf"},
		Step:  &workflow.Step{Name: "implement", Type: workflow.StepAgent, Agent: a},
		Scope: ports.Scope{}, Attempt: 1, Save: save, Emit: func(ports.Event) {},
	})
	if err != nil || out.Output != "done" {
		b.Fatalf("Execute = %q, %v", out.Output, err)
	}
}
