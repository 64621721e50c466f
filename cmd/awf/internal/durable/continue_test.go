package durable

import (
	"context"
	"errors"
	"testing"

	"github.com/google/uuid"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

const continueWorkflow = `name: cont
steps:
  - name: one
    type: shell
    command: echo one
  - name: save
    type: tool
    tool: write_file
    args:
      path: out.txt
      content: "{{states.one.output}}"
output: "{{states.save.output}}"
`

// TestContinueAsNewCarriesTheRun: a run told to continue as new after its first step ends
// its execution with a continuation holding the step's state, its id counter, its progress
// events and a decision that arrived before its call waits; the next execution runs only the
// rest, lets the carried decision release the call without a new signal, numbers its events
// after the carried ones, and ends as a run that never stopped (no resume counted).
func TestContinueAsNewCarriesTheRun(t *testing.T) {
	in := RunInput{RunID: "run-1", File: "/w/c.yaml", Files: map[string][]byte{"/w/c.yaml": []byte(continueWorkflow)},
		WorkDir: "/w", SharedWorkspace: true}
	callID := uuid.NewSHA1(uuid.NameSpaceURL, []byte("awf:run-1:1")).String()
	shells := 0
	shell := func(context.Context, ShellInput) (ShellOutput, error) {
		shells++
		return ShellOutput{Result: ports.ProcessResult{Stdout: "one\n"}}, nil
	}

	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(Run, workflow.RegisterOptions{Name: WorkflowName})
	env.RegisterActivityWithOptions(shell, activity.RegisterOptions{Name: ActivityShell})
	env.RegisterActivityWithOptions((&fakeTools{}).Tool, activity.RegisterOptions{Name: ActivityTool})
	env.SetContinueAsNewSuggested(true)
	env.RegisterDelayedCallback(func() {
		env.SignalWorkflow(SignalDecision, Decision{CallID: callID, Allow: true, By: "ann", Host: "h"})
	}, 0)
	env.ExecuteWorkflow(WorkflowName, in)
	var can *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("first execution ended with %v, want a continue-as-new", err)
	}
	var next RunInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	c := next.Continued
	if c == nil || c.State == nil || c.State.States["one"] == nil || c.State.States["one"].Status != state.Completed ||
		c.State.States["save"] != nil || c.Executions != 1 || len(c.Events) == 0 || c.EventBase != 0 {
		t.Fatalf("continuation = %+v", c)
	}
	if len(c.Decisions) != 1 || c.Decisions[0].CallID != callID {
		t.Fatalf("the early decision was not carried: %+v", c.Decisions)
	}

	env = s.NewTestWorkflowEnvironment()
	env.RegisterWorkflowWithOptions(Run, workflow.RegisterOptions{Name: WorkflowName})
	env.RegisterActivityWithOptions(shell, activity.RegisterOptions{Name: ActivityShell})
	tools := &fakeTools{}
	env.RegisterActivityWithOptions(tools.Tool, activity.RegisterOptions{Name: ActivityTool})
	env.ExecuteWorkflow(WorkflowName, next)
	var res RunResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	if res.State == nil || res.State.Status != state.Completed || res.State.Output != "wrote one" || res.State.Resumed != 0 {
		t.Fatalf("result = %+v (error %q)", res.State, res.Error)
	}
	if shells != 1 || tools.ran != 1 {
		t.Errorf("shell steps run %d, tool calls %d; want each once", shells, tools.ran)
	}
	v, err := env.QueryWorkflow(QueryEvents, 0)
	var page EventPage
	if err != nil || v.Get(&page) != nil {
		t.Fatalf("events query: %v", err)
	}
	if len(page.Events) <= len(c.Events) || page.Next != len(page.Events) {
		t.Fatalf("events = %d (next %d), want the %d carried and more", len(page.Events), page.Next, len(c.Events))
	}
	for i, ev := range page.Events {
		if ev.Seq != i || ev.RunID != "run-1" {
			t.Errorf("event %d: %+v, want run-1's event %d (numbered on from the carried ones)", i, ev, i)
		}
		if i >= len(c.Events) && ev.Kind == ports.RunStarted {
			t.Errorf("the continuation announced a second start: %+v", ev)
		}
	}
}

// TestEventsFromCountsOverExecutions: the events query's index counts the events of every
// execution of the run; an index before the carried ones gets them all, one past the end
// none, and Next is where the follower asks next.
func TestEventsFromCountsOverExecutions(t *testing.T) {
	x := &execution{base: 5, events: []Event{{Seq: 5}, {Seq: 6}, {Seq: 7}}, running: map[string]bool{"child": true}}
	for _, c := range []struct{ from, n int }{{0, 3}, {5, 3}, {7, 1}, {8, 0}, {100, 0}, {-3, 3}} {
		p := x.eventsFrom(c.from)
		if len(p.Events) != c.n || p.Next != 8 || len(p.Running) != 1 {
			t.Errorf("eventsFrom(%d) = %d events, next %d, running %v; want %d, 8, [child]", c.from, len(p.Events), p.Next, p.Running, c.n)
		}
	}
}
