package main

import (
	"strings"
	"testing"
)

// A workflow step's inputs may be lists and mappings: the called workflow gets them as JSON,
// which an array or object input parses and a string input keeps; a string in them that is a
// whole {{ }} gets its value, of any type. A string mixing text and {{ }} is refused at
// validate, at its line, with the fix.
func TestSubWorkflowInputsTakeListsAndMaps(t *testing.T) {
	e := newEnv(t)
	e.write("lib/child.yaml", `name: child
inputs:
  - {name: files, type: array}
  - {name: opts, type: object}
  - {name: raw}
steps:
  - name: show
    type: shell
    command: echo "{{ len(inputs.files) }} {{ inputs.files[1] }} {{ inputs.opts.depth }} {{ inputs.opts.tags[0] }} {{ inputs.raw }}"
output: "{{states.show.output}}"
`)
	e.write("parent.yaml", `name: parent
inputs:
  - {name: extra, default: "c d"}
  - {name: depth, type: integer, default: 3}
steps:
  - name: call
    type: workflow
    workflow: lib/child.yaml
    inputs:
      files: [a.go, "{{ inputs.extra }}", "it's \"quoted\""]
      opts: {depth: "{{ inputs.depth }}", tags: [x, y]}
      raw: [1, true, null, {k: v}]
output: "{{states.call.output}}"
`)
	e.mustRun(0, "validate", "parent.yaml")
	out := e.mustRun(0, "run", "parent.yaml", "--quiet").stdout
	if want := `3 c d 3 x [1,true,null,{"k":"v"}]`; strings.TrimSpace(out) != want {
		t.Errorf("output %q, want %q", out, want)
	}

	e.write("mixed.yaml", `name: mixed
steps:
  - name: call
    type: workflow
    workflow: lib/child.yaml
    inputs:
      files: ["x-{{ workflow.name }}"]
      opts: {}
      raw: r
`)
	r := e.mustRun(2, "validate", "mixed.yaml")
	if !strings.Contains(r.stdout+r.stderr, "mixed.yaml:7:14") || !strings.Contains(r.stdout+r.stderr, "mixes text and {{ }}") ||
		!strings.Contains(r.stdout+r.stderr, "one whole {{ }}") {
		t.Errorf("mixed text and template in a list:\n%s%s", r.stdout, r.stderr)
	}
}
