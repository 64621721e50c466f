package compile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/application/compile"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/infrastructure/loader"
	"github.com/awf-dev/awf/internal/infrastructure/templater"
)

func write(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "wf.yaml")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFile(t *testing.T) {
	tests := []struct {
		name     string
		yaml     string
		wantErrs []string // substrings, in order
		warnings int
	}{
		{"ok", "name: ok\nsteps:\n  - {name: a, type: shell, command: echo}\n", nil, 0},
		{"implicit input warns", "name: w\nsteps:\n  - {name: a, type: shell, command: 'echo {{inputs.x}}'}\n", nil, 1},
		{"template error", "name: t\nsteps:\n  - {name: a, type: shell, command: 'echo {{states.b.output}}'}\n  - {name: b, type: shell, command: echo}\n",
			[]string{`wf.yaml:3:`, `"b"`}, 0},
		{"load and template errors together",
			"name: t\nsteps:\n  - {name: a, type: shell, comand: x}\n  - {name: b, type: shell, command: 'echo {{states.c.output}}'}\n  - {name: c, type: shell, command: echo}\n",
			[]string{`wf.yaml:3:`, `"comand"`, `wf.yaml:4:`, `"c"`}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := compile.File(loader.New(), templater.New(), write(t, tc.yaml))
			if len(tc.wantErrs) == 0 {
				if err != nil || res.Workflow == nil {
					t.Fatalf("File: %v", err)
				}
			} else {
				if err == nil || fault.KindOf(err) != fault.Invalid || res.Workflow != nil {
					t.Fatalf("File: err = %v (kind %v), workflow %v", err, fault.KindOf(err), res.Workflow)
				}
				msg := err.Error()
				at := 0
				for _, w := range tc.wantErrs {
					i := strings.Index(msg[at:], w)
					if i < 0 {
						t.Fatalf("error lacks %q after offset %d:\n%s", w, at, msg)
					}
					at += i
				}
			}
			if len(res.Warnings) != tc.warnings {
				t.Errorf("warnings = %v, want %d", res.Warnings, tc.warnings)
			}
		})
	}
}

func TestMissingFileIsUsage(t *testing.T) {
	_, err := compile.File(loader.New(), templater.New(), filepath.Join(t.TempDir(), "nope.yaml"))
	if fault.KindOf(err) != fault.Usage {
		t.Errorf("missing file: kind %v, want usage (%v)", fault.KindOf(err), err)
	}
}

// TestImplicitInputsAndBlockPositions: inputs used but not declared become required strings,
// reported where they are used, inside literal blocks on their own line; a lenient use
// (inputs.x ?? default) requires nothing; a template error in a block names its line.
func TestImplicitInputsAndBlockPositions(t *testing.T) {
	res, err := compile.File(loader.New(), templater.New(), filepath.Join("..", "..", "..", "testdata", "load", "implicit.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range res.Workflow.Inputs {
		if in.Implicit && in.Required {
			got = append(got, fmt.Sprintf("%s@%d:%d", in.Name, in.Pos.Line, in.Pos.Col))
		}
	}
	if want := []string{"enabled@7:11", "featur@6:40", "project_path@11:14"}; !slices.Equal(got, want) {
		t.Errorf("implicit inputs = %v, want %v", got, want)
	}

	res, err = compile.File(loader.New(), templater.New(), write(t, "name: l\nsteps:\n  - {name: a, type: shell, command: 'echo {{ inputs.x ?? \"d\" }}'}\n"))
	if err != nil || len(res.Workflow.Inputs) != 0 || len(res.Warnings) != 0 {
		t.Errorf("lenient use: inputs %v, warnings %v, %v; want none", res.Workflow.Inputs, res.Warnings, err)
	}

	_, err = compile.File(loader.New(), templater.New(), write(t, "name: b\nsteps:\n  - name: a\n    type: shell\n    command: |\n      echo one\n        echo \"{{ states.nope.output }}\"\n"))
	if err == nil || !strings.Contains(err.Error(), `wf.yaml:7:18: step "nope" is not earlier`) {
		t.Errorf("error in a block = %v, want it at 7:18", err)
	}
}
