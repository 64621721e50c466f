package runner_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

func TestNewNamesMissingDependencies(t *testing.T) {
	_, err := runner.New(runner.Deps{})
	want := "runner: missing dependencies: Store, Templater, Process, Loader, Clock, NewID"
	if err == nil || err.Error() != want {
		t.Fatalf("New(Deps{}) = %v, want %q", err, want)
	}
}

// varValues is the set of values a bound command received.
func varValues(req ports.ProcessRequest) []string {
	return slices.Sorted(maps.Values(req.Vars))
}

func TestShellStep(t *testing.T) {
	exitCode := func(n int) *int { return &n }
	tests := []struct {
		name    string
		result  ports.ProcessResult
		err     error
		want    state.StepState
		wantErr string
	}{{
		name:   "output drops one trailing newline",
		result: ports.ProcessResult{Stdout: "hello\n"},
		want:   state.StepState{Status: state.Completed, Output: "hello", ExitCode: exitCode(0)},
	}, {
		name:   "inner and extra newlines stay",
		result: ports.ProcessResult{Stdout: "a\nb\n\n"},
		want:   state.StepState{Status: state.Completed, Output: "a\nb\n", ExitCode: exitCode(0)},
	}, {
		name:   "crlf ending dropped",
		result: ports.ProcessResult{Stdout: "win\r\n"},
		want:   state.StepState{Status: state.Completed, Output: "win", ExitCode: exitCode(0)},
	}, {
		name:   "non-zero exit fails with the last stderr line",
		result: ports.ProcessResult{Stdout: "partial\n", Stderr: "warning: x\nboom\n\n", ExitCode: 3},
		want: state.StepState{Status: state.Failed, Output: "partial", ExitCode: exitCode(3),
			Stderr: "warning: x\nboom\n\n", Error: "exit status 3: boom"},
		wantErr: `step "a": exit status 3: boom`,
	}, {
		name:    "non-zero exit without stderr",
		result:  ports.ProcessResult{ExitCode: 1},
		want:    state.StepState{Status: state.Failed, ExitCode: exitCode(1), Error: "exit status 1"},
		wantErr: `step "a": exit status 1`,
	}, {
		name:    "stderr tail is capped",
		result:  ports.ProcessResult{ExitCode: 1, Stderr: strings.Repeat("x", 5000) + "\nlast\n"},
		want:    state.StepState{Status: state.Failed, ExitCode: exitCode(1), Stderr: "...\nlast\n", Error: "exit status 1: last"},
		wantErr: `step "a": exit status 1: last`,
	}, {
		name:    "process error",
		err:     fault.New(fault.Execution, "start: no shell"),
		want:    state.StepState{Status: state.Failed, Error: "start: no shell"},
		wantErr: `step "a": start: no shell`,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.respond(func(context.Context, ports.ProcessRequest) (ports.ProcessResult, error) { return tc.result, tc.err })
			run, err := e.runner().Run(t.Context(), runner.Request{Workflow: wf(shell("a", "build"), shell("b", "after"))})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Run = %v, want success", err)
				}
			} else {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Run error = %v, want %q", err, tc.wantErr)
				}
				if k := fault.KindOf(err); k != fault.Execution {
					t.Errorf("KindOf(%v) = %v, want execution", err, k)
				}
				if run.Status != state.Failed || run.Error != tc.wantErr {
					t.Errorf("run status, error = %s, %q; want failed, %q", run.Status, run.Error, tc.wantErr)
				}
				if _, ran := run.States["b"]; ran {
					t.Errorf("step b ran after a failed")
				}
			}
			got := *run.States["a"]
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(state.StepState{}, "StartedAt", "FinishedAt", "DurationMs", "Attempts", "Command")); diff != "" {
				t.Errorf("state of a (-want +got):\n%s", diff)
			}
			if want := [][]string{{"build"}}; tc.err == nil && !cmp.Equal(got.Command, want) {
				t.Errorf("command of a = %q, want %q (what ran, recorded)", got.Command, want)
			}
			if got.StartedAt == nil || got.FinishedAt == nil || got.DurationMs <= 0 || got.Attempts != 1 {
				t.Errorf("times, attempts = %v, %v, %dms, %d; want set, 1 attempt", got.StartedAt, got.FinishedAt, got.DurationMs, got.Attempts)
			}
		})
	}
}

func TestShellRequest(t *testing.T) {
	tests := []struct {
		name    string
		dir     string
		workDir string
		wantDir string
	}{
		{name: "relative dir joins the work dir", dir: "sub/{{ inputs.name }}", workDir: "/work", wantDir: "/work/sub/ada"},
		{name: "absolute dir is kept", dir: "/abs", workDir: "/work", wantDir: "/abs"},
		{name: "no dir is the work dir", dir: "", workDir: "/work", wantDir: "/work"},
		{name: "no work dir leaves paths relative", dir: "sub", workDir: "", wantDir: "sub"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			step := shell("a", "greet {{ inputs.name }}")
			step.Shell.Dir = tc.dir
			step.Shell.Env = map[string]string{"GREETING": "hi {{ inputs.name }}", "PLAIN": "x"}
			step.Timeout = 5 * time.Second
			_, err := e.runner().Run(t.Context(), runner.Request{
				Workflow: wf(step), Inputs: map[string]any{"name": "ada"}, WorkDir: tc.workDir,
			})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			reqs := e.proc.Requests()
			if len(reqs) != 1 {
				t.Fatalf("process calls = %d, want 1", len(reqs))
			}
			req := reqs[0]
			if req.Dir != tc.wantDir {
				t.Errorf("Dir = %q, want %q", req.Dir, tc.wantDir)
			}
			if diff := cmp.Diff(map[string]string{"GREETING": "hi ada", "PLAIN": "x"}, req.Env); diff != "" {
				t.Errorf("Env (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(e.deps.Environ, req.BaseEnv); diff != "" {
				t.Errorf("BaseEnv (-want +got):\n%s", diff)
			}
			if req.Timeout != 5*time.Second {
				t.Errorf("Timeout = %v, want 5s", req.Timeout)
			}
			if got := varValues(req); !slices.Equal(got, []string{"ada"}) {
				t.Errorf("bound values = %q, want [ada] (script %q)", got, req.Script)
			}
			if strings.Contains(req.Script, "ada") {
				t.Errorf("script %q holds the value: it must be bound, not spliced", req.Script)
			}
		})
	}
}

func TestScope(t *testing.T) {
	tests := []struct {
		name    string
		command string
		want    []string
	}{
		{name: "inputs", command: "x {{ inputs.n }} {{ inputs.name }}", want: []string{"5", "ada"}},
		{name: "env", command: "x {{ env.AWF_TEST_HOME }}", want: []string{"/home/tester"}},
		{name: "workflow", command: "x {{ workflow.name }} {{ workflow.version }} {{ workflow.description }} {{ workflow.dir }}",
			want: []string{"/wf", "1", "a test", "test"}},
		{name: "run", command: "x {{ run.id }} {{ run.dir }}", want: []string{"/work", "id-1"}},
		{name: "states output, status, exit code", command: "x {{ states.first.output }} {{ states.first.status }} {{ states.first.exit_code }}",
			want: []string{"0", "completed", `{"k":"v","n":[1,2]}`}},
		{name: "states response is parsed JSON", command: "x {{ states.first.response.k }} {{ states.first.response.n[1] }}",
			want: []string{"2", "v"}},
		{name: "output_var names the same state", command: "x {{ states.data.output }}", want: []string{`{"k":"v","n":[1,2]}`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.respond(byScript(map[string]ports.ProcessResult{"first": {Stdout: `{"k":"v","n":[1,2]}` + "\n"}}))
			first := shell("first", "first")
			first.OutputVar = "data"
			_, err := e.runner().Run(t.Context(), runner.Request{
				Workflow: wf(first, shell("second", tc.command)),
				Inputs:   map[string]any{"n": 5, "name": "ada"},
				WorkDir:  "/work",
			})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			reqs := e.proc.Requests()
			if got := varValues(reqs[len(reqs)-1]); !slices.Equal(got, tc.want) {
				t.Errorf("values bound for %q = %q, want %q", tc.command, got, tc.want)
			}
		})
	}
}

func TestMissingReferenceFailsTheStep(t *testing.T) {
	tests := []struct {
		name     string
		step     workflow.Step
		wantPart string
	}{
		{name: "command", step: shell("b", "echo {{ states.nope.output }}"), wantPart: "nope"},
		{name: "later step not yet run", step: shell("b", "echo {{ states.c.output }}"), wantPart: `"c"`},
		{name: "input", step: shell("b", "echo {{ inputs.missing }}"), wantPart: "missing"},
		{name: "env", step: shell("b", "echo {{ env.AWF_NOT_SET }}"), wantPart: "AWF_NOT_SET"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			run, err := e.runner().Run(t.Context(), runner.Request{Workflow: wf(shell("a", "a"), tc.step, shell("c", "c"))})
			if err == nil {
				t.Fatalf("Run succeeded, want the template error")
			}
			b := run.States["b"]
			if b.Status != state.Failed || !strings.HasPrefix(b.Error, "command: ") || !strings.Contains(b.Error, tc.wantPart) {
				t.Errorf("b = %s %q, want failed with the templater's message about %s", b.Status, b.Error, tc.wantPart)
			}
			if e.proc.Calls() != 1 {
				t.Errorf("process calls = %d, want 1 (only a)", e.proc.Calls())
			}
		})
	}
}

func TestWhen(t *testing.T) {
	tests := []struct {
		name      string
		when      string
		want      state.Status
		wantCalls int
		wantErr   string
	}{
		{name: "true runs", when: "inputs.go", want: state.Completed, wantCalls: 2},
		{name: "false skips", when: "!inputs.go", want: state.Skipped, wantCalls: 1},
		{name: "sees earlier states", when: `states.a.status == "completed" && states.a.output == "A"`, want: state.Completed, wantCalls: 2},
		{name: "not a boolean fails", when: "inputs.name", want: state.Failed, wantCalls: 1,
			wantErr: `step "b": when: "inputs.name" is string, want a boolean`},
		{name: "bad reference fails", when: "states.zzz.output == 1", want: state.Failed, wantCalls: 1, wantErr: "zzz"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.respond(byScript(map[string]ports.ProcessResult{"a": {Stdout: "A"}}))
			b := shell("b", "b")
			b.When = tc.when
			run, err := e.runner().Run(t.Context(), runner.Request{
				Workflow: wf(shell("a", "a"), b), Inputs: map[string]any{"go": true, "name": "ada"},
			})
			if tc.wantErr == "" && err != nil {
				t.Fatalf("Run = %v, want success", err)
			}
			if tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Fatalf("Run error = %v, want it to contain %q", err, tc.wantErr)
			}
			if got := run.States["b"].Status; got != tc.want {
				t.Errorf("b status = %s, want %s", got, tc.want)
			}
			if e.proc.Calls() != tc.wantCalls {
				t.Errorf("process calls = %d, want %d", e.proc.Calls(), tc.wantCalls)
			}
		})
	}
}

func TestSkippedStepIsVisible(t *testing.T) {
	e := newEnv(t)
	a := shell("a", "a")
	a.When = "false"
	_, err := e.runner().Run(t.Context(), runner.Request{Workflow: wf(a, shell("b", "x {{ states.a.status }}"))})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	reqs := e.proc.Requests()
	if len(reqs) != 1 || !slices.Equal(varValues(reqs[0]), []string{"skipped"}) {
		t.Fatalf("requests = %+v, want one for b seeing a skipped", reqs)
	}
	var finished []string
	for _, ev := range e.events.Events() {
		if ev.Kind == ports.StepFinished || ev.Kind == ports.StepStarted {
			finished = append(finished, string(ev.Kind)+" "+ev.Step+" "+ev.Status)
		}
	}
	want := []string{"step_finished a skipped", "step_started b ", "step_finished b completed"}
	if diff := cmp.Diff(want, finished); diff != "" {
		t.Errorf("step events (-want +got):\n%s", diff)
	}
}

// TestToolStepEventsCarryTheCallSummary: with a catalog, a tool step's started and finished
// events say what the call does, as an agent's calls do.
func TestToolStepEventsCarryTheCallSummary(t *testing.T) {
	e := newEnv(t)
	e.deps.Tools = &portstest.ToolSet{Tools: map[string]portstest.ToolFunc{
		"read_file": func(context.Context, ports.ToolRequest) (tool.Result, error) { return tool.OK("text"), nil },
	}}
	e.deps.Catalog = portstest.Catalog{"read_file": {Meta: func(args map[string]any) string { return fmt.Sprint("read ", args["path"]) }}}
	step := workflow.Step{Name: "t", Type: workflow.StepTool, Tool: &workflow.ToolStep{Tool: "read_file", Args: map[string]string{"path": "src/a.go"}}}
	if _, err := e.runner().Run(t.Context(), runner.Request{Workflow: wf(step)}); err != nil {
		t.Fatal(err)
	}
	var metas []string
	for _, ev := range e.events.Events() {
		if ev.Kind == ports.ToolStarted || ev.Kind == ports.ToolFinished {
			metas = append(metas, string(ev.Kind)+": "+ev.Meta)
		}
	}
	if want := []string{"tool_started: read src/a.go", "tool_finished: read src/a.go"}; !slices.Equal(metas, want) {
		t.Errorf("tool events = %q, want %q", metas, want)
	}
}

// TestToolStepResultIsSavedWithItsEnd: a tool step's call is saved in flight before it runs;
// its result is saved with the step's end, in one save, and reported (tool_finished) only
// once that save holds it, for a call that succeeds, fails, or fails and is retried.
func TestToolStepResultIsSavedWithItsEnd(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fail    int // calls that fail before one succeeds
		retries int
	}{{"success", 0, 0}, {"failure", 1, 0}, {"retried", 1, 2}} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			calls := 0
			e.deps.Tools = &portstest.ToolSet{Tools: map[string]portstest.ToolFunc{
				"x": func(context.Context, ports.ToolRequest) (tool.Result, error) {
					if calls++; calls <= tc.fail {
						return tool.Errorf("flaky"), nil
					}
					return tool.OK("done"), nil
				},
			}}
			reported := 0
			e.deps.Events = ports.EventsFunc(func(ev ports.Event) {
				if ev.Kind != ports.ToolFinished {
					return
				}
				reported++
				h := e.store.History(ev.RunID)
				saved := h[len(h)-1].States["t"].ToolCalls
				if len(saved) < reported || saved[reported-1].Result == nil || saved[reported-1].InFlight {
					t.Errorf("call %d reported before its result was saved: saved %+v", reported, saved)
				}
			})
			step := workflow.Step{Name: "t", Type: workflow.StepTool, ContinueOnError: true, Tool: &workflow.ToolStep{Tool: "x"}}
			if tc.retries > 0 {
				step.Retry = &workflow.Retry{MaxAttempts: tc.retries}
			}
			run, err := e.runner().Run(t.Context(), runner.Request{Workflow: wf(step)})
			if err != nil {
				t.Fatal(err)
			}
			if want := min(tc.fail, max(tc.retries, 1)-1) + 1; reported != calls || calls != want {
				t.Errorf("%d calls, %d reported; want %d of each", calls, reported, want)
			}
			for i, saved := range e.store.History(run.ID) {
				st, ok := saved.States["t"]
				if !ok {
					continue
				}
				for _, c := range st.ToolCalls {
					if c.Result != nil && st.Status == state.Running && st.Error == "" {
						t.Errorf("save %d holds a result of the running step with nothing else: a save of its own", i)
					}
					if c.InFlight && c.Result != nil {
						t.Errorf("save %d: a call both in flight and ended", i)
					}
				}
			}
			if first := e.store.History(run.ID); !slices.ContainsFunc(first, func(r *state.RunState) bool {
				st, ok := r.States["t"]
				return ok && len(st.ToolCalls) > 0 && st.ToolCalls[0].InFlight
			}) {
				t.Error("the call was never saved in flight before it ran")
			}
		})
	}
}

// TestToolStepRecordsApprovalAndDenial: a tool step's call is recorded as an agent's is
// (tool.Result.Record): who approved it, and a refusal as a denial.
func TestToolStepRecordsApprovalAndDenial(t *testing.T) {
	e := newEnv(t)
	e.deps.Tools = &portstest.ToolSet{Tools: map[string]portstest.ToolFunc{
		"ok": func(context.Context, ports.ToolRequest) (tool.Result, error) {
			r := tool.OK("x")
			r.Approval = "rule"
			return r, nil
		},
		"refuse": func(context.Context, ports.ToolRequest) (tool.Result, error) {
			r := tool.Errorf("denied by policy")
			r.Denied, r.Approval = true, "policy"
			return r, nil
		},
	}}
	steps := []workflow.Step{
		{Name: "a", Type: workflow.StepTool, Tool: &workflow.ToolStep{Tool: "ok"}},
		{Name: "b", Type: workflow.StepTool, ContinueOnError: true, Tool: &workflow.ToolStep{Tool: "refuse"}},
	}
	run, _ := e.runner().Run(t.Context(), runner.Request{Workflow: wf(steps...)})
	if r := run.States["a"].ToolCalls[0].Result; r == nil || !r.Success || r.Approval != "rule" {
		t.Errorf("approved call recorded as %+v, want success approved by rule", r)
	}
	if r := run.States["b"].ToolCalls[0].Result; r == nil || r.Success || !r.Denied || r.Approval != "policy" {
		t.Errorf("refused call recorded as %+v, want a denial by policy", r)
	}
	if ts := run.States["b"].ToolStats; ts == nil || ts.Denied != 1 {
		t.Errorf("tool stats of the refused call = %+v, want 1 denied", ts)
	}
}

func TestToolStep(t *testing.T) {
	upper := func(_ context.Context, req ports.ToolRequest) (tool.Result, error) {
		return tool.Result{Status: tool.StatusOK, Output: strings.ToUpper(req.Input), Data: map[string]any{"n": req.Args["n"]}, Duration: 7 * time.Millisecond}, nil
	}
	refuse := func(context.Context, ports.ToolRequest) (tool.Result, error) {
		return tool.Errorf("bad input"), nil
	}
	step := func(name string) workflow.Step {
		return workflow.Step{Name: "t", Type: workflow.StepTool, Timeout: time.Minute, Tool: &workflow.ToolStep{
			Tool: name, Input: "{{ inputs.name }}", Args: map[string]string{"n": "{{ inputs.n }}"}, Provider: "local",
		}}
	}
	tests := []struct {
		name      string
		tool      string
		want      state.StepState
		wantErr   string
		wantKind  fault.Kind
		wantStats state.ToolStats
	}{{
		name: "success",
		tool: "upper",
		want: state.StepState{Status: state.Completed, Output: "ADA", Response: map[string]any{"n": "5"}, ToolCalls: []state.ToolCallRecord{{
			ID: "id-2", Tool: "upper", Arguments: map[string]any{"n": "5"},
			Result: &state.ToolCallResult{Success: true, Output: "ADA", DurationMs: 7},
		}}},
		wantStats: state.ToolStats{TotalCalls: 1, Successful: 1, TotalDurationMs: 7},
	}, {
		name: "error result fails the step",
		tool: "refuse",
		want: state.StepState{Status: state.Failed, Error: `tool "refuse": bad input`, ToolCalls: []state.ToolCallRecord{{
			ID: "id-2", Tool: "refuse", Arguments: map[string]any{"n": "5"},
			Result: &state.ToolCallResult{Error: "bad input", DurationMs: 1},
		}}},
		wantStats: state.ToolStats{TotalCalls: 1, Failed: 1, TotalDurationMs: 1},
		wantErr:   `step "t": tool "refuse": bad input`,
		wantKind:  fault.Execution,
	}, {
		name: "unknown tool keeps the invoker's kind",
		tool: "uper",
		want: state.StepState{Status: state.Failed, Error: `tool "uper": unknown tool "uper" (did you mean "upper"?)`, ToolCalls: []state.ToolCallRecord{{
			ID: "id-2", Tool: "uper", Arguments: map[string]any{"n": "5"},
			Result: &state.ToolCallResult{Error: `unknown tool "uper" (did you mean "upper"?)`, DurationMs: 1},
		}}},
		wantStats: state.ToolStats{TotalCalls: 1, Failed: 1, TotalDurationMs: 1},
		wantErr:   `step "t": tool "uper": unknown tool "uper" (did you mean "upper"?)`,
		wantKind:  fault.Invalid,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			tools := &portstest.ToolSet{Tools: map[string]portstest.ToolFunc{"upper": upper, "refuse": refuse}}
			e.deps.Tools = tools
			run, err := e.runner().Run(t.Context(), runner.Request{
				Workflow: wf(step(tc.tool)), Inputs: map[string]any{"name": "ada", "n": 5},
			})
			if tc.wantErr == "" && err != nil {
				t.Fatalf("Run = %v, want success", err)
			}
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Run error = %v, want %q", err, tc.wantErr)
				}
				if k := fault.KindOf(err); k != tc.wantKind {
					t.Errorf("KindOf = %v, want %v", k, tc.wantKind)
				}
			}
			wantReq := []ports.ToolRequest{{RunID: "id-1", Step: "t", CallID: "id-2", Name: tc.tool,
				Args: map[string]any{"n": "5"}, Input: "ada", Provider: "local", Timeout: time.Minute}}
			gotReq := tools.Requests()
			if diff := cmp.Diff(wantReq, gotReq, cmpopts.IgnoreFields(ports.ToolRequest{}, "Scope")); diff != "" {
				t.Errorf("tool requests (-want +got):\n%s", diff)
			}
			if len(gotReq) == 1 && gotReq[0].Scope["inputs"] == nil {
				t.Errorf("tool request scope = %v, want the run's scope with inputs", gotReq[0].Scope)
			}
			got := *run.States["t"]
			if diff := cmp.Diff(tc.want, got, cmpopts.IgnoreFields(state.StepState{}, "StartedAt", "FinishedAt", "DurationMs", "Attempts", "ToolStats")); diff != "" {
				t.Errorf("state of t (-want +got):\n%s", diff)
			}
			if got.ToolStats == nil || *got.ToolStats != tc.wantStats {
				t.Errorf("tool stats = %+v, want %+v", got.ToolStats, tc.wantStats)
			}
			if n := inFlightSaves(e, "id-1"); n != 1 {
				t.Errorf("saves with the call in flight = %d, want 1", n)
			}
		})
	}
}

func inFlightSaves(e *env, id string) int {
	n := 0
	for _, snap := range e.snapshots(id) {
		n += snap.InFlight
	}
	return n
}

func TestStepNeedsItsPort(t *testing.T) {
	tests := []struct {
		name string
		step workflow.Step
		want string
	}{
		{name: "tool", step: workflow.Step{Name: "t", Type: workflow.StepTool, Tool: &workflow.ToolStep{Tool: "x"}},
			want: `step "t": tool steps need a tool invoker, and none is configured`},
		{name: "agent", step: workflow.Step{Name: "g", Type: workflow.StepAgent, Agent: &workflow.AgentStep{Prompt: "hi"}},
			want: `step "g": agent steps need an agent executor, and none is configured`},
		{name: "type without settings", step: workflow.Step{Name: "s", Type: workflow.StepShell},
			want: `step "s": step type "shell" has no shell settings`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			tc.step.Retry = &workflow.Retry{MaxAttempts: 3, Initial: time.Second}
			run, err := e.runner().Run(t.Context(), runner.Request{Workflow: wf(tc.step)})
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Run error = %v, want %q", err, tc.want)
			}
			if k := fault.KindOf(err); k != fault.Invalid {
				t.Errorf("KindOf = %v, want invalid", k)
			}
			if got := run.States[tc.step.Name].Attempts; got != 1 {
				t.Errorf("attempts = %d, want 1: a configuration error is not retried", got)
			}
		})
	}
}

// agentFunc adapts a function to runner.AgentExecutor.
type agentFunc func(ctx context.Context, sc runner.StepContext) (runner.StepOutcome, error)

func (f agentFunc) Execute(ctx context.Context, sc runner.StepContext) (runner.StepOutcome, error) {
	return f(ctx, sc)
}

func TestAgentStep(t *testing.T) {
	e := newEnv(t)
	e.respond(byScript(map[string]ports.ProcessResult{"prep": {Stdout: "ready\n"}}))
	var got runner.StepContext
	var savedMidway *state.RunState
	e.deps.Agents = agentFunc(func(ctx context.Context, sc runner.StepContext) (runner.StepOutcome, error) {
		got = sc
		err := sc.Save(ctx, func(s *state.StepState) {
			s.ToolCalls = append(s.ToolCalls, state.ToolCallRecord{ID: "c1", Tool: "read_file",
				Result: &state.ToolCallResult{Success: true, Output: "text", DurationMs: 3}})
			s.ToolStats = &state.ToolStats{}
			s.ToolStats.Add(*s.ToolCalls[0].Result)
		})
		if err != nil {
			return runner.StepOutcome{}, err
		}
		savedMidway = e.saved(sc.RunID)
		sc.Emit(ports.Event{Kind: ports.ToolFinished, Tool: "read_file"})
		return runner.StepOutcome{Output: "done", Tokens: &state.Tokens{Input: 10, Output: 5, Total: 15}}, nil
	})
	agent := workflow.Step{Name: "think", Type: workflow.StepAgent, Agent: &workflow.AgentStep{Prompt: "go"}}
	run, err := e.runner().Run(t.Context(), runner.Request{
		Workflow: wf(shell("prep", "prep"), agent, shell("report", "x {{ states.think.tokens.total }} {{ states.think.tool_stats.successful }} {{ states.think.tool_calls[0].tool }}")),
		Inputs:   map[string]any{"feature": "f"},
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got.RunID != "id-1" || got.Step.Name != "think" || got.Attempt != 1 || got.Previous != nil || got.Workflow.Name != "test" {
		t.Errorf("StepContext = %+v, want run id-1, step think, attempt 1, no previous", got)
	}
	if in := got.Scope["inputs"].(map[string]any)["feature"]; in != "f" {
		t.Errorf("scope inputs.feature = %v, want f", in)
	}
	if prep, ok := got.Lookup("prep"); !ok || prep.Output != "ready" {
		t.Errorf("Lookup(prep) = %+v, %v; want its record", prep, ok)
	}
	if _, ok := got.Lookup("nope"); ok {
		t.Errorf("Lookup(nope) found a record")
	}
	if s := savedMidway.States["think"]; s == nil || len(s.ToolCalls) != 1 || s.Status != state.Running {
		t.Errorf("state saved by Save = %+v, want the call recorded while running", s)
	}
	think := run.States["think"]
	if think.Output != "done" || think.Tokens.Total != 15 || len(think.ToolCalls) != 1 {
		t.Errorf("think = %+v, want output, tokens and the call", think)
	}
	reqs := e.proc.Requests()
	if v := varValues(reqs[len(reqs)-1]); !slices.Equal(v, []string{"1", "15", "read_file"}) {
		t.Errorf("report saw %q, want tokens, stats and calls of think", v)
	}
	var toolEv []ports.Event
	for _, ev := range e.events.Events() {
		if ev.Kind == ports.ToolFinished {
			toolEv = append(toolEv, ev)
		}
	}
	if len(toolEv) != 1 || toolEv[0].Step != "think" || toolEv[0].RunID != "id-1" || toolEv[0].Time.IsZero() {
		t.Errorf("agent events = %+v, want one filled in with step, run id and time", toolEv)
	}
}

func TestRetry(t *testing.T) {
	tests := []struct {
		name       string
		retry      workflow.Retry
		failures   int
		wantSleeps []time.Duration
		wantStatus state.Status
	}{
		{name: "constant", retry: workflow.Retry{MaxAttempts: 4, Backoff: workflow.BackoffConstant, Initial: time.Second},
			failures: 3, wantSleeps: []time.Duration{time.Second, time.Second, time.Second}, wantStatus: state.Completed},
		{name: "linear", retry: workflow.Retry{MaxAttempts: 4, Backoff: workflow.BackoffLinear, Initial: time.Second},
			failures: 3, wantSleeps: []time.Duration{time.Second, 2 * time.Second, 3 * time.Second}, wantStatus: state.Completed},
		{name: "exponential capped", retry: workflow.Retry{MaxAttempts: 5, Backoff: workflow.BackoffExponential, Initial: time.Second, Max: 5 * time.Second},
			failures: 4, wantSleeps: []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second}, wantStatus: state.Completed},
		{name: "exhausted", retry: workflow.Retry{MaxAttempts: 3, Backoff: workflow.BackoffConstant, Initial: 2 * time.Second},
			failures: 10, wantSleeps: []time.Duration{2 * time.Second, 2 * time.Second}, wantStatus: state.Failed},
		{name: "one attempt means no retry", retry: workflow.Retry{MaxAttempts: 1, Initial: time.Second},
			failures: 1, wantStatus: state.Failed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			calls := 0
			e.respond(func(context.Context, ports.ProcessRequest) (ports.ProcessResult, error) {
				calls++
				if calls <= tc.failures {
					return exit(1, "flaky")
				}
				return ok("fine\n")
			})
			step := shell("a", "a")
			step.Retry = &tc.retry
			run, err := e.runner().Run(t.Context(), runner.Request{Workflow: wf(step)})
			if (err == nil) != (tc.wantStatus == state.Completed) {
				t.Fatalf("Run = %v, want status %s", err, tc.wantStatus)
			}
			if diff := cmp.Diff(tc.wantSleeps, e.sleeps()); diff != "" {
				t.Errorf("sleeps (-want +got):\n%s", diff)
			}
			a := run.States["a"]
			wantAttempts := min(tc.failures+1, tc.retry.MaxAttempts)
			if a.Status != tc.wantStatus || a.Attempts != wantAttempts || calls != wantAttempts {
				t.Errorf("a = %s after %d attempts (%d calls), want %s after %d", a.Status, a.Attempts, calls, tc.wantStatus, wantAttempts)
			}
			if tc.wantStatus == state.Completed && a.Error != "" {
				t.Errorf("a.Error = %q after success, want none", a.Error)
			}
			var retrying []int
			for _, ev := range e.events.Events() {
				if ev.Kind == ports.StepRetrying {
					retrying = append(retrying, ev.Attempt)
					if ev.Message != "exit status 1: flaky" {
						t.Errorf("retry event message = %q", ev.Message)
					}
				}
			}
			var want []int
			for n := 2; n <= wantAttempts; n++ {
				want = append(want, n)
			}
			if !slices.Equal(retrying, want) {
				t.Errorf("retry events for attempts %v, want %v", retrying, want)
			}
		})
	}
}

func TestRetryStopsWhenCancelledWhileWaiting(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	e.deps.Sleep = func(ctx context.Context, d time.Duration) error {
		cancel()
		return ctx.Err()
	}
	e.respond(func(context.Context, ports.ProcessRequest) (ports.ProcessResult, error) { return exit(1, "no") })
	step := shell("a", "a")
	step.Retry = &workflow.Retry{MaxAttempts: 5, Initial: time.Hour}
	run, err := e.runner().Run(ctx, runner.Request{Workflow: wf(step)})
	if !errors.Is(err, context.Canceled) || run.Status != state.Interrupted || run.States["a"].Status != state.Interrupted {
		t.Fatalf("Run = %v with run %s, a %s; want interrupted, wrapping context.Canceled", err, run.Status, run.States["a"].Status)
	}
	if e.proc.Calls() != 1 {
		t.Errorf("process calls = %d, want 1", e.proc.Calls())
	}
}

func TestContinueOnError(t *testing.T) {
	e := newEnv(t)
	e.respond(byScript(map[string]ports.ProcessResult{"lint": {ExitCode: 2, Stderr: "style\n"}}))
	lint := shell("lint", "lint")
	lint.ContinueOnError = true
	run, err := e.runner().Run(t.Context(), runner.Request{
		Workflow: wf(lint, shell("report", "x {{ states.lint.status }} {{ states.lint.exit_code }} {{ states.lint.error }}")),
	})
	if err != nil {
		t.Fatalf("Run = %v, want success despite lint", err)
	}
	if run.Status != state.Completed || run.Error != "" {
		t.Errorf("run = %s %q, want completed without error", run.Status, run.Error)
	}
	if l := run.States["lint"]; l.Status != state.Failed || l.Error != "exit status 2: style" {
		t.Errorf("lint = %s %q, want failed and recorded", l.Status, l.Error)
	}
	reqs := e.proc.Requests()
	if v := varValues(reqs[1]); !slices.Equal(v, []string{"2", "exit status 2: style", "failed"}) {
		t.Errorf("report saw %q", v)
	}
}

func TestSavesAtEveryBoundary(t *testing.T) {
	e := newEnv(t)
	e.respond(func(context.Context, ports.ProcessRequest) (ports.ProcessResult, error) { return ok("") })
	skipped := shell("c", "c")
	skipped.When = "false"
	_, err := e.runner().Run(t.Context(), runner.Request{Workflow: wf(shell("a", "a"), shell("b", "b"), skipped)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	type steps = map[string]state.Status
	want := []snapshot{
		{Run: state.Running, Steps: steps{}},
		{Run: state.Running, Steps: steps{"a": state.Running}},
		{Run: state.Running, Steps: steps{"a": state.Completed}},
		{Run: state.Running, Steps: steps{"a": state.Completed, "b": state.Running}},
		{Run: state.Running, Steps: steps{"a": state.Completed, "b": state.Completed}},
		{Run: state.Running, Steps: steps{"a": state.Completed, "b": state.Completed, "c": state.Skipped}},
		{Run: state.Completed, Steps: steps{"a": state.Completed, "b": state.Completed, "c": state.Skipped}},
	}
	if diff := cmp.Diff(want, e.snapshots("id-1")); diff != "" {
		t.Errorf("saves (-want +got):\n%s", diff)
	}
	if got := e.saved("id-1").Order; !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Errorf("Order = %q, want a b c", got)
	}
}

func TestRunRecord(t *testing.T) {
	e := newEnv(t)
	w := wf(shell("a", "a"))
	w.Output = "{{ states.a.output }}!"
	e.respond(func(context.Context, ports.ProcessRequest) (ports.ProcessResult, error) { return ok("hi\n") })
	run, err := e.runner().Run(t.Context(), runner.Request{Workflow: w, Inputs: map[string]any{"x": 1}, WorkDir: "/work", Parent: "p-1"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	want := &state.RunState{ID: "id-1", Workflow: "test", WorkflowFile: "/wf/test.yaml", WorkDir: "/work", Status: state.Completed,
		Inputs: map[string]any{"x": 1}, Output: "hi!", Parent: "p-1", Order: []string{"a"}}
	opts := []cmp.Option{
		cmpopts.IgnoreFields(state.RunState{}, "StartedAt", "UpdatedAt", "FinishedAt", "States"),
	}
	if diff := cmp.Diff(want, run, opts...); diff != "" {
		t.Errorf("run (-want +got):\n%s", diff)
	}
	if run.FinishedAt == nil || !run.FinishedAt.After(run.StartedAt) {
		t.Errorf("times: started %v, finished %v", run.StartedAt, run.FinishedAt)
	}
	if diff := cmp.Diff(run, e.saved("id-1")); diff != "" {
		t.Errorf("saved state differs from returned (-returned +saved):\n%s", diff)
	}
	var kinds []string
	for _, ev := range e.events.Events() {
		if ev.RunID != "id-1" || ev.Time.IsZero() {
			t.Errorf("event %+v lacks run id or time", ev)
		}
		kinds = append(kinds, string(ev.Kind)+" "+ev.Step+" "+ev.Status)
	}
	wantKinds := []string{"run_started  ", "step_started a ", "step_finished a completed", "run_finished  completed"}
	if diff := cmp.Diff(wantKinds, kinds); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestWorkflowOutputError(t *testing.T) {
	e := newEnv(t)
	w := wf(shell("a", "a"))
	w.Output = "{{ states.b.output }}"
	run, err := e.runner().Run(t.Context(), runner.Request{Workflow: w})
	if err == nil || !strings.HasPrefix(err.Error(), "workflow output: ") || fault.KindOf(err) == fault.System {
		t.Fatalf("Run error = %v (kind %v), want a classified workflow output error", err, fault.KindOf(err))
	}
	if run.Status != state.Failed {
		t.Errorf("status = %s, want failed", run.Status)
	}
}

func TestSaveFailureEndsTheRun(t *testing.T) {
	e := newEnv(t)
	e.store.FailSaves(errors.New("disk full"))
	_, err := e.runner().Run(t.Context(), runner.Request{Workflow: wf(shell("a", "a"))})
	if err == nil || !strings.Contains(err.Error(), "disk full") || fault.KindOf(err) != fault.System {
		t.Fatalf("Run = %v, want a system error about the disk", err)
	}
	if e.proc.Calls() != 0 {
		t.Errorf("process calls = %d, want none after the first save failed", e.proc.Calls())
	}
}

func TestPathInputs(t *testing.T) {
	dir := t.TempDir()
	mustWrite(t, dir+"/file.txt", "x")
	tests := []struct {
		name    string
		input   workflow.Input
		value   any
		wantErr string
	}{
		{name: "file exists", input: workflow.Input{Name: "f", FileExists: true}, value: "file.txt"},
		{name: "absolute file", input: workflow.Input{Name: "f", FileExists: true}, value: dir + "/file.txt"},
		{name: "dir exists", input: workflow.Input{Name: "d", DirExists: true}, value: "."},
		{name: "missing file", input: workflow.Input{Name: "f", FileExists: true}, value: "nope.txt",
			wantErr: `input "f": nope.txt does not exist`},
		{name: "dir for a file", input: workflow.Input{Name: "f", FileExists: true}, value: ".",
			wantErr: `input "f": . is a directory, want a file`},
		{name: "file for a dir", input: workflow.Input{Name: "d", DirExists: true}, value: "file.txt",
			wantErr: `input "d": file.txt is not a directory`},
		{name: "not a string", input: workflow.Input{Name: "d", DirExists: true}, value: 3,
			wantErr: `input "d": want a path, got int`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			w := wf(shell("a", "a"))
			w.Inputs = []workflow.Input{tc.input}
			_, err := e.runner().Run(t.Context(), runner.Request{Workflow: w, WorkDir: dir, Inputs: map[string]any{tc.input.Name: tc.value}})
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Run = %v, want success", err)
				}
				return
			}
			if err == nil || err.Error() != tc.wantErr || fault.KindOf(err) != fault.Usage {
				t.Fatalf("Run = %v (kind %v), want usage error %q", err, fault.KindOf(err), tc.wantErr)
			}
			if n := e.runCount(); n != 0 {
				t.Errorf("%d runs saved, want none: the run must not start", n)
			}
		})
	}
}

func TestCancellationInterrupts(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	e.respond(func(ctx context.Context, req ports.ProcessRequest) (ports.ProcessResult, error) {
		if req.Script != "b" {
			return ok("")
		}
		cancel()
		<-ctx.Done()
		return ports.ProcessResult{}, fault.New(fault.Execution, "killed: %w", ctx.Err())
	})
	run, err := e.runner().Run(ctx, runner.Request{Workflow: wf(shell("a", "a"), shell("b", "b"), shell("c", "c"))})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want an error wrapping context.Canceled", err)
	}
	want := map[string]state.Status{"a": state.Completed, "b": state.Interrupted}
	if diff := cmp.Diff(want, statuses(run)); diff != "" {
		t.Errorf("step statuses (-want +got):\n%s", diff)
	}
	saved := e.saved("id-1")
	if saved.Status != state.Interrupted || saved.FinishedAt == nil || saved.Error == "" {
		t.Errorf("saved run = %s finished %v error %q, want interrupted and recorded", saved.Status, saved.FinishedAt, saved.Error)
	}
	if saved.States["b"].Error != "interrupted: context canceled" {
		t.Errorf("b error = %q", saved.States["b"].Error)
	}
	evs := e.events.Events()
	if last := evs[len(evs)-1]; last.Kind != ports.RunFinished || last.Status != string(state.Interrupted) {
		t.Errorf("last event = %+v, want run_finished interrupted", last)
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	run, err := e.runner().Run(ctx, runner.Request{Workflow: wf(shell("a", "a"))})
	if !errors.Is(err, context.Canceled) || run.Status != state.Interrupted || len(run.States) != 0 {
		t.Fatalf("Run = %v, %s, %d states; want interrupted before a", err, run.Status, len(run.States))
	}
}

func TestAgentRetrySeesPreviousAttempt(t *testing.T) {
	e := newEnv(t)
	var attempts []runner.StepContext
	e.deps.Agents = agentFunc(func(ctx context.Context, sc runner.StepContext) (runner.StepOutcome, error) {
		attempts = append(attempts, sc)
		if sc.Attempt == 1 {
			_ = sc.Save(ctx, func(s *state.StepState) {
				s.ToolCalls = append(s.ToolCalls, state.ToolCallRecord{ID: "c1", Tool: "shell", InFlight: true})
			})
			return runner.StepOutcome{}, fault.New(fault.Execution, "model unavailable")
		}
		return runner.StepOutcome{Output: "ok"}, nil
	})
	step := workflow.Step{Name: "think", Type: workflow.StepAgent, Agent: &workflow.AgentStep{Prompt: "go"},
		Retry: &workflow.Retry{MaxAttempts: 2, Initial: time.Second}}
	run, err := e.runner().Run(t.Context(), runner.Request{Workflow: wf(step)})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(attempts) != 2 || attempts[0].Previous != nil || attempts[1].Attempt != 2 {
		t.Fatalf("attempts = %+v, want two, the first without a previous record", attempts)
	}
	if prev := attempts[1].Previous; prev == nil || len(prev.ToolCalls) != 1 || prev.ToolCalls[0].ID != "c1" {
		t.Errorf("second attempt's Previous = %+v, want the call of the first", prev)
	}
	if think := run.States["think"]; think.Output != "ok" || len(think.ToolCalls) != 1 || think.Attempts != 2 {
		t.Errorf("think = %+v, want output ok, the first attempt's call kept, 2 attempts", think)
	}
}

func TestDefaultSleepWaitsAndStops(t *testing.T) {
	tests := []struct {
		name        string
		cancelAfter time.Duration // 0: never
		wantElapsed time.Duration
		wantStatus  state.Status
	}{
		{name: "waits the backoff", wantElapsed: 6 * time.Second, wantStatus: state.Failed},
		{name: "cancelled while waiting", cancelAfter: 4 * time.Second, wantElapsed: 4 * time.Second, wantStatus: state.Interrupted},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				e := newEnv(t)
				e.deps.Sleep = nil
				e.respond(func(context.Context, ports.ProcessRequest) (ports.ProcessResult, error) { return exit(1, "no") })
				ctx := t.Context()
				if tc.cancelAfter > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tc.cancelAfter)
					defer cancel()
				}
				step := shell("a", "a")
				step.Retry = &workflow.Retry{MaxAttempts: 3, Backoff: workflow.BackoffConstant, Initial: 3 * time.Second}
				start := time.Now()
				run, _ := e.runner().Run(ctx, runner.Request{Workflow: wf(step)})
				if elapsed := time.Since(start); elapsed != tc.wantElapsed {
					t.Errorf("fake time elapsed = %v, want %v", elapsed, tc.wantElapsed)
				}
				if run.Status != tc.wantStatus {
					t.Errorf("run status = %s, want %s", run.Status, tc.wantStatus)
				}
			})
		})
	}
}

// storeOnly hides a store's step journal: the runner must then save an agent step's
// changes with Save.
type storeOnly struct{ ports.StateStore }

// TestAgentSavesThroughStepJournal checks that an agent step's saves go through the store's
// step journal when it has one, and through Save otherwise, with the same result; and that a
// failing journal ends the run as a failing Save does.
func TestAgentSavesThroughStepJournal(t *testing.T) {
	const calls = 3
	agent := agentFunc(func(ctx context.Context, sc runner.StepContext) (runner.StepOutcome, error) {
		for i := range calls {
			err := sc.Save(ctx, func(s *state.StepState) {
				s.ToolCalls = append(s.ToolCalls, state.ToolCallRecord{ID: fmt.Sprint("c", i), Tool: "t", InFlight: true})
			})
			if err != nil {
				return runner.StepOutcome{}, err
			}
		}
		return runner.StepOutcome{Output: "done"}, nil
	})
	step := workflow.Step{Name: "think", Type: workflow.StepAgent, Agent: &workflow.AgentStep{Prompt: "go"}}
	for _, journal := range []bool{true, false} {
		t.Run(fmt.Sprint("journal=", journal), func(t *testing.T) {
			e := newEnv(t)
			e.deps.Agents = agent
			if !journal {
				e.deps.Store = storeOnly{e.store}
			}
			run, err := e.runner().Run(t.Context(), runner.Request{Workflow: wf(step)})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			want := 0
			if journal { // the step's start and end too
				want = calls + 2
			}
			if got := e.store.StepAppends(run.ID); got != want {
				t.Errorf("AppendStep calls = %d, want %d", got, want)
			}
			// Run start, step start, each call, step end, run end.
			if got := e.snapshots(run.ID); len(got) != calls+4 || got[calls+1].InFlight != calls {
				t.Errorf("saves = %+v, want %d, the last call's with %d calls in flight", got, calls+4, calls)
			}
		})
	}
	t.Run("failing journal", func(t *testing.T) {
		e := newEnv(t)
		e.deps.Agents = agentFunc(func(ctx context.Context, sc runner.StepContext) (runner.StepOutcome, error) {
			e.store.FailSaves(errors.New("disk full"))
			return runner.StepOutcome{}, sc.Save(ctx, func(*state.StepState) {})
		})
		_, err := e.runner().Run(t.Context(), runner.Request{Workflow: wf(step)})
		if err == nil || !strings.Contains(err.Error(), "disk full") || fault.KindOf(err) != fault.System {
			t.Errorf("Run with a failing journal = %v (kind %v), want a system error saying why", err, fault.KindOf(err))
		}
	})
}
