package runner_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
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

// snapshot is what one Save wrote: the run's status, each step's, and how many tool calls
// were in flight.
type snapshot struct {
	Run      state.Status
	Steps    map[string]state.Status
	InFlight int
}

func snapshotOf(run *state.RunState) snapshot {
	snap := snapshot{Run: run.Status, Steps: map[string]state.Status{}}
	for name, st := range run.States {
		snap.Steps[name] = st.Status
		for _, call := range st.ToolCalls {
			if call.InFlight {
				snap.InFlight++
			}
		}
	}
	return snap
}

// loaderFunc adapts a function to ports.WorkflowLoader.
type loaderFunc func(path string) (*workflow.Workflow, error)

func (f loaderFunc) Load(path string) (*workflow.Workflow, error) { return f(path) }

// env is the test's fixture: a runner on fakes, each reachable for assertions.
type env struct {
	t      *testing.T
	store  *portstest.MemStateStore
	proc   *portstest.ProcessRecorder
	events *portstest.EventRecorder
	deps   runner.Deps

	mu    sync.Mutex
	slept []time.Duration
}

func (e *env) sleeps() []time.Duration {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]time.Duration(nil), e.slept...)
}

// newEnv returns fakes with a process that succeeds silently; change deps before calling
// runner().
func newEnv(t *testing.T) *env {
	t.Helper()
	e := &env{t: t, store: portstest.NewMemStateStore(), proc: &portstest.ProcessRecorder{}, events: &portstest.EventRecorder{}}
	var ids atomic.Int64
	clock := portstest.NewFakeClock(time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC))
	clock.SetStep(time.Millisecond)
	e.deps = runner.Deps{
		Store:     e.store,
		Templater: templater.New(),
		Process:   e.proc,
		Loader: loaderFunc(func(path string) (*workflow.Workflow, error) {
			return nil, fmt.Errorf("no loader in this test (asked for %s)", path)
		}),
		Events:  e.events,
		Clock:   clock,
		NewID:   func() string { return fmt.Sprintf("id-%d", ids.Add(1)) },
		Environ: []string{"AWF_TEST_HOME=/home/tester", "PATH=/bin"},
		Log:     slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
		Sleep: func(ctx context.Context, d time.Duration) error {
			e.mu.Lock()
			e.slept = append(e.slept, d)
			e.mu.Unlock()
			return ctx.Err()
		},
	}
	return e
}

// snapshots lists what each Save of run id wrote.
func (e *env) snapshots(id string) []snapshot {
	var out []snapshot
	for _, run := range e.store.History(id) {
		out = append(out, snapshotOf(run))
	}
	return out
}

// saved returns the last state saved for run id, or nil.
func (e *env) saved(id string) *state.RunState {
	run, err := e.store.Load(context.Background(), id)
	if err != nil {
		return nil
	}
	return run
}

// runCount counts the runs saved.
func (e *env) runCount() int {
	runs, err := e.store.List(context.Background())
	if err != nil {
		e.t.Fatalf("List: %v", err)
	}
	return len(runs)
}

func (e *env) runner() *runner.Runner {
	e.t.Helper()
	r, err := runner.New(e.deps)
	if err != nil {
		e.t.Fatalf("runner.New: %v", err)
	}
	return r
}

// respond makes the process answer by the script's text.
func (e *env) respond(f func(ctx context.Context, req ports.ProcessRequest) (ports.ProcessResult, error)) {
	e.proc.Func = f
}

func wf(steps ...workflow.Step) *workflow.Workflow {
	return &workflow.Workflow{Name: "test", Version: "1", Description: "a test", Dir: "/wf", Path: "/wf/test.yaml", Steps: steps}
}

func shell(name, command string) workflow.Step {
	return workflow.Step{Name: name, Type: workflow.StepShell, Shell: &workflow.ShellStep{Command: command}}
}

func ok(stdout string) (ports.ProcessResult, error) {
	return ports.ProcessResult{Stdout: stdout}, nil
}

func exit(code int, stderr string) (ports.ProcessResult, error) {
	return ports.ProcessResult{ExitCode: code, Stderr: stderr}, nil
}

// byScript answers each literal script from a table; unknown scripts succeed silently.
func byScript(table map[string]ports.ProcessResult) func(context.Context, ports.ProcessRequest) (ports.ProcessResult, error) {
	return func(_ context.Context, req ports.ProcessRequest) (ports.ProcessResult, error) {
		return table[req.Script], nil
	}
}

func statuses(run *state.RunState) map[string]state.Status {
	out := map[string]state.Status{}
	for name, st := range run.States {
		out[name] = st.Status
	}
	return out
}

func mustWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustMkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
}
