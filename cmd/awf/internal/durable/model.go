package durable

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"go.temporal.io/sdk/activity"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// Activities of agent steps whose loop runs in the workflow (see agentPort). Their names
// are part of the recorded histories.
const (
	ActivityResolve   = "awf.model.resolve"
	ActivityModelTurn = "awf.model.turn"
	ActivityDescribe  = "awf.tools.describe"
	ActivityRefuse    = "awf.tools.refuse"
)

// agentSteps is what a workflow execution keeps for the agent loops it runs: the blobs of
// model requests already in the payload store, the model turns of each step so far, and what
// workers reported beside calls' results not yet in their records (see settleRecords).
type agentSteps struct {
	summaries map[string]string
	sent      map[string]bool
	turns     map[string]int
	settles   map[string]ToolOutput
}

// ModelRef is what a worker needs to resolve an agent step's provider (ports.ProviderRef
// without what the worker has: the workflow, the run and its inputs).
type ModelRef struct {
	Step, Name, Model, ToolFormat string
	Tools                         []string
}

// ResolveInput asks a worker for a step's provider.
type ResolveInput struct {
	Run RunRef
	Ref ModelRef
}

// ResolveOutput is the resolved provider as the loop records it (ports.ResolvedProvider
// without the provider itself, which stays on the worker).
type ResolveOutput struct {
	Name, Model        string
	Options            map[string]any
	Endpoint, Cassette string
	Handoff            string
	Err                *Failure
}

// TurnInput is one model turn: the request with its messages and tool list by digest.
// Blobs carries, by digest, the JSON of those no earlier turn of the run sent.
type TurnInput struct {
	Run RunRef
	Ref ModelRef
	// Turn counts the step's earlier model turns in the run (a cassette plays that one).
	Turn     int
	Model    string
	System   string
	Messages []string
	Tools    string
	Options  map[string]any
	Blobs    map[string]json.RawMessage
}

// TurnOutput is the model's reply, or the provider's error (not retried by Temporal: the
// provider retries transient errors itself, as in a local run).
type TurnOutput struct {
	Response ports.ChatResponse
	Err      *Failure
	// Summaries are the one-line summaries for people of the calls the reply asks for
	// ("read notes/a.txt"), by summaryKey: a tool's summary is code on the worker.
	Summaries map[string]string
}

// DescribeInput asks a worker for the descriptions of a step's tools.
type DescribeInput struct {
	Run   RunRef
	Query ports.ToolQuery
}

// ToolDescription is what crosses the history of a ports.ToolInfo.
type ToolDescription struct {
	Schema      ports.ToolSchema
	Annotations tool.Annotations
}

// DescribeOutput is the step's tools, in the order asked.
type DescribeOutput struct {
	Tools []ToolDescription
	Err   *Failure
}

// RefuseInput is a call the loop refused before it reached a tool, for the audit log.
type RefuseInput struct {
	Run          RunRef
	Req          ports.ToolRequest
	Rule, Reason string
}

// RefuseOutput says whether the refusal was audited.
type RefuseOutput struct {
	Err *Failure
}

// ReadInput is a file a step reads from the workspace (prompt_file).
type ReadInput struct {
	Path string
}

// ReadOutput is its content.
type ReadOutput struct {
	Data []byte
	Err  *Failure
}

func registerAgentActivities(w activityRegistry, a *Activities) {
	w.RegisterActivityWithOptions(a.Resolve, activity.RegisterOptions{Name: ActivityResolve})
	w.RegisterActivityWithOptions(a.ModelTurn, activity.RegisterOptions{Name: ActivityModelTurn})
	w.RegisterActivityWithOptions(a.Describe, activity.RegisterOptions{Name: ActivityDescribe})
	w.RegisterActivityWithOptions(a.Refuse, activity.RegisterOptions{Name: ActivityRefuse})
	w.RegisterActivityWithOptions(a.Read, activity.RegisterOptions{Name: ActivityRead})
}

// models are a run's providers on a worker, resolved once per step reference.
type models struct {
	once     sync.Once
	source   ports.ProviderSource
	err      error
	mu       sync.Mutex
	resolved map[string]ports.ResolvedProvider
}

// provider resolves ref for the run as a local run does (ports.ProviderRef with the run's
// workflow, id and inputs), once per worker.
func (a *Activities) provider(ctx context.Context, rt *runTools, run RunRef, ref ModelRef) (ports.ResolvedProvider, error) {
	m := &rt.models
	m.once.Do(func() {
		if a.F.Providers == nil {
			m.err = fault.New(fault.System, "this worker cannot resolve model providers")
			return
		}
		var done func() error
		m.source, done, m.err = a.F.Providers(cmdutil.RunnerOptions{Tools: rt.tools, WorkDir: run.WorkDir,
			Provider: run.Provider, Model: run.Model, Replay: run.Replay, Record: run.Record})
		if m.err == nil {
			a.F.Cleanup = append(a.F.Cleanup, func() { _ = done() })
		}
		m.resolved = map[string]ports.ResolvedProvider{}
	})
	if m.err != nil {
		return ports.ResolvedProvider{}, m.err
	}
	key, _ := json.Marshal(ref)
	m.mu.Lock()
	defer m.mu.Unlock()
	if rp, ok := m.resolved[string(key)]; ok {
		return rp, nil
	}
	rp, err := m.source.Provider(ctx, ports.ProviderRef{Workflow: rt.wf, Step: ref.Step, Name: ref.Name, Model: ref.Model,
		ToolFormat: ref.ToolFormat, RunID: run.ID, Inputs: run.Inputs, Tools: ref.Tools})
	if err != nil {
		return ports.ResolvedProvider{}, fmt.Errorf("provider: %w", err)
	}
	m.resolved[string(key)] = rp
	return rp, nil
}

// Resolve resolves a step's provider on this worker.
func (a *Activities) Resolve(ctx context.Context, in ResolveInput) (ResolveOutput, error) {
	rt := a.run(in.Run)
	if rt.err != nil {
		return ResolveOutput{Err: failure(rt.err)}, nil
	}
	rp, err := a.provider(ctx, rt, in.Run, in.Ref)
	if err != nil {
		return ResolveOutput{Err: failure(err)}, nil
	}
	return ResolveOutput{Name: rp.Name, Model: rp.Model, Options: rp.Options, Endpoint: rp.Endpoint,
		Cassette: rp.Cassette, Handoff: rp.Handoff}, nil
}

// seeker is a provider that plays recorded turns (a cassette): told which turn of its step
// it plays, whichever worker played the earlier ones.
type seeker interface{ Seek(n int) }

// ModelTurn asks the step's model for one reply. A worker lost in the middle makes Temporal
// ask again (a reply has no effect but its cost); a provider's error is the step's, as in a
// local run.
func (a *Activities) ModelTurn(ctx context.Context, in TurnInput) (TurnOutput, error) {
	rt := a.run(in.Run)
	if rt.err != nil {
		return TurnOutput{Err: failure(rt.err)}, nil
	}
	req, err := a.request(in)
	if err != nil {
		return TurnOutput{Err: failure(err)}, nil
	}
	rp, err := a.provider(ctx, rt, in.Run, in.Ref)
	if err != nil {
		return TurnOutput{Err: failure(err)}, nil
	}
	if s, ok := rp.Provider.(seeker); ok {
		s.Seek(in.Turn)
	}
	defer heartbeat(ctx, nil)()
	resp, err := rp.Provider.Chat(ctx, req)
	return TurnOutput{Response: resp, Err: failure(err), Summaries: summaries(ctx, rt, in, resp.ToolCalls)}, nil
}

// summaries are the summaries of calls whose tool has one.
func summaries(ctx context.Context, rt *runTools, in TurnInput, calls []state.CallRef) map[string]string {
	var out map[string]string
	for _, c := range calls {
		infos, err := rt.tools.Registry.Describe(ctx, ports.ToolQuery{RunID: in.Run.ID, Step: in.Ref.Step, Names: []string{c.Name}})
		if err != nil || len(infos) != 1 || infos[0].Meta == nil {
			continue
		}
		var args map[string]any
		if json.Unmarshal([]byte(c.Arguments), &args) != nil {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[summaryKey(c.Name, args)] = infos[0].Meta(args)
	}
	return out
}

// summaryKey names a call by its tool and arguments (as JSON), which is all a tool's
// summary depends on.
func summaryKey(name string, args map[string]any) string {
	b, _ := json.Marshal(args)
	return name + "\x00" + string(b)
}

// request rebuilds a model request from its blobs: those the turn carries go into the
// store first (checked against their digest), the others are read from it.
func (a *Activities) request(in TurnInput) (ports.ChatRequest, error) {
	dir := filepath.Join(a.store, "blobs")
	for d, b := range in.Blobs {
		if blobDigest(b) != d {
			return ports.ChatRequest{}, fault.New(fault.System, "model turn: blob %s does not have that digest", d)
		}
		if err := (casCodec{dir: dir}).put(d, b); err != nil {
			return ports.ChatRequest{}, err
		}
	}
	read := func(d string, v any) error {
		b, ok := in.Blobs[d]
		if !ok {
			if _, err := hex.DecodeString(d); err != nil || len(d) != 64 {
				return fault.New(fault.System, "model turn: blob reference %q is not a SHA-256", d)
			}
			var err error
			if b, err = os.ReadFile(filepath.Join(dir, d)); err != nil {
				return fault.Wrap(fault.System, fmt.Errorf("model turn: %w (is AWF_TEMPORAL_STORE shared by every worker?)", err))
			}
			_ = touch(filepath.Join(dir, d)) // in use: kept by the retention sweep
		}
		if err := json.Unmarshal(b, v); err != nil {
			return fault.Wrap(fault.System, fmt.Errorf("model turn: blob %s: %w", d, err))
		}
		return nil
	}
	req := ports.ChatRequest{Model: in.Model, System: in.System, Options: in.Options, Messages: make([]state.Message, len(in.Messages))}
	for i, d := range in.Messages {
		if err := read(d, &req.Messages[i]); err != nil {
			return ports.ChatRequest{}, err
		}
	}
	if in.Tools != "" {
		if err := read(in.Tools, &req.Tools); err != nil {
			return ports.ChatRequest{}, err
		}
	}
	return req, nil
}

// Describe describes a step's tools with the run's registry.
func (a *Activities) Describe(ctx context.Context, in DescribeInput) (DescribeOutput, error) {
	rt := a.run(in.Run)
	if rt.err != nil {
		return DescribeOutput{Err: failure(rt.err)}, nil
	}
	infos, err := rt.tools.Registry.Describe(ctx, in.Query)
	if err != nil {
		return DescribeOutput{Err: failure(err)}, nil
	}
	out := DescribeOutput{Tools: make([]ToolDescription, len(infos))}
	for i, info := range infos {
		out.Tools[i] = ToolDescription{Schema: info.Schema, Annotations: info.Annotations}
	}
	return out, nil
}

// Refuse audits a call the loop refused, through the run's call gate.
func (a *Activities) Refuse(ctx context.Context, in RefuseInput) (RefuseOutput, error) {
	rt := a.run(in.Run)
	if rt.err != nil {
		return RefuseOutput{Err: failure(rt.err)}, nil
	}
	return RefuseOutput{Err: failure(rt.tools.Refuser.Refuse(ctx, in.Req, in.Rule, in.Reason))}, nil
}

// Read reads a file of the workspace.
func (a *Activities) Read(_ context.Context, in ReadInput) (ReadOutput, error) {
	b, err := os.ReadFile(in.Path)
	return ReadOutput{Data: b, Err: failure(err)}, nil
}
