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

func benchExecutor(b *testing.B, prov ports.Provider) *agent.Executor {
	tools := &portstest.ToolSet{Tools: map[string]portstest.ToolFunc{
		"noop": func(context.Context, ports.ToolRequest) (tool.Result, error) { return tool.OK("ok"), nil },
	}}
	x, err := agent.New(agent.Deps{
		Providers: &portstest.Providers{Use: prov, Model: "m"},
		Tools:     tools,
		Refusals:  noRefusals,
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
			benchCalls(b, calls, func(prov *loopProvider) { runStep(b, prov, calls, (&memSave{}).save) })
		})
	}
}

// benchCalls runs a step of calls calls with run, as often as b asks, and reports the mean
// cost of a call (ns/call) and that of the 20 calls ending at call 100 and at the last one.
func benchCalls(b *testing.B, calls int, run func(*loopProvider)) {
	var at100, atEnd time.Duration
	runs := 0
	for b.Loop() {
		prov := &loopProvider{calls: calls}
		run(prov)
		at100 += prov.window(80, 100)
		atEnd += prov.window(calls-20, calls)
		runs++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(runs*calls), "ns/call")
	b.ReportMetric(float64(at100.Nanoseconds())/float64(runs), "ns/call@100")
	b.ReportMetric(float64(atEnd.Nanoseconds())/float64(runs), fmt.Sprintf("ns/call@%d", calls))
}

// BenchmarkLoopPerCallStatestore is BenchmarkLoopPerCall through the runner's real save path:
// a run of one agent step, persisted by the real state store (fsyncs included) before and
// after every call, as `awf run` does: each save appends the step's changes to the run's
// journal, and the state file is written at the step's start and end. ns/call is the mean
// over the step, ns/call@k the mean of the 20 calls ending at call k.
func BenchmarkLoopPerCallStatestore(b *testing.B) {
	const calls = 2000
	benchCalls(b, calls, func(prov *loopProvider) { runWorkflow(b, prov, calls) })
}

// runWorkflow runs a workflow of one agent step making calls calls through a runner that
// keeps its state in a statestore in a new directory.
func runWorkflow(b *testing.B, prov ports.Provider, calls int) {
	b.Helper()
	store, err := statestore.New(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	wf := &workflow.Workflow{Name: "wf", Steps: []workflow.Step{{Name: "implement", Type: workflow.StepAgent,
		Agent: &workflow.AgentStep{Prompt: "go", Tools: []string{"noop"}, ToolOptions: workflow.ToolOptions{MaxCalls: calls}}}}}
	r, err := runner.New(runner.Deps{
		Store:     store,
		Templater: templater.New(),
		Process: portstest.ProcessFunc(func(context.Context, ports.ProcessRequest) (ports.ProcessResult, error) {
			return ports.ProcessResult{}, nil
		}),
		Agents: benchExecutor(b, prov),
		Loader: loaderFunc(func(string) (*workflow.Workflow, error) { return wf, nil }),
		Clock:  ports.ClockFunc(time.Now),
		NewID:  func() string { return "bench" },
	})
	if err != nil {
		b.Fatal(err)
	}
	run, err := r.Run(b.Context(), runner.Request{Workflow: wf})
	if err != nil || run.States["implement"].Output != "done" || len(run.States["implement"].ToolCalls) != calls {
		b.Fatalf("Run = %v; want the step done after %d calls", err, calls)
	}
}

// loaderFunc adapts a function to ports.WorkflowLoader.
type loaderFunc func(string) (*workflow.Workflow, error)

func (f loaderFunc) Load(path string) (*workflow.Workflow, error) { return f(path) }

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
