package manifest_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/manifest"
	"github.com/awf-dev/awf/internal/infrastructure/process"
	"github.com/awf-dev/awf/internal/infrastructure/schema"
	"github.com/awf-dev/awf/internal/infrastructure/tools/command"
	"github.com/awf-dev/awf/internal/infrastructure/tools/shell"
)

// TestMain lets the test binary act as the process runner's helper.
func TestMain(m *testing.M) {
	if process.IsHelper(os.Args) {
		os.Exit(process.HelperMain())
	}
	os.Exit(m.Run())
}

// builtins are the real shell tool with its run_command alias, and stand-ins for the file
// built-ins the examples shadow or alias.
func builtins(t *testing.T, dir string) ports.ToolSource {
	t.Helper()
	sh, err := shell.New(command.Config{Process: process.New(process.Config{}), Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	stand := func(name string) tool.Tool {
		return &tool.Func{ToolName: name, Desc: "built-in " + name,
			Params: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"pattern":{"type":"string"}}}`),
			Fn: func(_ context.Context, c tool.Invocation) tool.Result {
				return tool.OK("builtin " + name + " " + c.Args["path"].(string))
			}}
	}
	return ports.StaticTools{At: tool.LevelBuiltin, Set: tool.Set{
		Tools:   []tool.Tool{sh, stand("read_file"), stand("glob"), stand("grep")},
		Aliases: shell.Aliases(),
	}}
}

func newRegistry(t *testing.T, sources ...ports.ToolSource) (*registry.Registry, workflow.Problems) {
	t.Helper()
	r, err := registry.New(registry.Config{Validator: schema.New(), Clock: portstest.NewFakeClock(time.Unix(0, 0)),
		Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	probs, _ := r.Load(sources...)
	return r, probs
}

// sortLines sorts the lines of find's output, whose order is the directory's.
func sortLines(s string) string {
	lines := strings.Split(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// project is a small project the examples run in.
func project(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"main.go":          "package main\n// needle in main\n",
		"src/util.go":      "package src\n",
		"src/notes.txt":    "no match here\nanother needle\n",
		"docs/readme.json": "{}",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestExamples loads examples/tools as a project's tools and runs each example through the
// registry, the real shell tool and the real process runner.
func TestExamples(t *testing.T) {
	dir := project(t)
	r, probs := newRegistry(t, builtins(t, dir), manifest.Dir{Root: "../../../examples/tools", At: tool.LevelProject})
	for _, p := range probs {
		if p.Severity == workflow.SeverityError {
			t.Errorf("examples do not load: %s", p)
		} else if !strings.Contains(p.Msg, "shadows the builtin tool") {
			t.Errorf("unexpected warning: %s", p)
		}
	}
	if n := len(probs); n != 2 {
		t.Errorf("want 2 warnings (glob and grep shadow the built-ins), got %d:\n%v", n, probs)
	}
	tests := []struct {
		name  string
		tool  string
		args  map[string]any
		want  string
		fails bool
	}{
		{"glob.tool", "glob", map[string]any{"arguments": []any{".", "-name", "*.go"}}, "./main.go\n./src/util.go\n", false},
		{"grep.tool", "grep", map[string]any{"arguments": []any{"-rn", "needle", "main.go"}}, "2:// needle in main\n", false},
		{"ls.tool", "ls", map[string]any{"arguments": []any{"-1", "src"}}, "notes.txt\nutil.go\n", false},
		{"Read.tool alias", "Read", map[string]any{"path": "main.go"}, "builtin read_file main.go", false},
		{"run_command alias", "run_command", map[string]any{"command": "ls docs"}, "readme.json\n", false},
		{"meta-tool calling ls and grep", "file-report", map[string]any{"dir": "src", "pattern": "needle"},
			"Files in src:\nnotes.txt\nutil.go\n\nLines with \"needle\":\nsrc/notes.txt:2:another needle\n\n", false},
		{"meta-tool with a hostile pattern", "file-report", map[string]any{"pattern": `"; touch pwned; echo "`},
			`file-report: step 2 (grep) failed: grep: exit status 1`, true},
		{"chain", "survey", map[string]any{"list_args": []any{"-1", "docs"}, "grep_args": []any{"-c", "needle", "src/notes.txt"}},
			"readme.json\n--\n1\n", false},
		{"chain missing an argument", "survey", map[string]any{}, `invalid arguments for tool "survey": $.grep_args: is required`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res, err := r.Invoke(t.Context(), ports.ToolRequest{Name: tc.tool, Args: tc.args})
			if err != nil {
				t.Fatal(err)
			}
			if tc.fails {
				if res.Succeeded() || !strings.HasPrefix(res.Error, tc.want) {
					t.Errorf("Invoke(%s) = %+v, want a failure starting %q", tc.tool, res, tc.want)
				}
				return
			}
			if got := sortLines(res.Output); !res.Succeeded() || got != sortLines(tc.want) {
				t.Errorf("Invoke(%s) = %q (%s), want %q", tc.tool, res.Output, res.Error, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("a hostile pattern ran a command")
	}
}

// TestLayout loads all levels of testdata/tools/layout and checks resolution across them.
func TestLayout(t *testing.T) {
	abs, _ := filepath.Abs(layout)
	env := map[string]string{"XDG_CONFIG_HOME": filepath.Join(abs, "user")}
	r, probs := newRegistry(t, builtins(t, t.TempDir()),
		manifest.Project(filepath.Join(layout, "project")),
		manifest.User(func(k string) string { return env[k] }),
		manifest.Installed{Dir: filepath.Join(layout, "installed")})
	var warnings []string
	for _, p := range probs {
		if p.Severity == workflow.SeverityWarning {
			warnings = append(warnings, p.Msg)
		}
	}
	want := []string{
		`tool "hello" (project) shadows the user tool "hello" defined at ` + filepath.Join(abs, "user/awf/tools/hello/config.yaml") + `:1`,
		`tool "list" is already defined by ` + filepath.Join(layout, "project/.awf/wrapped-tools/a-list.tool") + `; this definition is ignored`,
	}
	if diff := cmp.Diff(want, warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
	calls := []struct {
		ref  string
		args map[string]any
		want string
	}{
		{"hello", nil, "hello\n world"},
		{"hello", map[string]any{"who": "you"}, "hello\n you"},
		{"acme/fmt", nil, "fmt 1.2.0\n"},
		{"acme/fmt@~1.0.0", nil, "fmt 1.0.0\n"},
		{"acme/lint", nil, "fmt 1.2.0\n"},
		{"Bash", map[string]any{"command": "echo bash"}, "bash\n"},
		{"Sh", map[string]any{"command": "echo sh"}, "sh\n"},
	}
	for _, c := range calls {
		got := r.Call(t.Context(), c.ref, c.args, registry.CallOptions{})
		if got.Data != c.want {
			t.Errorf("Call(%s) = %s %#v %q, want %q", c.ref, got.Status, got.Data, got.Message, c.want)
		}
	}
	if missing, err := r.CheckDependencies("acme/lint"); err != nil || len(missing) != 0 {
		t.Errorf("CheckDependencies(acme/lint) = %v, %v", missing, err)
	}
}
