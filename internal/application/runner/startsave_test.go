package runner_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
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
