package durable

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"

	"github.com/awf-dev/awf/cmd/awf/internal/cmd/run"
	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/render"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	awf "github.com/awf-dev/awf/internal/domain/workflow"
)

// pollEvery is how often a submitter asks a run for its new progress events; idleAfter how
// long it waits for the first before saying that no worker took the run.
const (
	pollEvery = 200 * time.Millisecond
	idleAfter = 5 * time.Second
)

// dial connects to the server, resolving what the flags left empty from the configuration.
func dial(f *cmdutil.Factory, s *cmdutil.Server) (client.Client, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	for _, d := range []struct {
		dst *string
		v   string
	}{
		{&s.HostPort, cfg.Temporal}, {&s.Namespace, cfg.Namespace}, {&s.TaskQueue, cfg.TaskQueue},
	} {
		if *d.dst == "" {
			*d.dst = d.v
		}
	}
	c, err := client.Dial(client.Options{HostPort: s.HostPort, Namespace: s.Namespace, Logger: sdkLogger(f),
		DataConverter: dataConverter(f)})
	if err != nil {
		return nil, fault.New(fault.System, "connect to the Temporal server at %s (namespace %s): %w; start one with `temporal server start-dev` or set --temporal/AWF_TEMPORAL", s.HostPort, s.Namespace, err)
	}
	return c, nil
}

// Submit is the temporal engine of awf run: it starts the run's workflow, renders its
// progress as a local run does, saves its final state in the local state directory (so that
// awf status, history and resume find it) and reports it with the same exit codes.
func Submit(ctx context.Context, f *cmdutil.Factory, req cmdutil.EngineRun) error {
	srv := req.Server
	c, err := dial(f, &srv)
	if err != nil {
		return err
	}
	defer c.Close()
	in, err := newRunInput(f, req, req.SharedWorkspace)
	if err != nil {
		return err
	}
	wr, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: in.RunID, TaskQueue: srv.TaskQueue,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE}, WorkflowName, in)
	if err != nil {
		return fault.New(fault.System, "submit run %s: %w", in.RunID, err)
	}
	if req.Detach {
		if req.Output.JSON() {
			return cmdutil.WriteJSON(f.IO.Out, run.Result{RunID: in.RunID, Workflow: req.Workflow.Name, Status: state.Running,
				StateFile: "temporal:" + in.RunID, Steps: map[string]state.Status{}})
		}
		fmt.Fprintln(f.IO.Out, in.RunID)
		return nil
	}
	progress := render.New(f.IO, time.Now)
	defer progress.Close()
	res, err := follow(ctx, c, wr, progress, func() {
		fmt.Fprintf(f.IO.ErrOut, "run %s waits for a worker: is `awf worker` running on task queue %s of %s?\n", in.RunID, srv.TaskQueue, srv.HostPort)
	}, func(runID string, p Pending) {
		fmt.Fprintf(f.IO.ErrOut, "%s: call %s of tool %s waits for approval: awf approve %s %s (or awf deny)\n",
			p.Step, p.CallID, render.Line(p.Tool), runID, p.CallID)
	})
	progress.Close()
	if err != nil {
		return err
	}
	store, err := saveRuns(ctx, f, append(res.Children, res.State)...)
	if err != nil {
		return err
	}
	return run.Report(f.IO, req.Output, store, res.State, res.Err())
}

// follow streams a run's progress events, and those of its sub-workflows' runs as they go,
// into events until it ends, telling idle when no worker has started it after idleAfter and
// waiting about each call of these runs that starts to wait for a person, and returns its
// result.
func follow(ctx context.Context, c client.Client, wr client.WorkflowRun, events ports.Events, idle func(), waiting func(runID string, p Pending)) (RunResult, error) {
	done := make(chan error, 1)
	var res RunResult
	go func() { done <- wr.Get(ctx, &res) }()
	// The run and the runs of its sub-workflows in progress, in the order they started, with
	// the index of the next event to read from each.
	follows, seen := []string{wr.GetID()}, map[string]int{}
	told, shown := map[string]bool{}, map[string]int{}
	poll := func() {
		running := map[string]bool{wr.GetID(): true}
		for i := 0; i < len(follows); i++ { // grows with the children found
			id := follows[i]
			var page EventPage
			if v, err := c.QueryWorkflow(ctx, id, "", QueryEvents, seen[id]); err == nil && v.Get(&page) == nil {
				for _, ev := range page.Events {
					if ev.Seq >= shown[ev.RunID] { // each event once: a child's are merged into its parent's too
						events.Emit(ev.Event)
						shown[ev.RunID] = ev.Seq + 1
					}
				}
				seen[id] = page.Next
				for _, child := range page.Running {
					if !running[child] {
						running[child] = true
						if !slices.Contains(follows, child) {
							follows = append(follows, child)
						}
					}
				}
			}
			var ps []Pending
			if v, err := c.QueryWorkflow(ctx, id, "", QueryWaiting); err == nil && v.Get(&ps) == nil {
				for _, p := range ps {
					if !told[p.CallID] {
						told[p.CallID] = true
						waiting(id, p)
					}
				}
			}
		}
		follows = slices.DeleteFunc(follows, func(id string) bool { return !running[id] })
	}
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	idleTimer := time.NewTimer(idleAfter)
	defer idleTimer.Stop()
	for {
		select {
		case err := <-done:
			poll()
			if err != nil {
				return res, fault.New(fault.System, "run %s: %w", wr.GetID(), err)
			}
			return res, nil
		case <-ctx.Done():
			return res, fmt.Errorf("stopped following run %s (it goes on; see awf status --engine temporal %s): %w", wr.GetID(), wr.GetID(), ctx.Err())
		case <-t.C:
			poll()
		case <-idleTimer.C:
			if len(shown) == 0 {
				idle()
			}
		}
	}
}

// newRunInput reads the run's files and resolves what the workflow needs from the submitter.
func newRunInput(f *cmdutil.Factory, req cmdutil.EngineRun, shared bool) (RunInput, error) {
	set, err := loadSettings(f)
	if err != nil {
		return RunInput{}, err
	}
	in := RunInput{HeartbeatTimeout: set.HeartbeatTimeout, PinnedWait: set.PinnedWait, ContinueAfter: set.ContinueAfter, RunID: uuid.NewString(), File: req.Workflow.Path, Files: map[string][]byte{}, Inputs: req.Inputs,
		WorkDir: req.WorkDir, Environ: publicEnv(f.Environ), SharedWorkspace: shared, Stats: map[string]Stat{},
		Provider: req.Runner.Provider, Model: req.Runner.Model, Replay: req.Runner.Replay, Record: req.Runner.Record,
		Approve: f.Flags.Approve, Yes: f.Flags.Yes, NonInteractive: f.Flags.NonInteractive}
	for _, p := range append([]string{req.Workflow.Path}, req.Files...) {
		b, err := os.ReadFile(p)
		if err != nil {
			return in, fault.Wrap(fault.Usage, fmt.Errorf("read %s: %w", p, err))
		}
		in.Files[p] = b
	}
	for _, p := range []*string{&in.Replay, &in.Record} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(req.WorkDir, *p) // the workers' cassette is the submitter's
		}
	}
	in.Sources = cmdutil.Sources(req.Files, nil, nil)
	stats(req.Workflow, req.Inputs, req.WorkDir, in.Stats)
	return in, nil
}

// stats records what the submitter sees of the paths of file_exists and dir_exists inputs.
func stats(wf *awf.Workflow, inputs map[string]any, workDir string, into map[string]Stat) {
	for _, in := range wf.Inputs {
		p, ok := inputs[in.Name].(string)
		if !ok || (!in.FileExists && !in.DirExists) {
			continue
		}
		full := p
		if !strings.HasPrefix(p, "/") && workDir != "" {
			full = workDir + "/" + p
		}
		if info, err := os.Stat(full); err == nil {
			into[full] = Stat{Exists: true, IsDir: info.IsDir()}
		}
	}
}

// publicEnv is the environment without what looks like a secret: what a run's templates see
// as env is kept in the workflow's history.
func publicEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		upper := strings.ToUpper(name)
		if strings.Contains(upper, "KEY") || strings.Contains(upper, "TOKEN") || strings.Contains(upper, "SECRET") ||
			strings.Contains(upper, "PASSWORD") || strings.Contains(upper, "CREDENTIAL") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Decide sends a person's decision on a waiting call of run id, bound to what the call
// shows now when it already waits (a decision sent before the call waits is kept for it).
func Decide(ctx context.Context, f *cmdutil.Factory, srv cmdutil.Server, id string, d Decision) error {
	if err := d.Validate(); err != nil {
		return err
	}
	c, err := dial(f, &srv)
	if err != nil {
		return err
	}
	defer c.Close()
	d.By, d.Host = whoAmI(), hostname()
	if v, err := c.QueryWorkflow(ctx, id, "", QueryWaiting); err == nil {
		var ps []Pending
		if v.Get(&ps) == nil {
			for _, p := range ps {
				if p.CallID == d.CallID {
					d.Digest = p.Digest
				}
			}
		}
	}
	if err := c.SignalWorkflow(ctx, id, "", SignalDecision, d); err != nil {
		var nf interface{ Error() string }
		if errors.As(err, &nf) && strings.Contains(err.Error(), "not found") {
			return fault.New(fault.Usage, "no run %s on the Temporal server (is it finished? see awf history)", id)
		}
		return fault.New(fault.System, "send the decision to run %s: %w", id, err)
	}
	fmt.Fprintf(f.IO.ErrOut, "call %s of run %s: %s\n", d.CallID, id, describeDecision(d))
	return nil
}

// Status fetches a run's state and the calls waiting in it, when the run has ended with
// wait. An ended run is saved in the local state directory, as Submit saves it.
func Status(ctx context.Context, f *cmdutil.Factory, srv cmdutil.Server, id string, wait bool) (*state.RunState, []Pending, error) {
	c, err := dial(f, &srv)
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	if wait {
		var res RunResult
		if err := c.GetWorkflow(ctx, id, "").Get(ctx, &res); err != nil {
			return nil, nil, fault.New(fault.Usage, "run %s on the Temporal server: %w", id, err)
		}
		_, err := saveRuns(ctx, f, append(res.Children, res.State)...)
		return res.State, nil, err
	}
	v, err := c.QueryWorkflow(ctx, id, "", QueryState)
	if err != nil {
		return nil, nil, fault.New(fault.Usage, "run %s on the Temporal server: %w", id, err)
	}
	var st *state.RunState
	if err := v.Get(&st); err != nil {
		return nil, nil, fault.Wrap(fault.System, fmt.Errorf("read the state of run %s: %w", id, err))
	}
	if st == nil {
		return nil, nil, fault.New(fault.Usage, "run %s has not started on the Temporal server yet (no worker took it)", id)
	}
	var ps []Pending
	if v, err := c.QueryWorkflow(ctx, id, "", QueryWaiting); err == nil {
		_ = v.Get(&ps)
	}
	_, err = saveRuns(ctx, f, st)
	return st, ps, err
}

// saveRuns writes the states of ended runs into the local state directory, as a local run
// leaves them, so that awf status, history, audit and resume find them; it returns the store.
func saveRuns(ctx context.Context, f *cmdutil.Factory, runs ...*state.RunState) (ports.StateStore, error) {
	store, err := f.Store()
	if err != nil {
		return nil, err
	}
	for _, st := range runs {
		if st == nil || !st.Status.Ended() {
			continue
		}
		if err := store.Save(context.WithoutCancel(ctx), st); err != nil {
			return nil, fault.Wrap(fault.System, fmt.Errorf("save the state of run %s: %w", st.ID, err))
		}
	}
	return store, nil
}

// whoAmI names the person deciding: the OS user.
func whoAmI() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "unknown"
}
