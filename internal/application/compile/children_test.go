package compile_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/application/compile"
	"github.com/awf-dev/awf/internal/infrastructure/loader"
	"github.com/awf-dev/awf/internal/infrastructure/templater"
)

// writeFiles writes files into a new directory and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const childOK = `name: child
inputs:
  - {name: who, required: true}
  - {name: greeting, default: hi}
steps:
  - {name: hello, type: shell, command: 'echo {{inputs.greeting}} {{inputs.who}}'}
output: "{{states.hello.output}}"
`

func TestFileCompilesCalledWorkflows(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string
		wantErrs []string // substrings of the error, each on its own line
	}{
		{"ok", map[string]string{
			"parent.yaml":    "name: p\nsteps:\n  - {name: c, type: workflow, workflow: sub/child.yaml, inputs: {who: me}}\n",
			"sub/child.yaml": childOK,
		}, nil},
		{"errors inside the child, with its positions and the caller", map[string]string{
			"parent.yaml": "name: p\nsteps:\n  - {name: c, type: workflow, workflow: child.yaml, inputs: {who: me}}\n",
			"child.yaml":  "name: child\ninputs: [{name: who}]\nsteps:\n  - {name: a, type: shell, comand: x}\n  - {name: b, type: shell, command: 'echo {{states.zz.output}}'}\n",
		}, []string{
			`child.yaml:4:28: unknown key "comand" in step "a" (did you mean "command"?; called by step "c" at parent.yaml:3:41)`,
			`child.yaml:5:`, `"zz"`,
		}},
		{"inputs: unknown name and missing required", map[string]string{
			"parent.yaml": "name: p\nsteps:\n  - name: c\n    type: workflow\n    workflow: child.yaml\n    inputs: {whom: me}\n",
			"child.yaml":  childOK,
		}, []string{
			`parent.yaml:6:13: step "c" passes input "whom", which workflow child does not declare (did you mean "who"?)`,
			`parent.yaml:6:13: step "c" does not pass input "who", which workflow child requires`,
		}},
		{"missing file", map[string]string{
			"parent.yaml": "name: p\nsteps:\n  - name: c\n    type: workflow\n    workflow: nope.yaml\n",
		}, []string{`parent.yaml:5:15: step "c": `, `nope.yaml`}},
		{"inside a parallel step", map[string]string{
			"parent.yaml": "name: p\nsteps:\n  - name: both\n    type: parallel\n    steps:\n      - {name: c, type: workflow, workflow: child.yaml}\n      - {name: d, type: shell, command: echo}\n",
			"child.yaml":  childOK,
		}, []string{`step "c" does not pass input "who"`}},
		{"a workflow calling itself, even guarded", map[string]string{
			"parent.yaml": "name: p\ninputs: [{name: n, default: 0}]\nsteps:\n  - {name: again, type: workflow, workflow: parent.yaml, when: 'inputs.n < 1', inputs: {n: '1'}}\n",
		}, []string{`parent.yaml:4:45: step "again" calls its own workflow: parent.yaml -> parent.yaml`}},
		{"a workflow calling itself is compiled once", map[string]string{
			"parent.yaml": "name: p\nsteps:\n  - {name: again, type: workflow, workflow: parent.yaml}\n  - {name: a, type: shell, comand: x}\n",
		}, []string{`unknown key "comand"`, `step "again" calls its own workflow`}},
		{"a cycle through other workflows", map[string]string{
			"parent.yaml": "name: p\nsteps:\n  - {name: call_a, type: workflow, workflow: a.yaml}\n",
			"a.yaml":      "name: a\nsteps:\n  - {name: call_b, type: workflow, workflow: b.yaml}\n",
			"b.yaml":      "name: b\nsteps:\n  - {name: call_a, type: workflow, workflow: a.yaml}\n",
		}, []string{`b.yaml:3:46: step "call_a" closes a cycle of workflows: a.yaml -> b.yaml -> a.yaml`}},
		{"a child called twice is reported once", map[string]string{
			"parent.yaml": "name: p\nsteps:\n  - {name: c1, type: workflow, workflow: child.yaml}\n  - {name: c2, type: workflow, workflow: child.yaml}\n",
			"child.yaml":  "name: child\nsteps:\n  - {name: a, type: shell, comand: x}\n",
		}, []string{`unknown key "comand"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := writeFiles(t, tc.files)
			t.Chdir(dir)
			_, err := compile.File(loader.New(), templater.New(), "parent.yaml")
			if len(tc.wantErrs) == 0 {
				if err != nil {
					t.Fatalf("File: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("File: no error, want %q", tc.wantErrs)
			}
			msg := err.Error()
			for _, w := range tc.wantErrs {
				if !strings.Contains(msg, w) {
					t.Errorf("error lacks %q:\n%s", w, msg)
				}
			}
			if strings.Contains(tc.name, "once") && strings.Count(msg, "comand") != 1 {
				t.Errorf("the child's error is reported %d times:\n%s", strings.Count(msg, "comand"), msg)
			}
		})
	}
}

func TestFileTellsWhetherTheRunCallsTools(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  bool
	}{
		{"shell steps only", map[string]string{"parent.yaml": "name: p\nsteps:\n  - {name: a, type: shell, command: echo}\n"}, false},
		{"a tool step in a parallel step", map[string]string{
			"parent.yaml": "name: p\nsteps:\n  - name: both\n    type: parallel\n    steps:\n      - {name: a, type: shell, command: echo}\n      - {name: t, type: tool, tool: read_file, args: {path: x}}\n"}, true},
		{"an agent step in a called workflow", map[string]string{
			"parent.yaml": "name: p\nsteps:\n  - {name: c, type: workflow, workflow: child.yaml}\n",
			"child.yaml":  "name: child\nsteps:\n  - {name: ask, type: agent, prompt: hi}\n"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Chdir(writeFiles(t, tc.files))
			res, err := compile.File(loader.New(), templater.New(), "parent.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if res.CallsTools != tc.want {
				t.Errorf("CallsTools = %v, want %v", res.CallsTools, tc.want)
			}
		})
	}
}
