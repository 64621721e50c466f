package compile_test

import (
	"os"
	"path/filepath"
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
