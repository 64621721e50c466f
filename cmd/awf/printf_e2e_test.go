package main

import (
	"strings"
	"testing"
)

// TestPrintfStreamsInStepsAndSandboxedTools: printf '%s' of a bound value is streamed (no
// copies of the value) both in a shell step and in a tool run by the sandboxed helper, where
// the command allowlist must not mistake it for a program.
func TestPrintfStreamsInStepsAndSandboxedTools(t *testing.T) {
	e := newEnv(t)
	e.write("pf.yaml", `name: pf
sandbox:
  commands: [wc]
steps:
  - name: make
    type: shell
    command: head -c 300000 /dev/zero | tr '\0' 'x'
  - name: step
    type: shell
    command: printf '%s' "{{states.make.output}}" | wc -c
  - name: tool
    type: tool
    tool: shell
    args:
      command: printf '%s|' a b c | wc -c
output: "{{trim(states.step.output)}} {{trim(states.tool.output)}}"
`)
	r := e.mustRun(0, "run", "pf.yaml", "--yes", "--quiet", "--output", "json")
	if !strings.Contains(r.stdout, `"output": "300000 6"`) {
		t.Errorf("output: %s", r.stdout)
	}
}
