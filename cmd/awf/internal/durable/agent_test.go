package durable

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
)

const agentWorkflow = `name: agentic
tools:
  - name: big
    description: Print a lot
    command: "true"
    approval: auto
steps:
  - name: work
    type: agent
    provider: fake
    prompt: Call big twice.
    tools: [big]
output: "{{states.work.output}}"
`

// fakeWorker answers the activities of an agent step as a worker would: a model that asks for
// big twice (one call a reply) and then answers, and a tool whose second call a lost worker
// cut off (the worker taking over settled it). It keeps the model turns it got.
type fakeWorker struct {
	turns []TurnInput
	calls int
}

func (f *fakeWorker) Resolve(_ context.Context, in ResolveInput) (ResolveOutput, error) {
	return ResolveOutput{Name: "fake", Model: "m"}, nil
}

func (f *fakeWorker) ModelTurn(_ context.Context, in TurnInput) (TurnOutput, error) {
	f.turns = append(f.turns, in)
	resp := ports.ChatResponse{Content: "done", Usage: state.Tokens{Input: 10, Output: 1, Total: 11}, FinishReason: ports.FinishStop}
	if n := len(f.turns); n <= 2 {
		resp.Content, resp.FinishReason = "calling", ports.FinishToolCalls
		resp.ToolCalls = []state.CallRef{{ID: "c" + string(rune('0'+n)), Name: "big", Arguments: `{"n":` + string(rune('0'+n)) + `}`}}
	}
	out := TurnOutput{Response: resp}
	for _, c := range resp.ToolCalls {
		var args map[string]any
		_ = json.Unmarshal([]byte(c.Arguments), &args)
		out.Summaries = map[string]string{summaryKey(c.Name, args): "big " + c.Arguments}
	}
	return out, nil
}

func (f *fakeWorker) Describe(_ context.Context, in DescribeInput) (DescribeOutput, error) {
	return DescribeOutput{Tools: []ToolDescription{{Schema: ports.ToolSchema{Name: "big", Parameters: json.RawMessage(`{"type":"object"}`)}}}}, nil
}

func (f *fakeWorker) Tool(_ context.Context, in ToolInput) (ToolOutput, error) {
	f.calls++
	if f.calls == 2 {
		r := state.Recovery{Decision: state.RecoveryUnknown, By: state.RecoveredByNonInteractive}
		return ToolOutput{Result: tool.Result{Status: tool.StatusError, Error: "interrupted"}, Recovery: &r}, nil
	}
	return ToolOutput{Result: tool.OK("0123456789")}, nil
}

// TestAgentStepInWorkflow: an agent step's loop runs in the workflow, each model turn and
// each call an activity. A model turn carries the messages no earlier turn sent, the others
// by digest only (the history grows with what is new, not with the conversation at every
// turn); the step's record is the loop's (calls, stats, tokens, turns), and a call a worker
// settled after a lost worker has its recovery in its record.
func TestAgentStepInWorkflow(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(Run, workflow.RegisterOptions{Name: WorkflowName})
	f := &fakeWorker{}
	env.RegisterActivityWithOptions(f.Resolve, activity.RegisterOptions{Name: ActivityResolve})
	env.RegisterActivityWithOptions(f.ModelTurn, activity.RegisterOptions{Name: ActivityModelTurn})
	env.RegisterActivityWithOptions(f.Describe, activity.RegisterOptions{Name: ActivityDescribe})
	env.RegisterActivityWithOptions(f.Tool, activity.RegisterOptions{Name: ActivityTool})
	env.ExecuteWorkflow(WorkflowName, RunInput{RunID: "run-1", File: "/w/agentic.yaml",
		Files: map[string][]byte{"/w/agentic.yaml": []byte(agentWorkflow)}, WorkDir: "/w", SharedWorkspace: true})
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res RunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.State == nil || res.State.Status != state.Completed || res.State.Output != "done" {
		t.Fatalf("result = %+v (error %q)", res.State, res.Error)
	}
	if len(f.turns) != 3 {
		t.Fatalf("%d model turns, want 3", len(f.turns))
	}
	for i, turn := range f.turns {
		// Turn 1 sends the prompt and the tool list; each later turn the model's reply and
		// the call's result.
		want := map[int]int{0: 2, 1: 2, 2: 2}[i]
		if len(turn.Blobs) != want || len(turn.Messages) != 1+2*i || turn.Turn != i {
			t.Errorf("turn %d: %d blobs (want %d), %d messages, turn %d", i, len(turn.Blobs), want, len(turn.Messages), turn.Turn)
		}
		for _, d := range turn.Messages[:max(0, len(turn.Messages)-2)] {
			if _, ok := turn.Blobs[d]; ok && i > 0 {
				t.Errorf("turn %d sends again message %s that an earlier turn sent", i, d)
			}
		}
		if i > 0 && turn.Tools != f.turns[0].Tools {
			t.Errorf("turn %d names another tool list", i)
		}
	}
	if !slices.Equal(f.turns[2].Messages[:3], f.turns[1].Messages) {
		t.Errorf("turn 3's messages do not start with turn 2's")
	}
	st := res.State.States["work"]
	if len(st.ToolCalls) != 2 || st.ToolStats == nil || st.ToolStats.TotalCalls != 2 || st.ToolStats.Failed != 1 || st.Tokens == nil || st.Tokens.Total != 33 || len(st.Turns) != 3 {
		t.Fatalf("step record = %+v", st)
	}
	// The calls' summaries for people came with the turns that asked for them.
	v, err := env.QueryWorkflow(QueryEvents, 0)
	if err != nil {
		t.Fatal(err)
	}
	var page EventPage
	if err := v.Get(&page); err != nil {
		t.Fatal(err)
	}
	var metas []string
	for _, ev := range page.Events {
		if ev.Kind == ports.ToolStarted {
			metas = append(metas, ev.Meta)
		}
	}
	if !slices.Equal(metas, []string{`big {"n":1}`, `big {"n":2}`}) {
		t.Errorf("tool_started summaries = %q", metas)
	}
	if c := st.ToolCalls[0]; c.Recovery != nil || c.Result == nil || !c.Result.Success || c.Result.Output != "0123456789" {
		t.Errorf("first call = %+v", c)
	}
	if c := st.ToolCalls[1]; c.Recovery == nil || c.Recovery.Decision != state.RecoveryUnknown || c.Outcome != state.OutcomeUnknown || c.Result.Success {
		t.Errorf("the call a lost worker cut off = %+v, want its recovery recorded", c)
	}
}

// TestModelTurnRefusesBadBlobs: a model turn whose blobs do not have their digest, or whose
// references are not digests (a path, say), fails without touching the store outside it.
func TestModelTurnRefusesBadBlobs(t *testing.T) {
	a := &Activities{store: t.TempDir()}
	for name, in := range map[string]TurnInput{
		"wrong digest": {Messages: []string{blobDigest([]byte(`{}`))}, Blobs: map[string]json.RawMessage{blobDigest([]byte(`{}`)): []byte(`{"role":"user"}`)}},
		"path":         {Messages: []string{"../../../../../../../../../../../../../../../../../../../etc/passwd"}},
		"not hex":      {Messages: []string{"zz" + blobDigest(nil)[2:]}},
		"missing":      {Messages: []string{blobDigest([]byte("nobody stored this"))}},
	} {
		if _, err := a.request(in); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	good := []byte(`{"role":"user","content":"hi"}`)
	req, err := a.request(TurnInput{Messages: []string{blobDigest(good)}, Blobs: map[string]json.RawMessage{blobDigest(good): good}})
	if err != nil || len(req.Messages) != 1 || req.Messages[0].Content != "hi" {
		t.Fatalf("request = %+v, %v", req, err)
	}
	// Stored: a later turn names it only.
	req, err = a.request(TurnInput{Messages: []string{blobDigest(good)}})
	if err != nil || req.Messages[0].Content != "hi" {
		t.Fatalf("later request = %+v, %v", req, err)
	}
}
