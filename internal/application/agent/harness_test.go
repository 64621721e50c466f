package agent_test

import (
	"context"
	"encoding/json"
	"slices"
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
	"github.com/awf-dev/awf/internal/infrastructure/templater"
)

// record is a step's live record as the runner keeps it: Save applies mutations under a lock
// and counts them; every save leaves a snapshot of the tool calls.
type record struct {
	mu        sync.Mutex
	s         state.StepState
	saves     int
	snapshots [][]state.ToolCallRecord
	changes   []ports.StepChanges // what each save said it changed
}

func (r *record) save(ctx context.Context, mutate func(*state.StepState)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	mutate(&r.s)
	r.saves++
	ch, _ := ports.StepChangesOf(ctx)
	r.changes = append(r.changes, ch)
	snap := slices.Clone(r.s.ToolCalls)
	for i, c := range snap {
		if c.Result != nil {
			res := *c.Result
			snap[i].Result = &res
		}
	}
	r.snapshots = append(r.snapshots, snap)
	return nil
}

func (r *record) state() state.StepState {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.s
}

// harness wires an Executor to fakes: a scripted provider, a tool set, a catalog.
type harness struct {
	t        *testing.T
	prov     *portstest.ScriptedProvider
	tools    *portstest.ToolSet
	catalog  portstest.Catalog
	events   *portstest.EventRecorder
	x        *agent.Executor
	refused  []refusal
	rec      *record
	lookup   map[string]state.StepState
	previous *state.StepState
	scope    ports.Scope
	wfDir    string
	settler  ports.Settler
	audit    []ports.AuditRecord
}

func newHarness(t *testing.T, replies ...portstest.Reply) *harness {
	t.Helper()
	h := &harness{
		t:       t,
		prov:    portstest.NewScriptedProvider(replies...),
		tools:   &portstest.ToolSet{Tools: map[string]portstest.ToolFunc{}},
		catalog: portstest.Catalog{},
		events:  &portstest.EventRecorder{},
		rec:     &record{},
		lookup:  map[string]state.StepState{},
		scope:   ports.Scope{"inputs": map[string]any{"feature": "greet in French"}, "states": map[string]any{}},
		wfDir:   t.TempDir(),
	}
	return h
}

// tool adds a tool to the catalog and the tool set.
func (h *harness) tool(name string, ann tool.Annotations, f portstest.ToolFunc) {
	h.catalog[name] = ports.ToolInfo{
		Schema: ports.ToolSchema{Name: name, Description: "the " + name + " tool",
			Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}}}`)},
		Annotations: ann,
		Meta:        func(args map[string]any) string { return name + " " + str(args["path"]) },
	}
	h.tools.Tools[name] = f
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// ok is a tool that answers with its name and path.
func ok(name string) portstest.ToolFunc {
	return func(_ context.Context, req ports.ToolRequest) (tool.Result, error) {
		return tool.Result{Status: tool.StatusOK, Output: name + ":" + str(req.Args["path"]), Approval: ports.ByAuto}, nil
	}
}

func (h *harness) executor() *agent.Executor {
	h.t.Helper()
	if h.x != nil {
		return h.x
	}
	x, err := agent.New(agent.Deps{
		Providers: &portstest.Providers{Use: h.prov, Name: "scripted", Model: "test-model"},
		Tools:     h.tools,
		Refusals: ports.CallRefuserFunc(func(_ context.Context, req ports.ToolRequest, rule, _ string) error {
			h.refused = append(h.refused, refusal{req.Name, rule, req.Args})
			return nil
		}),
		Catalog:   h.catalog,
		Templater: templater.New(),
		Schemas:   schema.New(),
		Clock:     portstest.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
		Settler:   h.settler,
		Audit: ports.AuditSinkFunc(func(_ context.Context, rec ports.AuditRecord) error {
			h.audit = append(h.audit, rec)
			return nil
		}),
	})
	if err != nil {
		h.t.Fatal(err)
	}
	h.x = x
	return x
}

// run executes one agent step.
func (h *harness) run(a *workflow.AgentStep) (runner.StepOutcome, error) {
	h.t.Helper()
	return h.runCtx(h.t.Context(), a)
}

func (h *harness) runCtx(ctx context.Context, a *workflow.AgentStep) (runner.StepOutcome, error) {
	h.t.Helper()
	if h.previous != nil {
		h.rec.s.ToolCalls = slices.Clone(h.previous.ToolCalls)
		h.rec.s.ToolStats = h.previous.ToolStats
		h.rec.s.Tokens = h.previous.Tokens
	}
	step := &workflow.Step{Name: "implement", Type: workflow.StepAgent, Agent: a}
	return h.executor().Execute(ctx, runner.StepContext{
		RunID:    "run-1",
		Workflow: &workflow.Workflow{Name: "wf", Dir: h.wfDir},
		Step:     step,
		Scope:    h.scope,
		Attempt:  1,
		Previous: h.previous,
		Save:     h.rec.save,
		Lookup: func(name string) (state.StepState, bool) {
			s, ok := h.lookup[name]
			return s, ok
		},
		Emit: h.events.Emit,
	})
}

// toolMessages returns the tool results of a request, in order.
func toolMessages(req ports.ChatRequest) []state.Message {
	var out []state.Message
	for _, m := range req.Messages {
		if m.Role == "tool" {
			out = append(out, m)
		}
	}
	return out
}

// call is a shorthand for one scripted call: name and JSON arguments.
func call(name, args string) [2]string { return [2]string{name, args} }

// refusal is one call the loop audited as refused before the invoker.
type refusal struct {
	Tool string
	Rule string
	Args map[string]any
}
