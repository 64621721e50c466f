package durable

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// TestRunSettingsTimeActivities: the heartbeat timeout a run was submitted with is its
// activities' (and their start-to-close timeout leaves that much beyond the call's); without
// one, the default.
func TestRunSettingsTimeActivities(t *testing.T) {
	for _, c := range []struct {
		set, want time.Duration
	}{{0, defaultHeartbeatTimeout}, {20 * time.Second, 20 * time.Second}} {
		var s testsuite.WorkflowTestSuite
		env := s.NewTestWorkflowEnvironment()
		env.RegisterWorkflowWithOptions(Run, workflow.RegisterOptions{Name: WorkflowName})
		var got time.Duration
		env.RegisterActivityWithOptions(func(ctx context.Context, in ToolInput) (ToolOutput, error) {
			got = activity.GetInfo(ctx).HeartbeatTimeout
			return ToolOutput{Result: tool.OK("ok")}, nil
		}, activity.RegisterOptions{Name: ActivityTool})
		env.ExecuteWorkflow(WorkflowName, RunInput{RunID: "run-1", File: "/w/approve.yaml",
			Files: map[string][]byte{"/w/approve.yaml": []byte(approveWorkflow)}, WorkDir: "/w", SharedWorkspace: true,
			HeartbeatTimeout: c.set})
		var res RunResult
		if err := env.GetWorkflowResult(&res); err != nil || res.State == nil || res.State.Status != state.Completed {
			t.Fatalf("run: %+v, %v", res, err)
		}
		if got != c.want {
			t.Errorf("heartbeat timeout %v submitted: the activity has %v, want %v", c.set, got, c.want)
		}
	}
}
