package loader

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/bom/bomtest"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// root is the repository root, relative to this package.
const root = "../../.."

// TestGolden loads every testdata/load/*.yaml and compares the outcome with the .golden file
// beside it: the error text for a file that does not load, else "ok" and the workflow as
// JSON. UPDATE_GOLDEN=1 rewrites the golden files.
func TestGolden(t *testing.T) {
	t.Chdir(root)
	files, err := filepath.Glob("testdata/load/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".yaml")
		t.Run(name, func(t *testing.T) {
			got := outcome(t, file)
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if os.Getenv("UPDATE_GOLDEN") != "" {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("Load(%q) differs from %s (-want +got):\n%s", file, golden, diff)
			}
		})
	}
}

// outcome renders what loading a file gives, for golden comparison.
func outcome(t *testing.T, file string) string {
	t.Helper()
	wf, err := New().Load(file)
	if err != nil {
		var probs workflow.Problems
		if !errors.As(err, &probs) {
			t.Fatalf("Load(%q) error %T %v, want workflow.Problems", file, err, err)
		}
		if k := fault.KindOf(err); k != fault.Invalid {
			t.Errorf("Load(%q) error kind %v, want invalid", file, k)
		}
		return "error\n" + err.Error() + "\n"
	}
	abs, _ := filepath.Abs(file)
	if wf.Path != abs || wf.Dir != filepath.Dir(abs) {
		t.Errorf("Load(%q) Path, Dir = %q, %q, want %q, %q", file, wf.Path, wf.Dir, abs, filepath.Dir(abs))
	}
	wf.Path, wf.Dir = filepath.ToSlash(file), "$DIR"
	out, err := json.MarshalIndent(wf, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return "ok\n" + string(out) + "\n"
}

func TestLoadMissingFile(t *testing.T) {
	_, err := New().Load(filepath.Join(t.TempDir(), "nope.yaml"))
	if err == nil || fault.KindOf(err) != fault.Usage {
		t.Fatalf("Load(missing) = %v (kind %v), want a usage error", err, fault.KindOf(err))
	}
	if !strings.Contains(err.Error(), "nope.yaml") {
		t.Errorf("Load(missing) error %q does not name the file", err)
	}
}

// TestSeed002 checks the seed's example field by field, beyond the golden dump.
func TestSeed002(t *testing.T) {
	t.Chdir(root)
	wf, err := New().Load("testdata/load/seed002.yaml")
	if err != nil {
		t.Fatalf("Load(seed002) = %v", err)
	}
	if wf.Name != "autonomous-coding" || wf.Version != "1.0" || len(wf.Tools) != 4 || len(wf.Steps) != 1 {
		t.Fatalf("Load(seed002) = name %q version %q, %d tools, %d steps", wf.Name, wf.Version, len(wf.Tools), len(wf.Steps))
	}
	s := wf.Steps[0]
	if s.Type != workflow.StepAgent || s.Agent == nil {
		t.Fatalf("step type %q, agent %v", s.Type, s.Agent)
	}
	if got, want := s.Agent.ToolOptions, (workflow.ToolOptions{MaxCalls: 50, TimeoutPerCall: 30 * time.Second}); !cmp.Equal(got, want) {
		t.Errorf("tool_options = %+v, want %+v", got, want)
	}
	if !strings.HasPrefix(s.Agent.Prompt, "Implement this feature: {{inputs.feature_description}}\n") {
		t.Errorf("prompt = %q, want the template verbatim", s.Agent.Prompt)
	}
	// Inputs used but not declared are the template check's to find (templater.Check,
	// which knows inputs.x ?? "default" does not require x); the loader declares none.
	if len(wf.Inputs) != 0 || len(wf.Warnings) != 0 {
		t.Errorf("inputs %v, warnings %v; want none from the loader", wf.Inputs, wf.Warnings)
	}
	if got := s.Fields["tool_options"]; got.Line != 50 || got.Col != 7 {
		t.Errorf("Fields[tool_options] = %+v, want line 50 col 7", got)
	}
}

// TestProblemPositions checks single problems in small inline files: message, hint, place.
func TestProblemPositions(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       workflow.Problem
	}{
		{
			name: "unknown top key",
			yaml: "name: x\nstep:\n  - {name: a, command: b}\n",
			want: workflow.Problem{Pos: pos(2, 1), Field: "step", Msg: `unknown key "step" in the workflow`, Hint: `did you mean "steps"?`},
		},
		{
			name: "list where a string is expected",
			yaml: "name: x\nsteps:\n  - name: a\n    command: [a, b]\n",
			want: workflow.Problem{Pos: pos(4, 14), Field: "steps[0].command", Msg: `"command" must be a string, got a list`},
		},
		{
			name: "bad duration",
			yaml: "name: x\nsteps:\n  - name: a\n    command: b\n    timeout: 3 days\n",
			want: workflow.Problem{Pos: pos(5, 14), Field: "steps[0].timeout", Msg: `"timeout": expected a duration such as "30s" or "1m30s" or a whole number of seconds, got "3 days"`},
		},
		{
			name: "field of another type",
			yaml: "name: x\nsteps:\n  - name: a\n    type: shell\n    command: b\n    prompt: c\n",
			want: workflow.Problem{Pos: pos(6, 5), Field: "steps[0].prompt", Msg: `"prompt" is not a field of shell steps (it belongs to agent steps)`},
		},
		{
			name: "misspelt step type",
			yaml: "name: x\nsteps:\n  - name: a\n    type: agnet\n    prompt: b\n",
			want: workflow.Problem{Pos: pos(4, 11), Field: "steps[0].type", Msg: `unknown step type "agnet"; expected one of shell, tool, agent, parallel, workflow`, Hint: `did you mean "agent"?`},
		},
		{
			name: "misspelt continue_from",
			yaml: "name: x\nsteps:\n  - name: draft\n    prompt: a\n  - name: b\n    prompt: c\n    continue_from: draf\n",
			want: workflow.Problem{Pos: pos(7, 20), Field: "steps[1].continue_from", Msg: `continue_from: no earlier agent step is named "draf"`, Hint: `did you mean "draft"?`},
		},
		{
			name: "syntax error",
			yaml: "name: x\nsteps:\n  - name: a\n    command: \"unterminated\n",
			want: workflow.Problem{Pos: pos(4, 14), Msg: `invalid YAML: could not find end character of double-quoted text`},
		},
		{
			name: "duplicate key",
			yaml: "name: x\nname: y\nsteps:\n  - {name: a, command: b}\n",
			want: workflow.Problem{Pos: pos(2, 1), Field: "name", Msg: `duplicate key "name" (first at line 1)`},
		},
		{
			name: "two documents",
			yaml: "name: x\n---\nname: y\n",
			want: workflow.Problem{Pos: pos(3, 1), Msg: `a workflow file holds one YAML document, found 2`},
		},
		{
			name: "empty file",
			yaml: "# nothing\n",
			want: workflow.Problem{Pos: pos(1, 1), Msg: `the file is empty: a workflow needs at least a name and steps`},
		},
		{
			name: "not a mapping",
			yaml: "- a\n- b\n",
			want: workflow.Problem{Pos: pos(1, 1), Msg: `the workflow must be a mapping, got a list`},
		},
		{
			name: "bad input default",
			yaml: "name: x\ninputs:\n  - name: n\n    type: integer\n    default: abc\nsteps:\n  - {name: a, command: b}\n",
			want: workflow.Problem{Pos: pos(5, 14), Field: "inputs[0].default", Msg: `default of input "n": "abc" is not an integer`},
		},
		{
			name: "unknown alias",
			yaml: "name: x\nsteps:\n  - name: a\n    command: *cmd\n",
			want: workflow.Problem{Pos: pos(4, 14), Field: "steps[0].command", Msg: `unknown alias *cmd: no anchor &cmd defined before it`},
		},
		{
			name: "missing type",
			yaml: "name: x\nsteps:\n  - name: a\n    dir: src\n",
			want: workflow.Problem{Pos: pos(3, 5), Field: "steps[0].type", Msg: `step "a" has no type; expected one of shell, tool, agent, parallel, workflow`},
		},
		{
			name: "bad size",
			yaml: "name: x\nsandbox:\n  limits:\n    memory: 2 bananas\nsteps:\n  - {name: a, command: b}\n",
			want: workflow.Problem{Pos: pos(4, 13), Field: "sandbox.limits.memory", Msg: `"memory": expected a size such as "10MB", "1MiB" or a number of bytes, got "2 bananas"`},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New().LoadBytes("wf.yaml", []byte(tc.yaml))
			var probs workflow.Problems
			if !errors.As(err, &probs) {
				t.Fatalf("LoadBytes(%q) = %v, want workflow.Problems", tc.yaml, err)
			}
			if diff := cmp.Diff(workflow.Problems{tc.want}, probs); diff != "" {
				t.Errorf("LoadBytes(%q) problems (-want +got):\n%s", tc.yaml, diff)
			}
		})
	}
}

func pos(line, col int) workflow.Pos { return workflow.Pos{File: "wf.yaml", Line: line, Col: col} }

// TestValues checks the decoding of durations, sizes and scalars kept as text.
func TestValues(t *testing.T) {
	const src = `name: values
version: 2.10
sandbox:
  limits: {timeout: 90, output: 10MB, memory: 1MiB, file_size: 512, pids: 10, cpu: 2}
steps:
  - name: a
    command: 42
    timeout: 1m30s
    retry: {max_attempts: 2, initial: 500ms, max: 2}
`
	wf, err := New().LoadBytes("v.yaml", []byte(src))
	if err != nil {
		t.Fatalf("LoadBytes = %v", err)
	}
	wantLimits := workflow.Limits{Timeout: 90 * time.Second, Output: 10_000_000, Memory: 1 << 20, FileSize: 512, PIDs: 10, CPU: 2}
	if diff := cmp.Diff(wantLimits, wf.Sandbox.Limits); diff != "" {
		t.Errorf("limits (-want +got):\n%s", diff)
	}
	s := wf.Steps[0]
	if wf.Version != "2.10" || s.Shell.Command != "42" || s.Timeout != 90*time.Second {
		t.Errorf("version %q, command %q, timeout %v; want 2.10, 42, 1m30s", wf.Version, s.Shell.Command, s.Timeout)
	}
	wantRetry := &workflow.Retry{MaxAttempts: 2, Initial: 500 * time.Millisecond, Max: 2 * time.Second}
	if diff := cmp.Diff(wantRetry, s.Retry); diff != "" {
		t.Errorf("retry (-want +got):\n%s", diff)
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"10MB", 10_000_000, true},
		{"1MiB", 1 << 20, true},
		{"512k", 512 << 10, true},
		{"1.5GB", 1_500_000_000, true},
		{"2 KiB", 2048, true},
		{"100", 100, true},
		{"100B", 100, true},
		{"MB", 0, false},
		{"10XB", 0, false},
		{"-5MB", 0, false},
		{"1e30TB", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			wf, err := New().LoadBytes("s.yaml", []byte("name: s\nsandbox: {limits: {output: \""+tc.in+"\"}}\nsteps: [{name: a, command: b}]\n"))
			if !tc.ok {
				if err == nil {
					t.Errorf("size %q loaded as %d, want an error", tc.in, wf.Sandbox.Limits.Output)
				}
				return
			}
			if err != nil {
				t.Fatalf("size %q: %v", tc.in, err)
			}
			if got := wf.Sandbox.Limits.Output; got != tc.want {
				t.Errorf("size %q = %d, want %d", tc.in, got, tc.want)
			}
		})
	}
}

// TestStepTypeInference checks that a missing type is inferred only when one type fits.
func TestStepTypeInference(t *testing.T) {
	tests := []struct {
		step string
		want workflow.StepType
	}{
		{"{name: a, command: b}", workflow.StepShell},
		{"{name: a, prompt: b}", workflow.StepAgent},
		{"{name: a, prompt_file: b.md}", workflow.StepAgent},
		{"{name: a, tool: b}", workflow.StepTool},
		{"{name: a, workflow: b.yaml}", workflow.StepWorkflow},
		{"{name: a, steps: [{name: b, command: c}]}", workflow.StepParallel},
	}
	for _, tc := range tests {
		t.Run(string(tc.want), func(t *testing.T) {
			wf, err := New().LoadBytes("t.yaml", []byte("name: t\nsteps:\n  - "+tc.step+"\n"))
			if err != nil {
				t.Fatalf("LoadBytes(%s) = %v", tc.step, err)
			}
			if got := wf.Steps[0].Type; got != tc.want {
				t.Errorf("type of %s = %q, want %q", tc.step, got, tc.want)
			}
		})
	}
}

// TestSuppressCascade checks that a misspelt key is reported once, not also as the missing
// field it was meant to be.
func TestSuppressCascade(t *testing.T) {
	_, err := New().LoadBytes("c.yaml", []byte("name: c\nsteps:\n  - name: a\n    type: shell\n    comand: make\n"))
	var probs workflow.Problems
	if !errors.As(err, &probs) || len(probs) != 1 || probs[0].Hint != `did you mean "command"?` {
		t.Errorf("LoadBytes = %v, want only the misspelling", err)
	}
}

// TestAliasBomb checks that aliases expanding exponentially are stopped with an error.
func TestAliasBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: bomb\nx-0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		b.WriteString("x-" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	b.WriteString("steps:\n  - name: a\n    prompt: b\n    options: {big: *a8}\n")
	_, err := New().LoadBytes("bomb.yaml", []byte(b.String()))
	if err == nil || !strings.Contains(err.Error(), "bomb.yaml:6:") || !strings.Contains(err.Error(), "aliases expand to more than") {
		t.Errorf("LoadBytes(alias bomb) = %v, want the alias limit at the line that crosses it", err)
	}
}

func TestRecursiveAlias(t *testing.T) {
	src := "name: r\nsteps: &s\n  - name: a\n    type: parallel\n    steps: *s\n"
	_, err := New().LoadBytes("r.yaml", []byte(src))
	if err == nil {
		t.Fatal("LoadBytes(recursive alias) = nil error, want one")
	}
}

// A UTF-8 byte order mark is not part of the first key, nor a column of line 1: a file loads,
// or fails at the same positions, with or without it; a UTF-16 file is refused at 1:1 with
// what to do. A second mark is text: the first key is unknown, as it was with one.
func TestByteOrderMark(t *testing.T) {
	bomtest.Test(t, []bomtest.Case{
		{Name: "valid", Doc: "name: bom\nsteps:\n  - {name: a, command: echo}\n"},
		{Name: "invalid", Doc: "nme: bom\nsteps:\n  - {name: a, command: echo, retry: 3}\n", Err: `wf.yaml:3:37: "retry" must be a mapping`},
	}, func(t *testing.T, data []byte) (string, error) {
		wf, err := New().LoadBytes("wf.yaml", data)
		if wf == nil {
			return "", err
		}
		return fmt.Sprintf("%s %d steps", wf.Name, len(wf.Steps)), err
	})
	_, err := New().LoadBytes("wf.yaml", []byte("\ufeff\ufeffname: bom\nsteps:\n  - {name: a, command: echo}\n"))
	if err == nil || !strings.Contains(err.Error(), `wf.yaml:1:1: unknown key "\ufeffname"`) {
		t.Errorf("LoadBytes(two marks) = %v, want the second one in an unknown key at 1:1", err)
	}
	_, err = New().LoadBytes("wf.yaml", []byte("\xff\xfen\x00"))
	if err == nil || err.Error() != "wf.yaml:1:1: the file is UTF-16; save as UTF-8" {
		t.Errorf("LoadBytes(UTF-16) = %v, want the file refused at 1:1", err)
	}
}

// TestCovered: a problem is dropped when the decoder reported its field, or a field that
// holds it (before a '.' or a '['), and only then.
func TestCovered(t *testing.T) {
	reported := map[string]bool{"steps[3]": true, "steps[4].retry": true, "inputs": true}
	for field, want := range map[string]bool{
		"steps[3]":                 true,
		"steps[3].command":         true,
		"steps[3][0]":              true,
		"steps[4].retry.max":       true,
		"inputs[0].name":           true,
		"steps[30].command":        false, // steps[3] is not a field of steps[30]
		"steps[4].retryx":          false,
		"steps[4]":                 false, // a field that holds a reported one is not covered
		"input":                    false,
		"steps[4].retry_something": false,
	} {
		if got := covered(field, reported); got != want {
			t.Errorf("covered(%q) = %v, want %v", field, got, want)
		}
	}
}
