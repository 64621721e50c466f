package runner_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// TestPauseAndContinue: a run paused between steps returns ErrPaused, still running, with
// the steps that ended saved; Continue runs the rest from that state as the same segment of
// the same run (no resume counted, no second start announced), the later steps seeing the
// earlier outputs; a run cut into three executions ends as one run without pauses would.
func TestPauseAndContinue(t *testing.T) {
	w := wf(shell("a", "a"), shell("b", "b"), shell("c", "c {{ states.a.output }} {{ states.b.output }}"))
	e := newEnv(t)
	e.respond(func(_ context.Context, req ports.ProcessRequest) (ports.ProcessResult, error) {
		return ok(req.Script + "-out")
	})
	asked := 0
	e.deps.Pause = func() bool { asked++; return true }
	r := e.runner()
	st, err := r.Run(t.Context(), runner.Request{Workflow: w, WorkDir: "/work", ID: "run-1"})
	if !errors.Is(err, runner.ErrPaused) || st.Status != state.Running {
		t.Fatalf("Run = %v, %s; want ErrPaused and the run still running", err, st.Status)
	}
	if diff := cmp.Diff(map[string]state.Status{"a": state.Completed}, statuses(st)); diff != "" {
		t.Fatalf("after the first pause (-want +got):\n%s", diff)
	}
	st, err = r.Continue(t.Context(), st, w, nil)
	if !errors.Is(err, runner.ErrPaused) || len(st.States) != 2 {
		t.Fatalf("first Continue = %v with %d steps; want a pause after b", err, len(st.States))
	}
	st, err = r.Continue(t.Context(), st, w, nil)
	if err != nil || st.Status != state.Completed || st.Resumed != 0 {
		t.Fatalf("second Continue = %v, %s, resumed %d; want completed, never resumed", err, st.Status, st.Resumed)
	}
	reqs := e.proc.Requests()
	if len(reqs) != 3 {
		t.Fatalf("process calls = %d, want 3: no step runs twice", len(reqs))
	}
	if got := varValues(reqs[2]); !cmp.Equal(got, []string{"a-out", "b-out"}) {
		t.Errorf("c saw %q, want the outputs of a and b from the earlier executions", got)
	}
	if asked != 2 {
		t.Errorf("Pause asked %d times, want 2: before b and before c, never before a done or first step", asked)
	}
	started := 0
	for _, ev := range e.events.Events() {
		if ev.Kind == ports.RunStarted {
			started++
		}
	}
	if started != 1 {
		t.Errorf("run_started events = %d, want 1", started)
	}
}
