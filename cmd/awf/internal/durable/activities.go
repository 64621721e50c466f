package durable

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/awf-dev/awf/cmd/awf/internal/cmd/run"
	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/internal/application/compile"
	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
	awf "github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/process"
)

// maxCachedRuns bounds the runs whose tools a worker keeps built.
const maxCachedRuns = 64

// Activities are what a worker executes for the workflows: every one goes through the
// Factory, as a local run does (governed tools, sandboxed processes, audit log, providers).
type Activities struct {
	F *cmdutil.Factory
	// Queue is this worker's own task queue (see RunInput.SharedWorkspace).
	Queue string

	procs ports.ProcessRunner
	build sync.Mutex // one run's tools built at a time: the build reads the global flags
	mu    sync.Mutex
	runs  map[string]*runTools
	order []string
	// journals is where agent step attempts keep their record as they go, in the payload
	// store (shared by the workers of a shared workspace).
	journals string
	// store is the payload store, where model requests' messages are kept by digest.
	store string
}

// NewActivities returns the activities of a worker whose own task queue is queue.
func NewActivities(f *cmdutil.Factory, queue string) *Activities {
	return &Activities{F: f, Queue: queue, procs: process.NewLocal(process.Config{}), runs: map[string]*runTools{},
		journals: filepath.Join(payloadDir(f), "agent-steps"), store: payloadDir(f)}
}

// runTools is what a worker builds once per run: its workflow, governed tools and agent loop.
type runTools struct {
	once    sync.Once
	wf      *awf.Workflow
	tools   *cmdutil.Tools
	agents  runner.AgentExecutor
	binding string // digest of the run's policy, for approvals
	models  models // model providers of agent steps whose loop runs in the workflow
	err     error
}

// Claim takes a run for this worker: its later activities come to this worker's queue.
func (a *Activities) Claim(ctx context.Context, runID string) (string, error) {
	return a.Queue, nil
}

// Shell runs one shell step attempt with the worker's environment. A worker lost in the
// middle makes Temporal run it again elsewhere (shared workspace): as a local resume does,
// a step that did not complete runs again.
func (a *Activities) Shell(ctx context.Context, in ShellInput) (ShellOutput, error) {
	defer heartbeat(ctx, nil)()
	res, err := a.procs.Run(ctx, in.Req)
	return ShellOutput{Result: res, Err: failure(err)}, nil
}

// Tool runs one tool call through the run's governed path. A call the approval flow asks a
// person about comes back Pending (the workflow waits for the decision and calls again with
// it in Grant). A call a lost worker left in flight is run again only when its tool is
// idempotent; otherwise it is an interrupted call, an error result, as on a local resume.
func (a *Activities) Tool(ctx context.Context, in ToolInput) (ToolOutput, error) {
	rt := a.run(in.Run)
	if rt.err != nil {
		return ToolOutput{Err: failure(rt.err)}, nil
	}
	info, err := describe(ctx, rt.tools.Registry, in.Req)
	// What the tool's check needs of the call, recorded with it as a local run records it
	// (tool.Checker), and sent with every heartbeat: it is taken before the call runs
	// (write_file's size before an append), so a worker taking over checks with the one
	// the lost worker took, never one of its own.
	var intent map[string]any
	chk := info.Checker
	if chk != nil && !chk.Checks() {
		chk = nil
	}
	inv := tool.Invocation{ID: in.Req.CallID, Args: in.Req.Args, Scope: in.Req.Scope}
	first := activity.GetInfo(ctx).Attempt <= 1
	switch {
	case chk != nil && first:
		intent = chk.Intent(ctx, inv)
		activity.RecordHeartbeat(ctx, intent)
	case chk != nil && activity.HasHeartbeatDetails(ctx):
		_ = activity.GetHeartbeatDetails(ctx, &intent)
	}
	var rcv *state.Recovery
	if !first {
		// A lost worker left the call in flight: settled as a local resume settles it with
		// nobody to ask (its check, else run again if idempotent, else outcome unknown).
		unsure := ""
		if chk != nil && intent == nil {
			unsure = "its check cannot tell: what it needs was not recorded before the worker was lost"
		}
		if chk != nil && intent != nil {
			check := chk.Check(ctx, inv, intent)
			switch check.Verdict {
			case tool.VerdictDone:
				r := state.Recovery{Decision: state.RecoveryDone, By: state.RecoveredByCheck, Detail: check.Detail}
				res := tool.Result{Status: tool.StatusOK, Approval: r.By,
					Output: "This call was running when its worker was lost; it took effect (" + r.By + ": " + check.Detail + ")."}
				if err := a.auditRecovery(ctx, rt, in.Req, r, ports.OutcomeOK, ""); err != nil {
					return ToolOutput{Err: failure(err)}, nil
				}
				return ToolOutput{Result: res, Recovery: &r, Intent: intent}, nil
			case tool.VerdictNotDone:
				rcv = &state.Recovery{Decision: state.RecoveryRerun, By: state.RecoveredByCheck, Detail: check.Detail}
			default:
				unsure = "its check could not tell: " + check.Detail
			}
		}
		if rcv == nil && (err != nil || !info.Annotations.Idempotent) {
			return a.interrupted(ctx, rt, in.Req, unsure)
		}
		if rcv == nil {
			rcv = &state.Recovery{Decision: state.RecoveryRerun, By: state.RecoveredByIdempotent, Detail: joinDetail("the worker running it was lost", unsure)}
		}
		if err := a.auditRecovery(ctx, rt, in.Req, *rcv, ports.OutcomeUnknown, "interrupted: the worker running this call was lost; it runs again"); err != nil {
			return ToolOutput{Err: failure(err)}, nil
		}
		if chk != nil { // the call runs again: what its check needs now
			intent = chk.Intent(ctx, inv)
			activity.RecordHeartbeat(ctx, intent)
		}
	}
	// --non-interactive given to awf run: nothing waits for a person, as in a local run.
	noWait := in.Run.NonInteractive != ""
	ctx = context.WithValue(ctx, grantKey{}, grant{d: in.Grant, binding: rt.binding + "\x00" + descriptor(info), noWait: noWait})
	defer heartbeat(ctx, func() any { return intent })()
	res, err := rt.tools.Invoker.Invoke(ctx, in.Req)
	if p, ok := errors.AsType[*pendingError](err); ok {
		return ToolOutput{Pending: &p.p}, nil
	}
	if g := in.Grant; g != nil && !g.Allow && g.Reason != "" && res.Denied {
		res.Error += "; " + g.By + " said: " + g.Reason
	}
	return ToolOutput{Result: res, Err: failure(err), Recovery: rcv, Intent: intent}, nil
}

// interrupted settles a call a lost worker left in flight whose tool is not idempotent and
// whose check (if any) could not tell, as a local resume settles it with nobody to ask: not
// run again, its outcome unknown, an error for the model, and an audit record closing the
// started one.
func (a *Activities) interrupted(ctx context.Context, rt *runTools, req ports.ToolRequest, unsure string) (ToolOutput, error) {
	r := state.Recovery{Decision: state.RecoveryUnknown, By: state.RecoveredByNonInteractive,
		Detail: joinDetail("the worker running it was lost; the tool is not idempotent, so it is not run again", unsure)}
	msg := fmt.Sprintf("interrupted: the worker running this call was lost; tool %q is not idempotent, so it is not run again", req.Name)
	if err := a.auditRecovery(ctx, rt, req, r, ports.OutcomeUnknown, msg); err != nil {
		return ToolOutput{Err: failure(err)}, nil
	}
	return ToolOutput{Result: tool.Result{Status: tool.StatusError, Error: msg}, Recovery: &r}, nil
}

// auditRecovery writes the audit record that closes the started record of a call a lost
// worker cut off, with what was decided about it (as a local resume's).
func (a *Activities) auditRecovery(ctx context.Context, rt *runTools, req ports.ToolRequest, r state.Recovery, outcome, msg string) error {
	if rt.tools.Audit == nil {
		return nil
	}
	err := rt.tools.Audit.Record(ctx, ports.AuditRecord{Time: time.Now(), RunID: req.RunID, Step: req.Step, CallID: req.CallID,
		Tool: req.Name, Outcome: outcome, Error: msg, Recovery: &r})
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("audit the recovery of call %s: %w", req.CallID, err))
	}
	return nil
}

func joinDetail(a, b string) string {
	if b == "" {
		return a
	}
	return a + "; " + b
}

// Agent runs one attempt of an agent step with the run's agent loop. The step's record is
// sent with every heartbeat, so that an attempt a lost worker cut off resumes from it
// elsewhere: calls recorded complete are not run again.
func (a *Activities) Agent(ctx context.Context, in AgentInput) (AgentOutput, error) {
	rt := a.run(in.Run)
	if rt.err != nil {
		return AgentOutput{Err: failure(rt.err)}, nil
	}
	step := findStep(rt.wf.Steps, in.Step)
	if step == nil {
		return AgentOutput{Err: failure(fault.New(fault.System, "step %q is not in the run's workflow", in.Step))}, nil
	}
	journal := a.journalPath(ctx, in.Run.ID)
	live, prev := in.Live, in.Previous
	if rec, ok := a.recovered(ctx, journal); ok {
		live = rec
		p := rec
		prev = &p
	}
	var mu sync.Mutex
	var events []ports.Event
	defer heartbeat(ctx, func() any { mu.Lock(); defer mu.Unlock(); return live })()
	// The agent loop runs inside this one activity: a call of it cannot wait durably, so a
	// call needing a person is settled as with nobody to ask (--non-interactive).
	ctx = context.WithValue(ctx, grantKey{}, grant{noWait: true})
	out, err := rt.agents.Execute(ctx, runner.StepContext{
		RunID: in.Run.ID, Workflow: rt.wf, Step: step, Scope: in.Scope, WorkDir: in.Run.WorkDir,
		Attempt: in.Attempt, Previous: prev, Log: a.F.Log(),
		Save: func(ctx context.Context, mutate func(*state.StepState)) error {
			mu.Lock()
			defer mu.Unlock()
			mutate(&live)
			activity.RecordHeartbeat(ctx, live)
			return writeJournal(journal, live)
		},
		Lookup: func(name string) (state.StepState, bool) { s, ok := in.Others[name]; return s, ok },
		Emit: func(ev ports.Event) {
			mu.Lock()
			defer mu.Unlock()
			if ev.Step == "" {
				ev.Step = in.Step
			}
			events = append(events, ev)
		},
	})
	mu.Lock()
	defer mu.Unlock()
	_ = os.Remove(journal) // the record goes back in the result
	return AgentOutput{Outcome: out, Record: live, Events: events, Err: failure(err)}, nil
}

// journalPath is the journal of this agent step activity: by run and activity id, which
// Temporal keeps across the activity's retries.
func (a *Activities) journalPath(ctx context.Context, runID string) string {
	return filepath.Join(a.journals, digest([]byte(runID+"\x00"+activity.GetInfo(ctx).ActivityID)))
}

// recovered is the record a lost worker left of this activity: its journal when the store
// has it (written before every tool call and after it), else the last heartbeat the server
// received. A first attempt has none.
func (a *Activities) recovered(ctx context.Context, journal string) (state.StepState, bool) {
	var rec state.StepState
	if activity.GetInfo(ctx).Attempt <= 1 {
		return rec, false
	}
	if b, err := os.ReadFile(journal); err == nil && json.Unmarshal(b, &rec) == nil {
		return rec, true
	}
	if activity.HasHeartbeatDetails(ctx) && activity.GetHeartbeatDetails(ctx, &rec) == nil {
		return rec, true
	}
	return rec, false
}

// writeJournal saves an agent step's record atomically: a crash leaves the previous one or
// this one.
func writeJournal(path string, rec state.StepState) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return fmt.Errorf("agent step journal: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("agent step journal: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("agent step journal: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("agent step journal: %w", err)
	}
	return nil
}

// heartbeat tells the server often enough that the activity's worker is alive (heartbeatEvery
// its heartbeat timeout, which the run's settings choose), with
// details() when given; the returned function stops it.
func heartbeat(ctx context.Context, details func() any) func() {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(heartbeatEvery(activity.GetInfo(ctx).HeartbeatTimeout))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				if details != nil {
					activity.RecordHeartbeat(ctx, details())
				} else {
					activity.RecordHeartbeat(ctx)
				}
			}
		}
	}()
	return func() { close(done) }
}

// run returns the run's tools, built on first use from its definition as a local run builds
// them. A call of a run not built here that does not carry the run's files gets errNeedFiles.
func (a *Activities) run(ref RunRef) *runTools {
	a.mu.Lock()
	rt, ok := a.runs[ref.ID]
	if !ok && ref.Files == nil && ref.FilesDigest != "" {
		a.mu.Unlock()
		return &runTools{err: errNeedFiles}
	}
	if !ok {
		rt = &runTools{}
		a.runs[ref.ID] = rt
		a.order = append(a.order, ref.ID)
		if len(a.order) > maxCachedRuns {
			delete(a.runs, a.order[0])
			a.order = a.order[1:]
		}
	}
	a.mu.Unlock()
	rt.once.Do(func() { rt.err = a.buildRun(rt, ref) })
	return rt
}

func (a *Activities) buildRun(rt *runTools, ref RunRef) error {
	if ref.FilesDigest != "" && digestFiles(ref.Files) != ref.FilesDigest {
		return fault.New(fault.System, "run %s: its files do not match their digest %s", ref.ID, ref.FilesDigest)
	}
	res, err := compile.File(filesLoader(ref.Files), a.F.Templater(), ref.File)
	if err != nil {
		return err
	}
	rt.wf = res.Workflow
	a.build.Lock()
	flags := *a.F.Flags
	a.F.Flags.Approve, a.F.Flags.Yes, a.F.Flags.NonInteractive = ref.Approve, ref.Yes, ref.NonInteractive
	tools, err := run.Tools(a.F, rt.wf, ref.Inputs, ref.ID, ref.WorkDir)
	*a.F.Flags = flags
	a.build.Unlock()
	if err != nil {
		return err
	}
	if err := compile.Tools(context.Background(), rt.wf, tools.Registry, tools.Validator).Err(); err != nil {
		return err
	}
	if err := tools.Registry.Preflight(registry.WorkflowTools(rt.wf)...); err != nil {
		return err
	}
	rt.tools = tools
	rt.binding = policyDigest(rt.wf)
	if !hasAgents(rt.wf.Steps) {
		return nil
	}
	agents, done, err := a.F.Agents(tools, cmdutil.RunnerOptions{Tools: tools, WorkDir: ref.WorkDir,
		Provider: ref.Provider, Model: ref.Model, Replay: ref.Replay, Record: ref.Record})
	if err != nil {
		return err
	}
	a.F.Cleanup = append(a.F.Cleanup, func() { _ = done() })
	rt.agents = agents
	return nil
}

// filesLoader loads the workflow files submitted with a run.
type filesLoader map[string][]byte

func (l filesLoader) Load(path string) (*awf.Workflow, error) {
	return (&execution{in: RunInput{Files: l}}).Load(path)
}

func findStep(steps []awf.Step, name string) *awf.Step {
	for i := range steps {
		if steps[i].Name == name {
			return &steps[i]
		}
		if p := steps[i].Parallel; p != nil {
			if s := findStep(p.Steps, name); s != nil {
				return s
			}
		}
	}
	return nil
}

func hasAgents(steps []awf.Step) bool {
	for i := range steps {
		if steps[i].Type == awf.StepAgent || (steps[i].Parallel != nil && hasAgents(steps[i].Parallel.Steps)) {
			return true
		}
	}
	return false
}

func describe(ctx context.Context, reg *registry.Registry, req ports.ToolRequest) (ports.ToolInfo, error) {
	infos, err := reg.Describe(ctx, ports.ToolQuery{RunID: req.RunID, Step: req.Step, Names: []string{req.Name}})
	if err != nil || len(infos) != 1 {
		return ports.ToolInfo{}, fmt.Errorf("describe %s: %w", req.Name, err)
	}
	return infos[0], nil
}

// descriptor is what a model and a person are told about a tool, as approvals bind it.
func descriptor(info ports.ToolInfo) string {
	b, _ := json.Marshal(info.Schema)
	return string(b)
}

// policyDigest digests what governs a run's calls: its sandbox policy, approval settings and
// tool definitions. A decision given under one policy is not valid under another.
func policyDigest(wf *awf.Workflow) string {
	b, _ := json.Marshal(struct {
		Sandbox  any
		Approval any
		Tools    any
	}{wf.Sandbox, wf.Approval, wf.Tools})
	return digest(b)
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// grantKey carries the decision a person gave on the call an activity runs, with what it is
// bound to.
type grantKey struct{}

type grant struct {
	d       *Decision
	binding string
	noWait  bool // the caller cannot wait for a decision (an agent step's call)
}

// pendingError is the durable approver's answer when nobody has decided the call yet.
type pendingError struct{ p Pending }

func (e *pendingError) Error() string { return "call " + e.p.CallID + " waits for approval" }
func (e *pendingError) Unwrap() error { return ports.ErrApprovalDeferred }

// Approver is the approver of a worker's runs: it never blocks. A call without a decision
// bound to it becomes a pendingError (the workflow waits, costing no process); with one, it
// answers as the person did, and says who and from where for the audit record. One per
// approval flow: the flow asks one call at a time, so Identity is the last answer's.
type Approver struct {
	by, host string
}

var _ ports.ApproverIdentity = (*Approver)(nil)

// Approve answers from the decision in ctx when it is for this call and this exact call.
func (a *Approver) Approve(ctx context.Context, req ports.ApprovalRequest) (ports.Answer, error) {
	g, _ := ctx.Value(grantKey{}).(grant)
	if g.noWait {
		return "", ports.ErrNoApprover
	}
	sum := digestCall(req, g.binding)
	if g.d == nil || g.d.CallID != req.CallID || g.d.Digest != sum {
		return "", &pendingError{p: Pending{CallID: req.CallID, Step: req.Step, Tool: req.Tool, Args: req.Args,
			Reason: req.Reason, Digest: sum, Timeout: req.Timeout}}
	}
	a.by, a.host = g.d.By, g.d.Host
	switch {
	case g.d.TimedOut:
		return ports.AnswerTimeout, nil
	case g.d.Allow:
		return ports.AnswerYes, nil
	}
	return ports.AnswerNo, nil
}

// Identity is who gave the last answer and from which host.
func (a *Approver) Identity() (user, tty string) {
	return a.by, "host " + a.host
}

// digestCall binds a decision to the call as shown: tool, canonical form and arguments, and
// the run's policy and the tool's descriptor (binding).
func digestCall(req ports.ApprovalRequest, binding string) string {
	b, _ := json.Marshal(struct {
		Tool      string
		Canonical tool.Canonical
		Args      map[string]any
		Binding   string
	}{req.Tool, req.Canonical, req.Args, binding})
	return digest(b)
}

// hostname names this machine in decisions and audit records.
func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	return h
}
