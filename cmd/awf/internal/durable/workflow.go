package durable

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/awf-dev/awf/internal/application/compile"
	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
	awf "github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/loader"
	"github.com/awf-dev/awf/internal/infrastructure/templater"
)

// Activity timing (see also settings.go).
const (
	// defaultActivityTimeout bounds a step or call that sets no timeout of its own.
	defaultActivityTimeout = 24 * time.Hour
	// defaultApprovalWait is the durable wait of a call when the workflow sets no
	// approval.timeout; a timeout is a denial.
	defaultApprovalWait = 24 * time.Hour
)

// Run is the workflow: awf's runner over the run's definition, its ports activities.
func Run(wctx workflow.Context, in RunInput) (RunResult, error) {
	x := newExecution(wctx, in)
	if err := x.register(wctx); err != nil {
		return RunResult{}, err
	}
	x.restore(in.Continued)
	if in.Continued != nil {
		// The run's workspace was claimed by its first execution (x.queue, restored).
	} else if in.Queue != "" {
		x.queue = in.Queue // a sub-workflow's run stays where its parent's workspace is
	} else if !in.SharedWorkspace {
		if err := x.claim(wctx); err != nil {
			return RunResult{Error: err.Error(), Kind: fault.System}, nil
		}
	}
	ctx := withWorkflow(context.Background(), wctx)
	tpl := templater.New()
	res, err := compile.File(x, tpl, in.File)
	if err != nil {
		return RunResult{Error: err.Error(), Kind: fault.KindOf(err)}, nil
	}
	r, err := runner.New(runner.Deps{
		Store: x.store, Templater: tpl, Process: shellPort{x}, Tools: toolPort{x}, Agents: agentPort{x},
		Loader: x, Events: x, Clock: ports.ClockFunc(func() time.Time { return workflow.Now(wctx) }),
		NewID: x.newID, Environ: in.Environ, Stat: x.stat, Log: nil,
		Sleep: func(ctx context.Context, d time.Duration) error { return workflow.Sleep(wctxOf(ctx), d) },
		Fork:  fork, WithTimeout: withTimeout, SubRun: x.subRun,
		Pause: func() bool { return x.pause(wctx) },
	})
	if err != nil {
		return RunResult{}, err
	}
	var st *state.RunState
	if c := in.Continued; c != nil && c.State != nil {
		st, err = r.Continue(ctx, c.State, res.Workflow, in.Lineage)
	} else {
		st, err = r.Run(ctx, runner.Request{ID: in.RunID, Workflow: res.Workflow, Inputs: in.Inputs,
			WorkDir: in.WorkDir, Sources: in.Sources, Parent: in.Parent, Lineage: in.Lineage})
	}
	if errors.Is(err, runner.ErrPaused) {
		return RunResult{}, x.continueAsNew(wctx, st)
	}
	out := RunResult{State: st, Children: x.store.children(in.RunID), Events: x.resultEvents()}
	if err != nil {
		out.Error, out.Kind = err.Error(), fault.KindOf(err)
	}
	return out, nil
}

// execution is one workflow execution's view of its run: the in-memory state store, the
// progress events, the calls waiting for a person and the decisions received.
type execution struct {
	in    RunInput
	ref   RunRef
	queue string // the task queue of activities; "" is the workflow's own
	store *memStore
	ids   int

	mu        sync.Mutex // guards events and running; workflow code is single-threaded otherwise
	events    []Event
	base      int             // the index of events[0] over the run's executions
	seq       map[string]int  // the next Seq of each run's events
	running   map[string]bool // child runs in progress (sub-workflow steps), for the events query
	waiting   map[string]Pending
	decisions map[string]Decision
	signals   workflow.ReceiveChannel
	agentSteps
}

// Stat is what the submitter saw of a file_exists or dir_exists input's path.
type Stat struct {
	Exists, IsDir bool
}

func newExecution(wctx workflow.Context, in RunInput) *execution {
	return &execution{
		in: in,
		ref: RunRef{ID: in.RunID, File: in.File, FilesDigest: digestFiles(in.Files), Inputs: in.Inputs, WorkDir: in.WorkDir,
			Provider: in.Provider, Model: in.Model, Replay: in.Replay, Record: in.Record,
			Approve: in.Approve, NonInteractive: in.NonInteractive, Yes: in.Yes},
		store:     &memStore{runs: map[string]*state.RunState{}},
		waiting:   map[string]Pending{},
		decisions: map[string]Decision{},
		seq:       map[string]int{},
		running:   map[string]bool{},
		signals:   workflow.GetSignalChannel(wctx, SignalDecision),
	}
}

// register sets the queries: the state as a local run's state file holds it, the progress
// events from an index, and the calls waiting for a person.
func (x *execution) register(wctx workflow.Context) error {
	if err := workflow.SetQueryHandler(wctx, QueryState, func() (*state.RunState, error) {
		return x.store.runs[x.in.RunID], nil
	}); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(wctx, QueryEvents, func(from int) (EventPage, error) {
		return x.eventsFrom(from), nil
	}); err != nil {
		return err
	}
	return workflow.SetQueryHandler(wctx, QueryWaiting, func() ([]Pending, error) {
		return slices.SortedFunc(maps.Values(x.waiting), func(a, b Pending) int { return a.Since.Compare(b.Since) }), nil
	})
}

// claim pins a run without a shared workspace to the first worker that takes it: its host
// task queue runs every later activity.
func (x *execution) claim(wctx workflow.Context) error {
	ctx := workflow.WithActivityOptions(wctx, workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 3},
	})
	return workflow.ExecuteActivity(ctx, ActivityClaim, x.in.RunID).Get(wctx, &x.queue)
}

// subRun runs the run of a sub-workflow step as a child workflow, whose id is the child run's
// id, with the parent's definition and workspace. Its state and its own children's come back
// in its result and join this execution's store, so that the root's result carries them all.
func (x *execution) subRun(ctx context.Context, req runner.Request) (*state.RunState, error) {
	in := x.in
	in.RunID, in.File, in.Inputs, in.Sources = req.ID, req.Workflow.Path, req.Inputs, nil
	in.Parent, in.Lineage, in.Queue = req.Parent, req.Lineage, x.queue
	in.Continued = nil // the parent's, when it continued as new
	wctx := wctxOf(ctx)
	cctx := workflow.WithChildOptions(wctx, workflow.ChildWorkflowOptions{WorkflowID: req.ID})
	var res RunResult
	x.mu.Lock()
	x.running[req.ID] = true
	x.mu.Unlock()
	err := workflow.ExecuteChildWorkflow(cctx, WorkflowName, in).Get(wctx, &res)
	x.mu.Lock()
	delete(x.running, req.ID)
	x.mu.Unlock()
	if err != nil {
		return nil, fault.New(fault.System, "sub-workflow run %s: %v", req.ID, err)
	}
	for _, st := range append(res.Children, res.State) {
		if st != nil {
			x.store.runs[st.ID] = st
		}
	}
	x.merge(res.Events)
	return res.State, res.Err()
}

// Emit records a progress event for the events query.
func (x *execution) Emit(ev ports.Event) {
	x.mu.Lock()
	x.events = append(x.events, Event{Event: ev, Seq: x.seq[ev.RunID]})
	x.seq[ev.RunID]++
	x.mu.Unlock()
}

// newID names tool calls and sub-runs: derived from the run id and a counter, the same on
// every replay.
func (x *execution) newID() string {
	x.ids++
	return uuid.NewSHA1(uuid.NameSpaceURL, fmt.Appendf(nil, "awf:%s:%d", x.in.RunID, x.ids)).String()
}

// Load loads a workflow file of the run from the files submitted with it: the run keeps
// the definition it started with, whatever is deployed since.
func (x *execution) Load(path string) (*awf.Workflow, error) {
	data, ok := x.in.Files[path]
	if !ok {
		if abs, err := filepath.Abs(path); err == nil {
			data, ok = x.in.Files[abs]
		}
	}
	if !ok {
		return nil, fault.New(fault.Invalid, "workflow file %s is not part of the run's definition (files are sent when the run is submitted)", path)
	}
	return loader.New().LoadBytes(path, data)
}

// stat answers file_exists and dir_exists checks from what the submitter saw.
func (x *execution) stat(path string) (fs.FileInfo, error) {
	s, ok := x.in.Stats[path]
	if !ok || !s.Exists {
		return nil, fs.ErrNotExist
	}
	return statInfo{name: filepath.Base(path), dir: s.IsDir}, nil
}

// statInfo is a recorded os.Stat answer.
type statInfo struct {
	name string
	dir  bool
}

func (s statInfo) Name() string { return s.name }
func (s statInfo) Size() int64  { return 0 }
func (s statInfo) Mode() fs.FileMode {
	return map[bool]fs.FileMode{true: fs.ModeDir | 0o755, false: 0o644}[s.dir]
}
func (s statInfo) ModTime() time.Time { return time.Time{} }
func (s statInfo) IsDir() bool        { return s.dir }
func (s statInfo) Sys() any           { return nil }

// wctxKey carries the workflow context of the coroutine running a port call.
type wctxKey struct{}

func withWorkflow(ctx context.Context, wctx workflow.Context) context.Context {
	return context.WithValue(ctx, wctxKey{}, wctx)
}

func wctxOf(ctx context.Context) workflow.Context {
	return ctx.Value(wctxKey{}).(workflow.Context)
}

// timeoutKey carries a step attempt's timeout to the activity that runs it.
type timeoutKey struct{}

// withTimeout is runner.Deps.WithTimeout in a workflow: no wall-clock timer (a replay would
// see it fire at another point), the timeout handed to the attempt's activity instead.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithValue(ctx, timeoutKey{}, d), func() {}
}

// fork is runner.Deps.Fork in a workflow: coroutines of the workflow, each with its own
// workflow context, at most limit at a time.
func fork(ctx context.Context, n, limit int, run func(ctx context.Context, i int)) {
	wctx := wctxOf(ctx)
	slots := workflow.NewBufferedChannel(wctx, max(limit, 1))
	wg := workflow.NewWaitGroup(wctx)
	for i := range n {
		if ctx.Err() != nil {
			break
		}
		slots.Send(wctx, struct{}{})
		if ctx.Err() != nil {
			slots.Receive(wctx, nil)
			break
		}
		wg.Add(1)
		workflow.Go(wctx, func(c workflow.Context) {
			defer wg.Done()
			defer slots.Receive(c, nil)
			run(withWorkflow(ctx, c), i)
		})
	}
	wg.Wait(wctx)
}

// activity returns the workflow context for one activity of the run: its task queue, a
// timeout from the step or call (ctx) or fallback, heartbeats, and the retries a local run
// would make: retried after a lost worker only when the activity can tell (see Activities).
func (x *execution) activity(ctx context.Context, fallback time.Duration) workflow.Context {
	timeout := fallback
	if d, ok := ctx.Value(timeoutKey{}).(time.Duration); ok && d > 0 {
		timeout = d
	}
	if timeout <= 0 {
		timeout = defaultActivityTimeout
	}
	opts := workflow.ActivityOptions{
		TaskQueue:           x.queue,
		StartToCloseTimeout: timeout + x.heartbeatTimeout(),
		HeartbeatTimeout:    x.heartbeatTimeout(),
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: 100 * time.Millisecond, MaximumAttempts: 5},
	}
	if x.queue != "" {
		opts.ScheduleToStartTimeout = cmp.Or(x.in.PinnedWait, defaultPinnedWait)
		opts.RetryPolicy.MaximumAttempts = 1
	}
	return workflow.WithActivityOptions(wctxOf(ctx), opts)
}

// activityError turns the failure of an activity (not the failure of what it ran, which
// comes back as a result) into a runner error.
func activityError(ctx context.Context, what string, err error) error {
	var te *temporal.TimeoutError
	if errors.As(err, &te) {
		if _, ok := ctx.Value(timeoutKey{}).(time.Duration); ok && te.TimeoutType() == enumspb.TIMEOUT_TYPE_START_TO_CLOSE {
			return fault.Wrap(fault.Execution, fmt.Errorf("%s: %w", what, context.DeadlineExceeded))
		}
		return fault.New(fault.System, "%s: %v (%v)", what, errWorkerLost, err)
	}
	return fault.New(fault.System, "%s: %v", what, err)
}

// shellPort runs shell steps as activities.
type shellPort struct{ x *execution }

func (p shellPort) Run(ctx context.Context, req ports.ProcessRequest) (ports.ProcessResult, error) {
	req.BaseEnv = nil // the worker's environment, as a local run uses awf's
	var out ShellOutput
	wctx := p.x.activity(ctx, req.Timeout)
	if err := workflow.ExecuteActivity(wctx, ActivityShell, ShellInput{Req: req}).Get(wctx, &out); err != nil {
		return ports.ProcessResult{}, activityError(ctx, "shell step", err)
	}
	return out.Result, out.Err.err()
}

// toolPort runs tool calls as activities, and waits for a person's decision on a call the
// governed path asks about.
type toolPort struct{ x *execution }

func (p toolPort) Invoke(ctx context.Context, req ports.ToolRequest) (tool.Result, error) {
	if _, ok := req.Scope["states"]; ok {
		// Tools bind inputs, env, workflow and run; the outputs of every earlier step would
		// make each call's input grow with the run.
		req.Scope = maps.Clone(req.Scope)
		delete(req.Scope, "states")
	}
	var grant *Decision
	for {
		wctx := p.x.activity(ctx, req.Timeout)
		out, err := runActivity[ToolOutput](wctx, p.x, ActivityTool, &ToolInput{Run: p.x.ref, Req: req, Grant: grant})
		if err != nil {
			return tool.Result{}, activityError(ctx, "tool "+req.Name, err)
		}
		p.x.settled(req.CallID, out)
		if out.Pending == nil {
			return out.Result, out.Err.err()
		}
		if grant != nil && grant.CallID == req.CallID && grant.Digest == out.Pending.Digest {
			return tool.Result{}, fault.New(fault.System, "tool %s: the worker asked again for a decision it was given", req.Name)
		}
		d := p.x.await(wctxOf(ctx), *out.Pending)
		grant = &d
	}
}

// await waits for the decision on a waiting call: a signal (kept when it came before the
// wait began) or the approval timeout, which is a denial.
func (x *execution) await(wctx workflow.Context, p Pending) Decision {
	p.Since = workflow.Now(wctx)
	x.waiting[p.CallID] = p
	defer delete(x.waiting, p.CallID)
	wait := p.Timeout
	if wait <= 0 {
		wait = defaultApprovalWait
	}
	tctx, cancel := workflow.WithCancel(wctx)
	defer cancel()
	timer := workflow.NewTimer(tctx, wait)
	for {
		x.drain()
		if d, ok := x.decisions[p.CallID]; ok {
			delete(x.decisions, p.CallID)
			if d.Digest == "" || d.Digest == p.Digest {
				d.Digest = p.Digest
				return d
			}
			// An answer to something else than what waits now: not valid for it.
		}
		timedOut := false
		sel := workflow.NewSelector(wctx)
		sel.AddReceive(x.signals, func(workflow.ReceiveChannel, bool) {})
		sel.AddFuture(timer, func(workflow.Future) { timedOut = true })
		sel.Select(wctx)
		if timedOut {
			return Decision{CallID: p.CallID, Digest: p.Digest, TimedOut: true, By: "timeout", Host: "",
				Reason: fmt.Sprintf("nobody approved the call within %s", wait)}
		}
	}
}

// drain moves every decision received into decisions, by call: one arriving before its
// call waits is kept for it.
func (x *execution) drain() {
	for {
		var d Decision
		if !x.signals.ReceiveAsync(&d) {
			return
		}
		x.decisions[d.CallID] = d
	}
}

// runInput is the input of an activity of one of the run's calls.
type runInput interface{ runRef() *RunRef }

func (in *ToolInput) runRef() *RunRef     { return &in.Run }
func (in *AgentInput) runRef() *RunRef    { return &in.Run }
func (in *ResolveInput) runRef() *RunRef  { return &in.Run }
func (in *TurnInput) runRef() *RunRef     { return &in.Run }
func (in *DescribeInput) runRef() *RunRef { return &in.Run }
func (in *RefuseInput) runRef() *RunRef   { return &in.Run }

func (o ToolOutput) failed() *Failure     { return o.Err }
func (o AgentOutput) failed() *Failure    { return o.Err }
func (o ResolveOutput) failed() *Failure  { return o.Err }
func (o TurnOutput) failed() *Failure     { return o.Err }
func (o DescribeOutput) failed() *Failure { return o.Err }
func (o RefuseOutput) failed() *Failure   { return o.Err }

// runActivity executes activity name with in, whose run reference names the run's files by
// their digest only. When the worker has not built the run (the first call it takes of the
// run, or one after it restarted), it asks for them, and the activity runs again with the
// files: they reach the history (or the payload store) once per worker that builds the run,
// not with every tool call and model turn.
func runActivity[O interface{ failed() *Failure }](wctx workflow.Context, x *execution, name string, in runInput) (O, error) {
	var out O
	if err := workflow.ExecuteActivity(wctx, name, in).Get(wctx, &out); err != nil {
		return out, err
	}
	if f := out.failed(); f == nil || !f.NeedFiles {
		return out, nil
	}
	in.runRef().Files = x.in.Files
	var again O
	err := workflow.ExecuteActivity(wctx, name, in).Get(wctx, &again)
	return again, err
}
