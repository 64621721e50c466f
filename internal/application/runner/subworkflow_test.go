package runner_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/loader"
)

// echo prints the values bound into the command, in sorted order.
func echo(_ context.Context, req ports.ProcessRequest) (ports.ProcessResult, error) {
	return ok(strings.Join(varValues(req), " ") + "\n")
}

// writeFiles writes name -> content under a new temporary directory and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		mustWrite(t, filepath.Join(dir, name), content)
	}
	return dir
}

// loadRun loads path with the real loader and runs it.
func loadRun(t *testing.T, e *env, path string, inputs map[string]any) (*state.RunState, error) {
	t.Helper()
	w, err := loader.New().Load(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return e.runner().Run(t.Context(), runner.Request{Workflow: w, Inputs: inputs, WorkDir: filepath.Dir(path)})
}

const childYAML = `name: child
inputs:
  - name: name
    required: true
steps:
  - name: greet
    type: shell
    command: "greet {{ inputs.name }}"
output: "hello {{ states.greet.output }}"
`

func TestSubWorkflow(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"parent.yaml": `name: parent
steps:
  - name: call
    type: workflow
    workflow: sub/child.yaml
    inputs:
      name: "{{ inputs.who }}"
  - name: after
    type: shell
    command: "after {{ states.call.output }}"
output: "{{ states.call.output }}"
`,
	})
	mustMkdir(t, filepath.Join(dir, "sub"))
	mustWrite(t, filepath.Join(dir, "sub", "child.yaml"), childYAML)
	e := newEnv(t)
	e.deps.Loader = loader.New()
	e.respond(echo)
	run, err := loadRun(t, e, filepath.Join(dir, "parent.yaml"), map[string]any{"who": "ada"})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if run.Status != state.Completed || run.Output != "hello ada" {
		t.Errorf("parent = %s with output %q, want completed with hello ada", run.Status, run.Output)
	}
	call := run.States["call"]
	if call.Output != "hello ada" || call.Vars["sub_run"] != "id-2" {
		t.Errorf("call = output %q vars %v, want the child's output and sub_run id-2", call.Output, call.Vars)
	}
	child := e.saved("id-2")
	if child == nil {
		t.Fatalf("child run id-2 was not saved")
	}
	if child.Parent != "id-1" || child.Workflow != "child" || child.Status != state.Completed ||
		child.WorkflowFile != filepath.Join(dir, "sub", "child.yaml") || child.WorkDir != dir || child.Inputs["name"] != "ada" {
		t.Errorf("child run = %+v, want a completed child of id-1 with its inputs", child)
	}
	reqs := e.proc.Requests()
	if got := varValues(reqs[len(reqs)-1]); len(got) != 1 || got[0] != "hello ada" {
		t.Errorf("after saw %q, want the child's output", got)
	}
}

func TestSubWorkflowErrors(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		wantErr  []string
		wantKind fault.Kind
	}{{
		name: "missing input",
		files: map[string]string{
			"parent.yaml": "name: parent\nsteps:\n  - name: call\n    workflow: child.yaml\n",
			"child.yaml":  childYAML,
		},
		wantErr:  []string{`step "call": `, "missing required input", "name"},
		wantKind: fault.Invalid,
	}, {
		name: "failing child",
		files: map[string]string{
			"parent.yaml": "name: parent\nsteps:\n  - name: call\n    workflow: child.yaml\n    inputs: {name: fail}\n",
			"child.yaml":  childYAML,
		},
		wantErr:  []string{`step "call": workflow child: step "greet": exit status 1: no greeting`},
		wantKind: fault.Execution,
	}, {
		name: "missing file",
		files: map[string]string{
			"parent.yaml": "name: parent\nsteps:\n  - name: call\n    workflow: nope.yaml\n",
		},
		wantErr:  []string{`step "call": workflow nope.yaml: `, "nope.yaml"},
		wantKind: fault.Usage,
	}, {
		name: "recursion",
		files: map[string]string{
			"a.yaml":      "name: a\nsteps:\n  - name: call_b\n    workflow: b.yaml\n",
			"b.yaml":      "name: b\nsteps:\n  - name: call_a\n    workflow: a.yaml\n",
			"parent.yaml": "name: parent\nsteps:\n  - name: call\n    workflow: a.yaml\n",
		},
		wantErr:  []string{"workflows nest deeper than 16: parent" + strings.Repeat(" -> a -> b", 8) + " -> a\n"},
		wantKind: fault.Invalid,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, tc.files)
			e := newEnv(t)
			e.deps.Loader = loader.New()
			e.respond(func(ctx context.Context, req ports.ProcessRequest) (ports.ProcessResult, error) {
				if v := varValues(req); len(v) == 1 && v[0] == "fail" {
					return exit(1, "no greeting")
				}
				return echo(ctx, req)
			})
			run, err := loadRun(t, e, filepath.Join(dir, "parent.yaml"), nil)
			if err == nil {
				t.Fatalf("Run succeeded, want an error")
			}
			for _, part := range tc.wantErr {
				if !strings.Contains(err.Error()+"\n", part) {
					t.Errorf("Run error = %v, want it to contain %q", err, part)
				}
			}
			if k := fault.KindOf(err); k != tc.wantKind {
				t.Errorf("KindOf(%v) = %v, want %v", err, k, tc.wantKind)
			}
			if run.Status != state.Failed || run.States["call"].Status != state.Failed {
				t.Errorf("run %s, call %s; want both failed", run.Status, run.States["call"].Status)
			}
		})
	}
}

func TestSubWorkflowRunsInParallel(t *testing.T) {
	dir := writeFiles(t, map[string]string{"child.yaml": childYAML})
	e := newEnv(t)
	e.deps.Loader = loader.New()
	e.respond(echo)
	call := func(name, who string) workflow.Step {
		return workflow.Step{Name: name, Type: workflow.StepWorkflow,
			Workflow: &workflow.WorkflowStep{Path: "child.yaml", Inputs: map[string]string{"name": who}}}
	}
	w := wf(par("p", true, 0, call("one", "ada"), call("two", "bob")))
	w.Dir = dir
	run, err := e.runner().Run(t.Context(), runner.Request{Workflow: w})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := run.States["p"].Output; got != `{"one":"hello ada","two":"hello bob"}` {
		t.Errorf("p output = %s", got)
	}
	if n := e.runCount(); n != 3 {
		t.Errorf("%d runs saved, want the parent and two children", n)
	}
}
