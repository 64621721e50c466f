package durable

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
)

const approveWorkflow = `name: approve
steps:
  - name: save
    type: tool
    tool: write_file
    args:
      path: out.txt
      content: hi
output: "{{states.save.output}}"
`

// fakeTools answers the tool activity as a worker whose approval flow asks about every call:
// pending without a decision, the decision's outcome with one. It counts the calls that ran.
type fakeTools struct{ ran int }

func (f *fakeTools) Tool(_ context.Context, in ToolInput) (ToolOutput, error) {
	if in.Grant == nil {
		return ToolOutput{Pending: &Pending{CallID: in.Req.CallID, Step: in.Req.Step, Tool: in.Req.Name, Args: in.Req.Args, Digest: "d1", Timeout: time.Hour}}, nil
	}
	if !in.Grant.Allow {
		return ToolOutput{Result: tool.Result{Status: tool.StatusError, Error: "denied by " + in.Grant.By, Denied: true}}, nil
	}
	f.ran++
	return ToolOutput{Result: tool.OK("wrote " + fmt.Sprint(in.Req.Args["content"]))}, nil
}

func runApproval(t *testing.T, signal func(env *testsuite.TestWorkflowEnvironment, callID string)) (RunResult, *fakeTools) {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(Run, workflow.RegisterOptions{Name: WorkflowName})
	fake := &fakeTools{}
	env.RegisterActivityWithOptions(fake.Tool, activity.RegisterOptions{Name: ActivityTool})
	in := RunInput{RunID: "run-1", File: "/w/approve.yaml", Files: map[string][]byte{"/w/approve.yaml": []byte(approveWorkflow)},
		WorkDir: "/w", SharedWorkspace: true}
	callID := uuid.NewSHA1(uuid.NameSpaceURL, []byte("awf:run-1:1")).String()
	signal(env, callID)
	env.ExecuteWorkflow(WorkflowName, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res RunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return res, fake
}

// TestDecisionBeforeTheWaitIsKept: a decision that reaches the run before its call waits
// (the known race of signal-based approvals) is kept and releases the call when it waits.
func TestDecisionBeforeTheWaitIsKept(t *testing.T) {
	res, fake := runApproval(t, func(env *testsuite.TestWorkflowEnvironment, callID string) {
		env.RegisterDelayedCallback(func() {
			env.SignalWorkflow(SignalDecision, Decision{CallID: callID, Allow: true, By: "ann", Host: "h"})
		}, 0)
	})
	if res.State == nil || res.State.Status != state.Completed || res.State.Output != "wrote hi" || fake.ran != 1 {
		t.Fatalf("result = %+v (error %q), calls run %d", res.State, res.Error, fake.ran)
	}
}

// TestUnansweredCallTimesOutDenied: nobody answers within the approval timeout: the call is
// denied (never consented), the step fails denied, and the tool never ran.
func TestUnansweredCallTimesOutDenied(t *testing.T) {
	res, fake := runApproval(t, func(*testsuite.TestWorkflowEnvironment, string) {})
	if res.State == nil || res.State.Status != state.Failed || fake.ran != 0 || res.Kind.String() != "denied" {
		t.Fatalf("result = %+v (error %q, kind %v), calls run %d", res.State, res.Error, res.Kind, fake.ran)
	}
}

// TestDecisionForAnotherCallDoesNotRelease: a decision naming a digest other than the
// waiting call's (an answer to something else than what waits) does not release it.
func TestDecisionForAnotherCallDoesNotRelease(t *testing.T) {
	res, fake := runApproval(t, func(env *testsuite.TestWorkflowEnvironment, callID string) {
		env.RegisterDelayedCallback(func() {
			env.SignalWorkflow(SignalDecision, Decision{CallID: callID, Digest: "other", Allow: true, By: "ann"})
		}, time.Minute)
	})
	if res.State == nil || res.State.Status != state.Failed || fake.ran != 0 {
		t.Fatalf("result = %+v (error %q), calls run %d", res.State, res.Error, fake.ran)
	}
}
