package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSubWorkflowErrorsBeforeRunning: a called workflow's problems and a mismatch of the inputs
// passed to it are found by awf validate and stop awf run before its first step (exit 2), each
// at its own file:line:col.
func TestSubWorkflowErrorsBeforeRunning(t *testing.T) {
	e := newEnv(t)
	e.write("parent.yaml", `name: parent
steps:
  - name: first
    type: shell
    command: touch ran-first
  - name: child
    type: workflow
    workflow: lib/child.yaml
    inputs: {whom: world}
`)
	e.write("lib/child.yaml", `name: child
inputs:
  - {name: who, required: true}
steps:
  - name: hello
    type: shell
    command: echo "hi {{inputs.who}}"
    comand: oops
`)
	want := []string{
		`lib/child.yaml:8:5: unknown key "comand" in step "hello"`,
		`called by step "child" at parent.yaml:8:15`,
		`parent.yaml:9:13: step "child" passes input "whom", which workflow child does not declare (did you mean "who"?)`,
		`parent.yaml:9:13: step "child" does not pass input "who", which workflow child requires`,
	}
	for _, args := range [][]string{{"validate", "parent.yaml"}, {"run", "parent.yaml"}} {
		r := e.mustRun(2, args...)
		for _, w := range want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("awf %s: stderr lacks %q:\n%s", args[0], w, r.stderr)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(e.dir, "ran-first")); err == nil {
		t.Error("awf run ran the first step of a workflow whose sub-workflow is invalid")
	}

	e.write("parent.yaml", strings.Replace(e.read("parent.yaml"), "whom", "who", 1))
	e.write("lib/child.yaml", strings.Replace(e.read("lib/child.yaml"), "    comand: oops\n", "", 1))
	if r := e.mustRun(0, "run", "parent.yaml", "--quiet", "--output", "json"); !strings.Contains(r.stdout, `"status": "completed"`) && !strings.Contains(r.stdout, `"status":"completed"`) {
		t.Errorf("fixed workflow: %s", r.stdout)
	}
}
