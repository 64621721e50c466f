package shell_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/infrastructure/process"
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

func newShell(t *testing.T) (*shell.Tool, string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "sub", "a.txt"), []byte("A"), 0o644); err != nil {
		t.Fatal(err)
	}
	sh, err := shell.New(command.Config{Process: process.New(process.Config{}), Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return sh, dir
}

func TestExecute(t *testing.T) {
	sh, dir := newShell(t)
	tests := []struct {
		name  string
		args  map[string]any
		input string
		ok    bool
		out   string
		err   string
	}{
		{"stdout", map[string]any{"command": "echo hello | tr a-z A-Z"}, "", true, "HELLO\n", ""},
		{"stdin", map[string]any{"command": "wc -c"}, "four", true, "4\n", ""},
		{"relative dir", map[string]any{"command": "cat a.txt", "dir": "sub"}, "", true, "A", ""},
		{"absolute dir", map[string]any{"command": "ls", "dir": filepath.Join(dir, "sub")}, "", true, "a.txt\n", ""},
		{"non-zero exit", map[string]any{"command": "echo partial; echo oops >&2; exit 7"}, "", false, "partial\n",
			"shell: exit status 7\nstderr:\noops"},
		{"missing command", map[string]any{}, "", false, "", `shell: the "command" argument is required: the command line to run`},
		{"parse error", map[string]any{"command": "echo 'unterminated"}, "", false, "", "shell: exit status 2\nstderr:\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			res := sh.Execute(t.Context(), tool.Invocation{Args: tc.args, Input: tc.input})
			if res.Succeeded() != tc.ok || res.Output != tc.out || !strings.HasPrefix(res.Error, tc.err) {
				t.Errorf("Execute(%v) = ok %v, %q, %q; want %v, %q, %q", tc.args, res.Succeeded(), res.Output, res.Error, tc.ok, tc.out, tc.err)
			}
		})
	}
}

func TestDescribe(t *testing.T) {
	sh, dir := newShell(t)
	if sh.Name() != "shell" || shell.Aliases()[0].Name != "run_command" || shell.Aliases()[0].Target != "shell" {
		t.Errorf("names: %s, %+v", sh.Name(), shell.Aliases())
	}
	if d := sh.Description(tool.Context{}); !strings.Contains(d, dir) {
		t.Errorf("Description does not name the working directory: %s", d)
	}
	long := "go test ./internal/application/registry/... -run TestSomethingRatherLong -count=1 -v"
	tests := map[string]string{
		"ls  -la\n src": "run: ls -la src",
		long:            "run: " + long[:60] + "...",
	}
	for cmd, want := range tests {
		if got := sh.Meta(map[string]any{"command": cmd}); got != want {
			t.Errorf("Meta(%q) = %q, want %q", cmd, got, want)
		}
	}
}

// TestWrap builds the seed's ls.tool through the shell tool and runs it.
func TestWrap(t *testing.T) {
	sh, _ := newShell(t)
	w, err := sh.Wrap(tool.WrapSpec{Name: "ls", Title: "List", Description: "ls", Wraps: "run_command", Command: "ls {arguments}",
		Params: []tool.Param{{Name: "arguments", Type: "array<string>", Required: true}}})
	if err != nil {
		t.Fatal(err)
	}
	res := w.Execute(t.Context(), tool.Invocation{Args: map[string]any{"arguments": []any{"sub"}}})
	if res.Output != "a.txt\n" {
		t.Errorf("ls sub = %+v", res)
	}
	if _, err := sh.Wrap(tool.WrapSpec{Name: "bad", Command: "ls | wc"}); err == nil {
		t.Error("Wrap accepted a pipeline")
	}
	if _, err := shell.New(command.Config{}); err == nil {
		t.Error("New without a process runner succeeded")
	}
}
