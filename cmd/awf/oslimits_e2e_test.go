package main

import (
	"runtime"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/state"
)

// limitsWorkflow runs hostile shell tool calls under small sandbox limits.
const limitsWorkflow = `name: limits
approval: {default: auto}
sandbox:
  limits: {timeout: 60s, memory: 256MiB, pids: 64, output: 64KiB}
steps:
  - {name: interp_memory, type: tool, tool: shell, args: {command: "x=a; while true; do x=$x$x; done"}, continue_on_error: true}
  - {name: background_jobs, type: tool, tool: shell, args: {command: "for i in $(seq 200); do sleep 5 & done; wait"}, continue_on_error: true}
  - {name: stderr_flood, type: tool, tool: shell, args: {command: "echo start; yes >&2"}, continue_on_error: true}
  - {name: after, type: tool, tool: shell, args: {command: "echo still-working"}}
`

// TestLimitsReportTheLimit (issue 11, item 5): a memory hog and a flood of background jobs in a
// shell tool are stopped by the limit they reach, and the result names it, not the Go stack
// trace of the helper that ran the interpreter; a stderr-only flood is stopped at the output
// limit, not left to the timeout.
func TestLimitsReportTheLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox of tool processes is Linux-only")
	}
	e := newEnv(t)
	e.write("limits.yaml", limitsWorkflow)
	res := e.runJSON(0, "run", "limits.yaml")
	st := e.state(res.RunID)
	noCrash := func(t *testing.T, s *state.StepState) {
		for _, crash := range []string{"goroutine ", "runtime.", "fatal error", "panic"} {
			if strings.Contains(s.Error, crash) {
				t.Errorf("error holds %q, a crash of the helper, not a limit:\n%.600s", crash, s.Error)
			}
		}
		if strings.Contains(s.Error, "timed out") {
			t.Errorf("error = %.300q: the limit did not stop it, the timeout did", s.Error)
		}
	}
	tests := []struct {
		step string
		want string
		// rootOnly rows need RLIMIT_NPROC, which binds the uid 65534 a root awf drops to, or
		// a cgroup.
		rootOnly bool
	}{
		{"interp_memory", "killed: memory limit 256 MiB reached", false},
		{"background_jobs", "killed: process limit 64 reached", true},
		{"stderr_flood", "output truncated at the limit", false},
	}
	for _, tc := range tests {
		t.Run(tc.step, func(t *testing.T) {
			s := st.States[tc.step]
			if s == nil {
				t.Fatalf("no state for step %s", tc.step)
			}
			if tc.rootOnly && !strings.Contains(s.Error, tc.want) && strings.Contains(s.Error, "exit status") {
				t.Skipf("the process limit does not bind here (not root, no cgroup): %.200q", s.Error)
			}
			if s.Status != state.Failed || !strings.Contains(s.Error, tc.want) {
				t.Errorf("status %s, error %.600q; want failed with %q", s.Status, s.Error, tc.want)
			}
			noCrash(t, s)
		})
	}
	if s := st.States["after"]; s == nil || s.Output != "still-working\n" {
		t.Errorf("the step after the limits did not run normally: %+v", s)
	}
}
