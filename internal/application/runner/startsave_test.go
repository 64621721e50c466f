package runner_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// TestStartSaveDelay checks that with a delay a quick step is saved once, at its end, while a
// step that outlasts the delay is also saved as running.
func TestStartSaveDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.deps.StartSaveDelay = 100 * time.Millisecond
		e.respond(func(ctx context.Context, req ports.ProcessRequest) (ports.ProcessResult, error) {
			if req.Script == "slow" {
				time.Sleep(time.Second)
			}
			return ok("")
		})
		run, err := e.runner().Run(t.Context(), runner.Request{Workflow: wf(shell("quick", "quick"), shell("slow", "slow"))})
		if err != nil {
			t.Fatal(err)
		}
		var running []string
		for _, snap := range e.snapshots(run.ID) {
			for name, st := range snap.Steps {
				if st == state.Running {
					running = append(running, name)
				}
			}
		}
		if len(running) != 1 || running[0] != "slow" {
			t.Errorf("steps saved as running = %v, want only [slow]", running)
		}
	})
}

// TestStartSaveDelaySavedStep checks that a step that saves its record before the delay (an
// agent's first tool call) is not saved again when the delay passes: its own save recorded
// it as running.
func TestStartSaveDelaySavedStep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.deps.StartSaveDelay = 100 * time.Millisecond
		e.deps.Agents = agentFunc(func(ctx context.Context, sc runner.StepContext) (runner.StepOutcome, error) {
			if err := sc.Save(ctx, func(s *state.StepState) {
				s.ToolCalls = append(s.ToolCalls, state.ToolCallRecord{ID: "c1", Tool: "t", InFlight: true})
			}); err != nil {
				return runner.StepOutcome{}, err
			}
			time.Sleep(time.Second)
			return runner.StepOutcome{Output: "done"}, nil
		})
		step := workflow.Step{Name: "think", Type: workflow.StepAgent, Agent: &workflow.AgentStep{Prompt: "go"}}
		run, err := e.runner().Run(t.Context(), runner.Request{Workflow: wf(step)})
		if err != nil {
			t.Fatal(err)
		}
		// Run start, the call in flight, step end, run end.
		if got := e.snapshots(run.ID); len(got) != 4 || got[1].Steps["think"] != state.Running || got[1].InFlight != 1 {
			t.Errorf("saves = %+v, want 4: no save of the step's start after its own", got)
		}
	})
}
