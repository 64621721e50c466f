package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Files of the review tests: a workflow whose tool step a rule denies, one with a sub-workflow
// and a tool call that hangs, and one whose inputs are required.
const (
	deniedYAML = `name: denied
approval:
  default: auto
  rules:
    - {tool: shell, decision: deny}
steps:
  - {name: s, type: tool, tool: shell, args: {command: "echo x"}}
`
	hangYAML = `name: review
approval: {default: auto}
steps:
  - name: greet
    type: shell
    command: printf 'hello\nworld\n'
  - name: child
    type: workflow
    workflow: child.yaml
    inputs: {text: abc}
  - name: wait
    type: tool
    tool: shell
    args: {command: "echo started >> progress.log; sleep 60"}
`
	requiredYAML = "name: required\ninputs:\n  - {name: a, required: true}\nsteps:\n  - {name: s, type: shell, command: echo}\n"
)

// exitCase is one way to reach an exit code through the binary.
type exitCase struct {
	name string
	args []string
	msg  string // in stderr
}

// TestExitCodeTable runs the binary once or more per row of docs/cli.md's exit code table, and
// fails when the table has a row no case reaches.
func TestExitCodeTable(t *testing.T) {
	e := newEnv(t, "steps.yaml", "child.yaml", "fail_then_fix.yaml", "invalid.yaml", "agent/feedback.yaml", "agent/maxcalls.cassette.yaml")
	e.write("denied.yaml", deniedYAML)
	e.write("required.yaml", requiredYAML)
	e.write("sub/.keep", "")
	done := e.runJSON(0, "run", "steps.yaml")
	cases := map[int][]exitCase{
		0: {
			{"success", []string{"run", "steps.yaml"}, ""},
			{"help topic", []string{"help", "run"}, ""},
			{"run id prefix", []string{"status", done.RunID[:8]}, ""},
		},
		1: {
			{"unknown command", []string{"nosuch"}, `unknown command "nosuch"`},
			{"unknown command suggestion", []string{"statsu"}, `did you mean "status"`},
			{"unknown help topic", []string{"help", "nosuch"}, `unknown command "nosuch"`},
			{"unknown completion shell", []string{"completion", "tcsh"}, `unknown command "tcsh"`},
			{"replay with record", []string{"run", "steps.yaml", "--replay", "a.yaml", "--record", "b.yaml"}, "replay"},
			{"bad flag", []string{"run", "--bogus", "steps.yaml"}, "unknown flag"},
			{"missing file", []string{"run", "nope.yaml"}, "nope.yaml"},
			{"missing input", []string{"run", "required.yaml"}, "a"},
			{"unknown run", []string{"status", "nope"}, "nope"},
			{"resume completed run", []string{"resume", done.RunID}, "nothing to resume"},
		},
		2: {{"invalid workflow", []string{"run", "invalid.yaml"}, "invalid.yaml:4:11"}},
		3: {
			{"step failed", []string{"run", "fail_then_fix.yaml"}, "not fixed yet"},
			{"replay mismatch", []string{"run", "agent/feedback.yaml", "--replay", "agent/maxcalls.cassette.yaml"}, "replay"},
		},
		4: {{"state directory not writable", []string{"run", "--state-dir", "/dev/null/runs", "steps.yaml"}, "/dev/null"}},
		5: {{"tool step denied", []string{"run", "denied.yaml"}, "denied by approval rule"}},
	}
	for _, code := range docExitCodes(t) {
		if code == 130 {
			t.Run("130/interrupted", func(t *testing.T) { checkInterruptExit(t) })
			continue
		}
		if len(cases[code]) == 0 {
			t.Errorf("docs/cli.md lists exit code %d, and no case here reaches it", code)
		}
		for _, tc := range cases[code] {
			t.Run(strconv.Itoa(code)+"/"+tc.name, func(t *testing.T) {
				r := e.run(tc.args...)
				if r.code != code || !strings.Contains(r.stderr, tc.msg) {
					t.Errorf("awf %v: exit %d, want %d; stderr lacks %q?\n%s", tc.args, r.code, code, tc.msg, r.stderr)
				}
			})
		}
	}
}

// docExitCodes reads the codes of docs/cli.md's exit code table.
func docExitCodes(t *testing.T) []int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "cli.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(data), "## Exit codes")
	var codes []int
	for line := range strings.Lines(table) {
		if strings.HasPrefix(line, "## ") {
			break
		}
		cells := strings.Split(line, "|")
		if len(cells) < 3 {
			continue
		}
		if code, err := strconv.Atoi(strings.TrimSpace(cells[1])); err == nil {
			codes = append(codes, code)
		}
	}
	if len(codes) < 7 {
		t.Fatalf("docs/cli.md: exit code table has %d rows: %v", len(codes), codes)
	}
	return codes
}

// checkInterruptExit interrupts a run and wants 130 with one JSON object that says so.
func checkInterruptExit(t *testing.T) {
	_, res := interruptSlow(t)
	if res.Error.Kind != "interrupted" || res.Error.ExitCode != 130 {
		t.Errorf("error = %+v, want kind interrupted, exit code 130", res.Error)
	}
}

// oneJSONObject decodes stdout, which must be exactly one JSON object.
func oneJSONObject[T any](t *testing.T, stdout string) T {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	var v T
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("stdout is not a JSON object: %v\n%s", err, stdout)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		t.Fatalf("stdout holds more than one JSON value:\n%s", stdout)
	}
	return v
}

// TestJSONOutputOnFailure runs each failure path of commands with --output json and wants one
// JSON object on stdout with the error in it, and the exit code.
func TestJSONOutputOnFailure(t *testing.T) {
	e := newEnv(t, "steps.yaml", "child.yaml", "invalid.yaml")
	e.write("required.yaml", requiredYAML)
	e.write("sub/.keep", "")
	done := e.runJSON(0, "run", "steps.yaml")
	tests := []struct {
		name       string
		args       []string
		code       int
		kind, file string
		line, col  int
		status     string // the run's status when the object is a run result
	}{
		{"invalid workflow", []string{"run", "invalid.yaml"}, 2, "invalid", "invalid.yaml", 4, 11, ""},
		{"validate invalid workflow", []string{"validate", "invalid.yaml"}, 2, "invalid", "invalid.yaml", 4, 11, ""},
		{"missing input", []string{"run", "required.yaml"}, 1, "usage", "", 0, 0, ""},
		{"missing file", []string{"run", "nope.yaml"}, 1, "usage", "nope.yaml", 0, 0, ""},
		{"bad flag", []string{"run", "--bogus", "steps.yaml"}, 1, "usage", "", 0, 0, ""},
		{"unwritable state directory", []string{"run", "--state-dir", "/dev/null/runs", "steps.yaml"}, 4, "system", "", 0, 0, "failed"},
		{"resume completed run", []string{"resume", done.RunID}, 1, "usage", "", 0, 0, "completed"},
		{"unknown run", []string{"status", "nope"}, 1, "usage", "", 0, 0, ""},
		{"history bad status", []string{"history", "--status", "bogus"}, 1, "usage", "", 0, 0, ""},
		{"audit bad decision", []string{"audit", "--decision", "maybe"}, 1, "usage", "", 0, 0, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.run(append(tc.args, "--output", "json")...)
			if r.code != tc.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			got := oneJSONObject[struct {
				Status string    `json:"status"`
				Error  jsonError `json:"error"`
			}](t, r.stdout)
			want := jsonError{Kind: tc.kind, Message: got.Error.Message, File: tc.file, Line: tc.line, Column: tc.col, ExitCode: tc.code}
			if got.Error != want || got.Error.Message == "" || got.Status != tc.status {
				t.Errorf("status %q, error %+v; want status %q, error %+v", got.Status, got.Error, tc.status, want)
			}
			if !strings.Contains(r.stderr, got.Error.Message) {
				t.Errorf("stderr does not say the error %q:\n%s", got.Error.Message, r.stderr)
			}
		})
	}
}

// TestReviewStatusAndHistory kills a run while a tool call of it runs, after a step with
// output and a sub-workflow, and compares awf status (by an id prefix) and awf history with
// golden files (ids, times, durations and directories replaced).
func TestReviewStatusAndHistory(t *testing.T) {
	e := newEnv(t, "child.yaml")
	e.write("review.yaml", hangYAML)
	cmd := e.cmd(t.Context(), "run", "review.yaml")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { b, _ := os.ReadFile(filepath.Join(e.dir, "progress.log")); return len(b) > 0 })
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	stopOrphan(t, e)
	h := e.mustRun(0, "history", "--output", "json")
	var runs struct {
		Runs []struct {
			RunID  string `json:"run_id"`
			Parent string `json:"parent"`
		}
	}
	if err := json.Unmarshal([]byte(h.stdout), &runs); err != nil || len(runs.Runs) != 2 || runs.Runs[1].Parent != runs.Runs[0].RunID {
		t.Fatalf("history --output json = %s (%v), want the run then its child", h.stdout, err)
	}
	id := runs.Runs[0].RunID
	n := newNormalizer(e.dir, id, runs.Runs[1].RunID)
	checkGolden(t, "status.golden", n.apply(e.mustRun(0, "status", id[:8]).stdout))
	checkGolden(t, "history.golden", n.apply(e.mustRun(0, "history").stdout))

	child := runs.Runs[1].RunID
	var parentView struct {
		Children []struct {
			RunID string `json:"run_id"`
		} `json:"child_runs"`
		States map[string]struct {
			ToolCalls []struct {
				Tool     string `json:"tool"`
				InFlight bool   `json:"in_flight"`
			} `json:"tool_calls"`
		} `json:"states"`
	}
	if err := json.Unmarshal([]byte(e.mustRun(0, "status", id, "--output", "json").stdout), &parentView); err != nil ||
		len(parentView.Children) != 1 || parentView.Children[0].RunID != child ||
		len(parentView.States["wait"].ToolCalls) != 1 || !parentView.States["wait"].ToolCalls[0].InFlight {
		t.Errorf("status --output json: %+v (%v), want the child run and the call in flight", parentView, err)
	}
	var childView struct {
		Parent struct {
			RunID string `json:"run_id"`
		} `json:"parent_run"`
	}
	if err := json.Unmarshal([]byte(e.mustRun(0, "status", child[:8], "--output", "json").stdout), &childView); err != nil || childView.Parent.RunID != id {
		t.Errorf("child's status: parent %+v (%v), want %s", childView.Parent, err, id)
	}
	// awf audit prints 8 characters of the run id: --run takes them back.
	audit := e.mustRun(0, "audit", "--run", id[:8], "--output", "json").stdout
	if !strings.Contains(audit, `"run_id":"`+id+`"`) || !strings.Contains(audit, `"tool":"shell"`) {
		t.Errorf("audit --run %s: %s", id[:8], audit)
	}
}

// normalizer replaces what changes between runs of a test with fixed words.
type normalizer struct{ repl *strings.Replacer }

func newNormalizer(dir string, ids ...string) normalizer {
	var pairs []string
	for i, id := range ids {
		pairs = append(pairs, id, "RUN"+strconv.Itoa(i+1)+strings.Repeat("-", len(id)-4))
	}
	return normalizer{strings.NewReplacer(append(pairs, dir, "DIR")...)}
}

var (
	rfc3339   = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)`)
	localTime = regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d`)
	duration  = regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|ms|s)\b`)
	uuid      = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	// A step's duration is left out when it rounds to 0.
	stepDuration = regexp.MustCompile(`(?m)^(  \S+ +\S+) +DUR`)
)

func (n normalizer) apply(s string) string {
	s = n.repl.Replace(s)
	s = uuid.ReplaceAllString(s, "UUID")
	s = rfc3339.ReplaceAllString(s, "TIME")
	s = localTime.ReplaceAllString(s, "YYYY-MM-DD hh:mm:ss")
	s = duration.ReplaceAllString(s, "DUR")
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		b.WriteString(strings.TrimRight(stepDuration.ReplaceAllString(sc.Text(), "$1"), " ") + "\n")
	}
	return b.String()
}

// checkGolden compares got with testdata/golden/name; UPDATE_GOLDEN=1 rewrites the file.
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (write it with UPDATE_GOLDEN=1)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (UPDATE_GOLDEN=1 rewrites it):\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}

// TestValidateCatchesWhatRunWouldFail: awf validate reports, with file:line:col, what used to
// pass validation and fail the run: unknown tools (with the nearest name), tool step args
// that do not fit the tool, a when that is a template or not a boolean, and a workflow that
// calls itself; awf run refuses such a workflow before creating any run.
func TestValidateCatchesWhatRunWouldFail(t *testing.T) {
	e := newEnv(t)
	e.write("tools.yaml", `name: tools
steps:
  - {name: a, type: tool, tool: reed_file, args: {path: x}}
  - {name: b, type: tool, tool: shell, args: {comand: echo}}
  - {name: c, type: agent, prompt: hi, tools: [read_file, grpe]}
`)
	e.write("when.yaml", `name: when
inputs: {x: {default: 1}}
steps:
  - {name: a, type: shell, command: echo, when: "{{ inputs.x }} == 1"}
  - {name: b, type: shell, command: echo, when: "1 + 2"}
`)
	e.write("self.yaml", "name: self\nsteps:\n  - {name: again, type: workflow, workflow: self.yaml}\n")
	e.write("a.yaml", "name: a\nsteps:\n  - {name: call_b, type: workflow, workflow: b.yaml}\n")
	e.write("b.yaml", "name: b\nsteps:\n  - {name: call_a, type: workflow, workflow: a.yaml}\n")
	tests := map[string][]string{
		"tools.yaml": {
			`tools.yaml:3:33: step "a": unknown tool "reed_file" (did you mean "read_file"?)`,
			`tools.yaml:4:46: step "b": args.comand: unknown property (did you mean "command"?) (tool shell)`,
			`tools.yaml:4:46: step "b": args.command: is required (tool shell)`,
			`tools.yaml:5:47: step "c": unknown tool "grpe" (did you mean "grep"?)`,
		},
		"when.yaml": {
			`when.yaml:4:49: when is an expression: drop the {{ }} (write when: inputs.x == 1)`,
			`when.yaml:5:49: when must be a boolean, and "1 + 2" is of type integer`,
		},
		"self.yaml": {`self.yaml:3:45: step "again" calls its own workflow: self.yaml -> self.yaml`},
		"a.yaml":    {`b.yaml:3:46: step "call_a" closes a cycle of workflows: a.yaml -> b.yaml -> a.yaml`},
	}
	for file, want := range tests {
		r := e.mustRun(2, "validate", file)
		for _, w := range want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("awf validate %s: stderr lacks\n%s\n%s", file, w, r.stderr)
			}
		}
		e.mustRun(2, "run", file)
	}
	if runs, _ := os.ReadDir(filepath.Join(e.dir, ".awf", "runs")); len(runs) != 0 {
		t.Errorf("awf run created runs of invalid workflows: %v", runs)
	}
}

// TestResumedDurationLeavesOutTheWait: a run resumed a second after it failed records both
// process segments, and its duration (awf resume --output json, awf history) is their sum,
// without the second it waited.
func TestResumedDurationLeavesOutTheWait(t *testing.T) {
	e := newEnv(t, "fail_then_fix.yaml")
	failed := e.runJSON(3, "run", "fail_then_fix.yaml")
	time.Sleep(1100 * time.Millisecond)
	e.write("fixed", "")
	r := e.mustRun(0, "resume", failed.RunID[:8], "--output", "json")
	var res struct {
		DurationMs int64 `json:"duration_ms"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatal(err)
	}
	s := e.state(failed.RunID)
	if len(s.Segments) != 2 || s.Segments[0].EndedAt == nil || s.Segments[1].StartedAt.Sub(*s.Segments[0].EndedAt) < time.Second {
		t.Fatalf("segments = %+v, want two, a second apart", s.Segments)
	}
	wall := s.FinishedAt.Sub(s.StartedAt)
	if res.DurationMs != s.Duration().Milliseconds() || time.Duration(res.DurationMs)*time.Millisecond > wall-time.Second {
		t.Errorf("duration %dms, want the segments' %s, a second less than the %s from start to end", res.DurationMs, s.Duration(), wall)
	}
	var h struct {
		Runs []struct {
			DurationMs int64 `json:"duration_ms"`
		}
	}
	if err := json.Unmarshal([]byte(e.mustRun(0, "history", "--output", "json").stdout), &h); err != nil || len(h.Runs) != 1 || h.Runs[0].DurationMs != res.DurationMs {
		t.Errorf("history: %+v (%v), want duration %dms", h.Runs, err, res.DurationMs)
	}
}
