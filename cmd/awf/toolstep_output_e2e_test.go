package main

import (
	"strings"
	"testing"
)

// A tool step's output loses its one trailing newline as a shell step's does, so templates
// read the same either way, and a command tool's exit status is recorded like a shell step's.
func TestToolStepOutputLikeShellStep(t *testing.T) {
	e := newEnv(t)
	e.write("count.yaml", `name: count
tools:
  - name: count_lines
    command: wc -l
  - name: fail_with
    command: "echo partial; exit {{args.code}}"
    parameters:
      - {name: code, type: integer, required: true}
steps:
  - name: count
    type: tool
    tool: count_lines
    input: "a\nb\nc\n"
  - name: shell
    type: shell
    command: printf '3\n'
  - name: fail
    type: tool
    tool: fail_with
    args: {code: 2}
    continue_on_error: true
output: "found {{ trim(states.count.output) == states.count.output ? 'exact' : 'padded' }} {{states.count.output}} lines, shell {{states.shell.output}} lines"
`)
	res := e.runJSON(0, "run", "count.yaml", "--yes")
	if want := "found exact 3 lines, shell 3 lines"; res.Output != want {
		t.Errorf("output = %q, want %q", res.Output, want)
	}
	st := e.state(res.RunID)
	count, fail := st.States["count"], st.States["fail"]
	if count == nil || count.ExitCode == nil || *count.ExitCode != 0 {
		t.Errorf("count_lines step: exit code %v, want 0 recorded", count)
	}
	if fail == nil || fail.ExitCode == nil || *fail.ExitCode != 2 || !strings.Contains(fail.Output, "partial") {
		t.Errorf("fail_with step: %+v, want exit code 2 and its partial output", fail)
	}
}
