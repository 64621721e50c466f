package durable

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/awf-dev/awf/internal/application/agent"
	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/infrastructure/schema"
	"github.com/awf-dev/awf/internal/infrastructure/templater"
)

// agentTurnsChange versions the mapping of agent steps: before it, an attempt of an agent
// step was one activity running the whole loop on a worker; since, the loop runs in the
// workflow and each model turn and each tool call is an activity of its own. Runs started
// before keep the old mapping when replayed.
const agentTurnsChange = "awf.agent-turns"

// agentPort runs agent steps: the agent loop of a local run (internal/application/agent),
// interpreted in the workflow, with ports that are activities: the model turns (modelSource),
// the tool calls (toolPort: durable approvals included), the tools' descriptions and the
// refusals' audit records. What the loop decides (which calls run, their records, tokens,
// conversation) is replayed from the history; what it touches runs on a worker.
type agentPort struct{ x *execution }

func (p agentPort) Execute(ctx context.Context, sc runner.StepContext) (runner.StepOutcome, error) {
	wctx := wctxOf(ctx)
	if workflow.GetVersion(wctx, agentTurnsChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return p.oneActivity(ctx, sc)
	}
	x := p.x
	if d, ok := ctx.Value(timeoutKey{}).(time.Duration); ok && d > 0 {
		ctx = context.WithValue(ctx, deadlineKey{}, workflow.Now(wctx).Add(d))
	}
	// One executor per attempt: its prompt_file reads block this attempt's coroutine.
	ex, err := agent.New(agent.Deps{
		Providers: modelSource{x}, Tools: agentTools{x}, Catalog: catalogPort{x}, Refusals: refusalPort{x},
		Templater: templater.New(), Schemas: schema.New(),
		Clock:    ports.ClockFunc(func() time.Time { return workflow.Now(wctx) }),
		ReadFile: x.readFile(ctx),
		Fork:     fork,
	})
	if err != nil {
		return runner.StepOutcome{}, err
	}
	save := sc.Save
	sc.Save = func(ctx context.Context, mutate func(*state.StepState)) error {
		return save(ctx, func(s *state.StepState) {
			mutate(s)
			x.settleRecords(s)
		})
	}
	return ex.Execute(ctx, sc)
}

// deadlineKey carries the end of an agent step attempt that has a timeout: the step's
// timeout bounds the whole attempt, as locally, not each of its activities.
type deadlineKey struct{}

// withinDeadline gives the next activity of an attempt what is left of the attempt's
// timeout, or fails with the step's timeout when nothing is.
func withinDeadline(ctx context.Context, what string) (context.Context, error) {
	deadline, ok := ctx.Value(deadlineKey{}).(time.Time)
	if !ok {
		return ctx, nil
	}
	left := deadline.Sub(workflow.Now(wctxOf(ctx)))
	if left <= 0 {
		return ctx, fault.Wrap(fault.Execution, fmt.Errorf("%s: %w", what, context.DeadlineExceeded))
	}
	return context.WithValue(ctx, timeoutKey{}, left), nil
}

// agentTools runs the calls of an agent step as a tool step's: toolPort, within what is
// left of the attempt's timeout.
type agentTools struct{ x *execution }

func (t agentTools) Invoke(ctx context.Context, req ports.ToolRequest) (tool.Result, error) {
	ctx, err := withinDeadline(ctx, "tool "+req.Name)
	if err != nil {
		return tool.Result{}, err
	}
	if _, ok := ctx.Value(deadlineKey{}).(time.Time); ok {
		// The worker's governed path ends the call when the attempt ends, as a local run's
		// context does (the activity's own timeout leaves room for heartbeats).
		if left := ctx.Value(timeoutKey{}).(time.Duration); req.Timeout <= 0 || left < req.Timeout {
			req.Timeout = left
		}
	}
	return toolPort(t).Invoke(ctx, req)
}

// readFile reads a step's prompt_file on a worker: the file is in the run's workspace, as
// for a local run, not part of the definition submitted with the run.
func (x *execution) readFile(ctx context.Context) func(string) ([]byte, error) {
	return func(path string) ([]byte, error) {
		var out ReadOutput
		wctx := x.activity(ctx, time.Minute)
		if err := workflow.ExecuteActivity(wctx, ActivityRead, ReadInput{Path: path}).Get(wctx, &out); err != nil {
			return nil, activityError(ctx, "read "+path, err)
		}
		return out.Data, out.Err.err()
	}
}

// settled remembers, for the call's record (settleRecords), what the worker that ran it
// computed for the tool's check and what it decided about a call a lost worker left in
// flight.
func (x *execution) settled(callID string, out ToolOutput) {
	if out.Recovery == nil && out.Intent == nil {
		return
	}
	if x.settles == nil {
		x.settles = map[string]ToolOutput{}
	}
	x.settles[callID] = ToolOutput{Recovery: out.Recovery, Intent: out.Intent}
}

// settleRecords writes into the records of an agent step's calls, once they have their
// result, what the worker reported beside it: the intent (as a local run records it before
// the call runs) and the recovery decision (as a local resume records it).
func (x *execution) settleRecords(s *state.StepState) {
	if len(x.settles) == 0 {
		return
	}
	for i := range s.ToolCalls {
		c := &s.ToolCalls[i]
		out, ok := x.settles[c.ID]
		if !ok || c.Result == nil {
			continue
		}
		if out.Intent != nil {
			c.Intent = out.Intent
		}
		if r := out.Recovery; r != nil {
			rc := *r
			c.Recovery = &rc
			if r.Decision == state.RecoveryUnknown || r.Decision == state.RecoverySkip {
				c.Outcome = state.OutcomeUnknown
			}
		}
		delete(x.settles, c.ID)
	}
}

// oneActivity runs an attempt of an agent step as one activity: the mapping of runs started
// before agentTurnsChange.
func (p agentPort) oneActivity(ctx context.Context, sc runner.StepContext) (runner.StepOutcome, error) {
	in := AgentInput{Run: p.x.ref, Step: sc.Step.Name, Scope: sc.Scope, Attempt: sc.Attempt, Previous: sc.Previous,
		Others: map[string]state.StepState{}}
	_ = sc.Save(ctx, func(s *state.StepState) { in.Live = *s })
	if a := sc.Step.Agent; a != nil && a.ContinueFrom != "" {
		if s, ok := sc.Lookup(a.ContinueFrom); ok {
			in.Others[a.ContinueFrom] = s
		}
	}
	out, err := runActivity[AgentOutput](p.x.activity(ctx, 0), p.x, ActivityAgent, &in)
	if err != nil {
		return runner.StepOutcome{}, activityError(ctx, "agent step", err)
	}
	for _, ev := range out.Events {
		sc.Emit(ev)
	}
	_ = sc.Save(ctx, func(s *state.StepState) {
		s.ToolCalls, s.ToolStats, s.Tokens, s.Conversation = out.Record.ToolCalls, out.Record.ToolStats, out.Record.Tokens, out.Record.Conversation
		s.Turns, s.Vars = out.Record.Turns, out.Record.Vars
	})
	return out.Outcome, out.Err.err()
}

// modelSource resolves an agent step's provider on a worker (the configuration, API keys and
// cassettes are the worker's) and gives the loop a provider whose every reply is a model
// turn activity.
type modelSource struct{ x *execution }

func (m modelSource) Provider(ctx context.Context, ref ports.ProviderRef) (ports.ResolvedProvider, error) {
	mref := ModelRef{Step: ref.Step, Name: ref.Name, Model: ref.Model, ToolFormat: ref.ToolFormat, Tools: ref.Tools}
	out, err := runActivity[ResolveOutput](m.x.activity(ctx, time.Minute), m.x, ActivityResolve, &ResolveInput{Run: m.x.ref, Ref: mref})
	if err != nil {
		return ports.ResolvedProvider{}, activityError(ctx, "provider of step "+ref.Step, err)
	}
	if err := out.Err.err(); err != nil {
		return ports.ResolvedProvider{}, err
	}
	return ports.ResolvedProvider{Provider: &modelPort{x: m.x, ref: mref}, Name: out.Name, Model: out.Model,
		Options: out.Options, Endpoint: out.Endpoint, Cassette: out.Cassette, Handoff: out.Handoff}, nil
}

// modelPort is a step's provider in the workflow: each Chat is a model turn activity. The
// request goes by reference: every message (and the tool list) is named by the SHA-256 of its
// JSON, and only those no earlier turn of the run sent travel with the activity, for the
// worker to put in the payload store. The history grows with each turn's new messages, not
// with the whole conversation at every turn.
type modelPort struct {
	x   *execution
	ref ModelRef
	// prev and digests are the messages of the last request and their digests: a request
	// repeats the last one's messages and adds some, so only the new ones are encoded and
	// digested (a message compares equal to itself at the cost of a few pointer compares).
	prev    []state.Message
	digests []string
}

func (m *modelPort) Chat(ctx context.Context, req ports.ChatRequest) (ports.ChatResponse, error) {
	x := m.x
	ctx, err := withinDeadline(ctx, "model turn of step "+m.ref.Step)
	if err != nil {
		return ports.ChatResponse{}, err
	}
	if x.sent == nil {
		x.sent, x.turns = map[string]bool{}, map[string]int{}
	}
	in := TurnInput{Run: x.ref, Ref: m.ref, Turn: x.turns[m.ref.Step], Model: req.Model, System: req.System, Options: req.Options,
		Blobs: map[string]json.RawMessage{}}
	// Every reply counts, as a cassette's cursor counts them locally, failed or not.
	x.turns[m.ref.Step]++
	add := func(v any) (string, error) {
		b, err := json.Marshal(v)
		if err != nil {
			return "", fault.Wrap(fault.System, fmt.Errorf("model turn of step %s: %w", m.ref.Step, err))
		}
		d := blobDigest(b)
		if !x.sent[d] {
			in.Blobs[d] = b
		}
		return d, nil
	}
	for i, msg := range req.Messages {
		if i < len(m.prev) && sameMessage(m.prev[i], msg) {
			if d := m.digests[i]; !x.sent[d] {
				b, _ := json.Marshal(msg)
				in.Blobs[d] = b
			}
			in.Messages = append(in.Messages, m.digests[i])
			continue
		}
		d, err := add(msg)
		if err != nil {
			return ports.ChatResponse{}, err
		}
		in.Messages = append(in.Messages, d)
	}
	m.prev, m.digests = req.Messages, in.Messages
	if len(req.Tools) > 0 {
		d, err := add(req.Tools)
		if err != nil {
			return ports.ChatResponse{}, err
		}
		in.Tools = d
	}
	out, err := runActivity[TurnOutput](x.activity(ctx, 0), x, ActivityModelTurn, &in)
	if err != nil {
		return ports.ChatResponse{}, activityError(ctx, "model turn of step "+m.ref.Step, err)
	}
	for d := range in.Blobs {
		x.sent[d] = true // stored by the worker that ran the turn
	}
	if len(out.Summaries) > 0 && x.summaries == nil {
		x.summaries = map[string]string{}
	}
	maps.Copy(x.summaries, out.Summaries)
	return out.Response, out.Err.err()
}

// sameMessage reports whether a and b are equal. Strings that share their bytes (a message
// of the last request, carried over) compare without reading them.
func sameMessage(a, b state.Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.ContentFile == b.ContentFile && a.ContentSize == b.ContentSize &&
		a.ToolCallID == b.ToolCallID && a.Name == b.Name && a.IsError == b.IsError &&
		slices.Equal(a.ToolCalls, b.ToolCalls) && slices.Equal(a.Thinking, b.Thinking)
}

// blobDigest names a message or a tool list in the payload store.
func blobDigest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// catalogPort describes a step's tools on a worker (the registry is built there). What is
// code stays there: a tool's summary of a call for people comes with the model turn that asks
// for the call (TurnOutput.Summaries), and its check of a call a crash cut off runs on the
// worker that takes the call over (Activities.Tool).
type catalogPort struct{ x *execution }

func (c catalogPort) Describe(ctx context.Context, q ports.ToolQuery) ([]ports.ToolInfo, error) {
	out, err := runActivity[DescribeOutput](c.x.activity(ctx, time.Minute), c.x, ActivityDescribe, &DescribeInput{Run: c.x.ref, Query: q})
	if err != nil {
		return nil, activityError(ctx, "describe tools", err)
	}
	if err := out.Err.err(); err != nil {
		return nil, err
	}
	infos := make([]ports.ToolInfo, len(out.Tools))
	for i, t := range out.Tools {
		name := t.Schema.Name
		if i < len(q.Names) {
			name = q.Names[i] // the name the model calls it by, as the worker's summaries
		}
		infos[i] = ports.ToolInfo{Schema: t.Schema, Annotations: t.Annotations,
			Meta: func(args map[string]any) string { return c.x.summaries[summaryKey(name, args)] }}
	}
	return infos, nil
}

// refusalPort audits, on a worker, the calls the loop refuses before they reach a tool.
type refusalPort struct{ x *execution }

func (r refusalPort) Refuse(ctx context.Context, req ports.ToolRequest, rule, reason string) error {
	req.Scope = nil // the audit record holds the call, not what templates see
	out, err := runActivity[RefuseOutput](r.x.activity(ctx, time.Minute), r.x, ActivityRefuse, &RefuseInput{Run: r.x.ref, Req: req, Rule: rule, Reason: reason})
	if err != nil {
		return activityError(ctx, "audit refused call "+req.CallID, err)
	}
	return out.Err.err()
}
