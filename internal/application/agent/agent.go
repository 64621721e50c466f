// Package agent runs agent steps: the agent loop of DESIGN section 4. It sends a step's
// conversation and tool schemas to the model, runs the calls the model asks for through the
// governed tool path (ports.ToolInvoker), sends the results back and records every call in the
// step's state as it happens, until the model answers without a call. It also implements
// conversation mode (turns, stop conditions, context window strategies, continue_from) and
// structured output (output_format: json). It implements runner.AgentExecutor and reaches
// models, tools and templates only through ports.
package agent

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
)

// Defaults of tool_options and conversation options left unset (or zero).
const (
	// DefaultMaxCalls bounds the tool calls of one step: agentic loops must always end.
	DefaultMaxCalls = 50
	// DefaultMaxRepeats is how many identical calls in a row run before the breaker refuses
	// the next identical one.
	DefaultMaxRepeats = 3
	// DefaultMaxTurns bounds the model replies of a step in conversation mode.
	DefaultMaxTurns = 10
)

// Deps are everything an Executor needs. All are required except ReadFile, Settler and Audit.
type Deps struct {
	// Providers resolves each step's model provider (and applies --replay, --record,
	// --provider and --model).
	Providers ports.ProviderSource
	// Tools runs every call through the governed path: validation, policy, approval,
	// execution with a timeout, audit.
	Tools ports.ToolInvoker
	// Catalog describes the step's tools: schemas for the model, annotations for the loop.
	Catalog ports.ToolCatalog
	// Refusals audits the calls the loop refuses before they reach Tools: unknown names,
	// tools outside the step's tools, arguments that are not a JSON object, the breaker.
	Refusals ports.CallRefuser
	// Templater renders prompts and evaluates stop conditions.
	Templater ports.Templater
	// Schemas validates structured output against output_schema.
	Schemas ports.SchemaValidator
	Clock   ports.Clock
	// ReadFile reads prompt_file; nil means os.ReadFile.
	ReadFile func(path string) ([]byte, error)
	// Settler asks the person what to do with a call a crash cut off whose tool has no check
	// and is not idempotent; nil means nobody can be asked.
	Settler ports.Settler
	// Audit receives a record for every decision about a call a crash cut off (the governed
	// path audits the calls that run); nil records none.
	Audit ports.AuditSink
	// Fork runs run(ctx, i) for every i in [0, n) concurrently and returns when all have
	// returned: the read-only calls of one reply. Nil means goroutines. An engine whose
	// loop must stay deterministic (the temporal engine replays it inside a workflow, where
	// goroutines are forbidden) gives its own coroutines, as it does to runner.Deps.Fork.
	Fork func(ctx context.Context, n, limit int, run func(ctx context.Context, i int))
}

// Executor runs agent steps. It is safe for concurrent use: each Execute call keeps its own
// conversation.
type Executor struct {
	d Deps
}

var _ runner.AgentExecutor = (*Executor)(nil)

// New returns an Executor, or an error of kind fault.System naming every missing dependency.
func New(d Deps) (*Executor, error) {
	var missing []string
	for _, dep := range []struct {
		name string
		nil  bool
	}{
		{"Providers", d.Providers == nil},
		{"Tools", d.Tools == nil},
		{"Catalog", d.Catalog == nil},
		{"Refusals", d.Refusals == nil},
		{"Templater", d.Templater == nil},
		{"Schemas", d.Schemas == nil},
		{"Clock", d.Clock == nil},
	} {
		if dep.nil {
			missing = append(missing, dep.name)
		}
	}
	if len(missing) > 0 {
		return nil, fault.New(fault.System, "agent: missing dependencies: %s", strings.Join(missing, ", "))
	}
	if d.ReadFile == nil {
		d.ReadFile = os.ReadFile
	}
	if d.Fork == nil {
		d.Fork = goroutines
	}
	return &Executor{d: d}, nil
}

// Execute runs one attempt of an agent step: the loop of model turns and governed tool calls.
// Each call is saved in flight before it runs and again with its result, through sc.Save. A
// call that sc.Previous records as completed is not run again: its recorded result goes back to
// the model. The step fails (the error says why) when the provider fails, max_calls is reached
// with on_max_calls: fail, a json output does not conform after one correction, the state
// cannot be saved, or ctx ends (the runner reports a timeout). The outcome carries the tokens,
// and the conversation in conversation mode, also with an error.
func (x *Executor) Execute(ctx context.Context, sc runner.StepContext) (runner.StepOutcome, error) {
	if sc.Step == nil || sc.Step.Agent == nil {
		return runner.StepOutcome{}, fault.New(fault.Invalid, "agent: step has no agent settings")
	}
	if sc.Save == nil {
		return runner.StepOutcome{}, fault.New(fault.System, "agent: the runner gave no way to save the step's state")
	}
	l, err := x.prepare(ctx, sc)
	if err != nil {
		return runner.StepOutcome{}, err
	}
	out, err := l.run(ctx)
	if err != nil {
		return out, fmt.Errorf("agent (%s): %w", l.provName, err)
	}
	return out, nil
}

// goroutines is the default Deps.Fork: one goroutine for each of the n runs.
func goroutines(ctx context.Context, n, _ int, run func(ctx context.Context, i int)) {
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { run(ctx, i) })
	}
	wg.Wait()
}
