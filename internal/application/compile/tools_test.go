package compile_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/application/compile"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/infrastructure/loader"
	"github.com/awf-dev/awf/internal/infrastructure/schema"
)

// TestTools checks the tools steps name and a tool step's arguments, each problem at the
// step's field with the nearest name.
func TestTools(t *testing.T) {
	catalog := portstest.Catalog{
		"read_file": {Schema: ports.ToolSchema{Parameters: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"],"additionalProperties":false}`)}},
		"count":     {Schema: ports.ToolSchema{Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"deep":{"type":"boolean"}},"required":["n"],"additionalProperties":false}`)}},
	}
	dir := writeFiles(t, map[string]string{"wf.yaml": `name: t
mcp_servers:
  gh: {command: gh-mcp}
steps:
  - {name: ok, type: tool, tool: read_file, args: {path: x}}
  - {name: unknown, type: tool, tool: reed_file}
  - {name: templated_name, type: tool, tool: "{{ inputs.t }}"}
  - {name: bad_args, type: tool, tool: count, args: {m: "1", deep: "maybe"}}
  - {name: templated_value, type: tool, tool: count, args: {n: "{{ inputs.n }}"}}
  - {name: literal_number, type: tool, tool: count, args: {n: "12"}}
  - name: par
    type: parallel
    steps:
      - {name: agent, type: agent, prompt: hi, tools: [read_file, cuont, gh.issues, "gh.*"]}
`})
	t.Chdir(dir)
	wf, err := loader.New().Load("wf.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range compile.Tools(t.Context(), wf, catalog, schema.New()) {
		got = append(got, p.String())
	}
	want := []string{
		`wf.yaml:6:39: step "unknown": unknown tool "reed_file" (did you mean "read_file"?)`,
		`wf.yaml:8:53: step "bad_args": args.deep: want boolean, got string (tool count)`,
		`wf.yaml:8:53: step "bad_args": args.m: unknown property (did you mean "n"?) (tool count)`,
		`wf.yaml:8:53: step "bad_args": args.n: is required (tool count)`,
		`wf.yaml:14:55: step "agent": unknown tool "cuont" (did you mean "count"?)`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	for _, p := range got {
		if strings.Contains(p, "templated") || strings.Contains(p, "literal_number") || strings.Contains(p, "gh.") {
			t.Errorf("reported what only the run knows: %s", p)
		}
	}
}
