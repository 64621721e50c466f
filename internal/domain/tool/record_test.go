package tool_test

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
)

func TestResultRecord(t *testing.T) {
	tests := []struct {
		name string
		res  tool.Result
		err  error
		want state.ToolCallResult
	}{
		{"ok", tool.Result{Status: tool.StatusOK, Output: "x", Approval: "auto", Truncated: true, Cached: true}, nil,
			state.ToolCallResult{Success: true, Output: "x", Approval: "auto", Truncated: true, Cached: true, DurationMs: 1500}},
		{"error result", tool.Result{Status: tool.StatusError, Output: "partial", Error: "exit 3", Approval: "rule"}, nil,
			state.ToolCallResult{Output: "partial", Error: "exit 3", Approval: "rule", DurationMs: 1500}},
		{"denied result", tool.Result{Status: tool.StatusError, Error: "denied by policy", Denied: true, Approval: "policy"}, nil,
			state.ToolCallResult{Error: "denied by policy", Denied: true, Approval: "policy", DurationMs: 1500}},
		{"denied without an error status", tool.Result{Status: tool.StatusOK, Denied: true}, nil,
			state.ToolCallResult{Denied: true, Error: "the tool failed without saying why", DurationMs: 1500}},
		{"invoker error", tool.Result{Status: tool.StatusOK, Output: "x"}, errors.New("registry broke"),
			state.ToolCallResult{Output: "x", Error: "registry broke", DurationMs: 1500}},
		{"denied error", tool.Result{}, fault.New(fault.Denied, "approval required"),
			state.ToolCallResult{Error: "approval required", Denied: true, DurationMs: 1500}},
		{"error without a message", tool.Result{Status: tool.StatusError}, nil,
			state.ToolCallResult{Error: "the tool failed without saying why", DurationMs: 1500}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.res.Record(tc.err, 1500*time.Millisecond)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Record() (-want +got):\n%s", diff)
			}
		})
	}
}
