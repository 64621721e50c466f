package templater

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/workflow"
)

func pos(line, col int) workflow.Pos { return workflow.Pos{File: "wf.yaml", Line: line, Col: col} }

// shell is a shell step whose command value starts at line:col.
func shell(name, command string, line int) workflow.Step {
	return workflow.Step{Name: name, Type: workflow.StepShell, Shell: &workflow.ShellStep{Command: command},
		Pos: pos(line, 5), Fields: map[string]workflow.Pos{"command": pos(line, 14)}}
}

func parallel(name string, line int, children ...workflow.Step) workflow.Step {
	return workflow.Step{Name: name, Type: workflow.StepParallel, Parallel: &workflow.ParallelStep{Steps: children}, Pos: pos(line, 5)}
}

// problem is the part of a workflow.Problem a test compares.
type problem struct {
	Pos     string
	Field   string
	Msg     string
	Hint    string
	Warning bool
}

func summarize(ps workflow.Problems) []problem {
	var out []problem
	for _, p := range ps {
		out = append(out, problem{Pos: workflow.Problem{Pos: p.Pos}.String(), Field: p.Field, Msg: p.Msg, Hint: p.Hint,
			Warning: p.Severity == workflow.SeverityWarning})
	}
	return out
}

func declared(names ...string) []workflow.Input {
	var in []workflow.Input
	for _, n := range names {
		in = append(in, workflow.Input{Name: n, Type: workflow.TypeString})
	}
	return in
}

func TestCheckStepReferences(t *testing.T) {
	tests := []struct {
		name  string
		steps []workflow.Step
		want  []problem
	}{
		{
			name:  "earlier step",
			steps: []workflow.Step{shell("a", "echo", 1), shell("b", "echo {{states.a.output}}", 2)},
		},
		{
			name:  "later step",
			steps: []workflow.Step{shell("a", "echo {{ states.b.output }}", 1), shell("b", "echo", 2)},
			want:  []problem{{Pos: "wf.yaml:1:22: ", Field: "steps[0].command", Msg: `step "b" is not earlier in the workflow`, Hint: `"b" runs later`}},
		},
		{
			name:  "unknown step with a suggestion",
			steps: []workflow.Step{shell("build", "make", 1), shell("b", "echo {{states.buidl.output}}", 2)},
			want:  []problem{{Pos: "wf.yaml:2:21: ", Field: "steps[1].command", Msg: `step "buidl" is not earlier in the workflow`, Hint: `did you mean "build"?`}},
		},
		{
			name:  "own state",
			steps: []workflow.Step{shell("a", "echo {{states.a.output}}", 1)},
			want:  []problem{{Pos: "wf.yaml:1:21: ", Field: "steps[0].command", Msg: `step "a" is not earlier in the workflow`, Hint: "a step cannot read its own state"}},
		},
		{
			name: "output_var of an earlier step",
			steps: []workflow.Step{
				{Name: "a", Type: workflow.StepShell, OutputVar: "result", Shell: &workflow.ShellStep{Command: "x"}},
				shell("b", "echo {{states.result.output}}", 2),
			},
		},
		{
			name: "parallel child sees the steps before the block",
			steps: []workflow.Step{
				shell("setup", "x", 1),
				parallel("par", 2, shell("c1", "echo {{states.setup.output}}", 3), shell("c2", "y", 4)),
			},
		},
		{
			name: "parallel sibling is not visible",
			steps: []workflow.Step{
				parallel("par", 1, shell("c1", "x", 2), shell("c2", "echo {{states.c1.output}}", 3)),
			},
			want: []problem{{Pos: "wf.yaml:3:21: ", Field: "steps[0].steps[1].command", Msg: `step "c1" is not earlier in the workflow`, Hint: `"c1" runs in parallel with this step`}},
		},
		{
			name: "a step nested in a sibling is beside it, one in a later block later",
			steps: []workflow.Step{
				parallel("one", 1, parallel("inner", 2, shell("deep", "x", 3)),
					shell("c2", "echo {{states.deep.output}} {{states.c3.output}}", 4)),
				parallel("two", 5, shell("c3", "y", 6)),
			},
			want: []problem{
				{Pos: "wf.yaml:4:21: ", Field: "steps[0].steps[1].command", Msg: `step "deep" is not earlier in the workflow`, Hint: `"deep" runs in parallel with this step`},
				{Pos: "wf.yaml:4:44: ", Field: "steps[0].steps[1].command", Msg: `step "c3" is not earlier in the workflow`, Hint: `"c3" runs later`},
			},
		},
		{
			name: "after the block, children are visible",
			steps: []workflow.Step{
				parallel("par", 1, shell("c1", "x", 2)),
				shell("after", "echo {{states.c1.output}} {{states.par.status}}", 3),
			},
		},
		{
			name:  "unknown step field",
			steps: []workflow.Step{shell("a", "x", 1), shell("b", "echo {{states.a.outptu}}", 2)},
			want: []problem{{Pos: "wf.yaml:2:21: ", Field: "steps[1].command", Hint: `did you mean "output"?`,
				Msg: `states.a has no field "outptu" (fields: output, response, exit_code, status, error, tokens, tool_calls, tool_stats)`}},
		},
		{
			name:  "dynamic step name is not checked",
			steps: []workflow.Step{shell("a", `echo {{states["z" + "z"].output}}`, 1)},
		},
		{
			name:  "when sees earlier steps",
			steps: []workflow.Step{shell("a", "x", 1), {Name: "b", Type: workflow.StepShell, When: "states.a.exit_code == 0 && states.c.status == 'x'", Shell: &workflow.ShellStep{Command: "y"}, Fields: map[string]workflow.Pos{"when": pos(3, 11)}}},
			want:  []problem{{Pos: "wf.yaml:3:38: ", Field: "steps[1].when", Msg: `step "c" is not earlier in the workflow`, Hint: `did you mean "a"?`}},
		},
		{
			name:  "when written as a template",
			steps: []workflow.Step{{Name: "b", Type: workflow.StepShell, When: "{{ states.b.exit_code }} == 1", Shell: &workflow.ShellStep{Command: "y"}, Fields: map[string]workflow.Pos{"when": pos(3, 11)}}},
			want:  []problem{{Pos: "wf.yaml:3:11: ", Field: "steps[0].when", Msg: "when is an expression: drop the {{ }}", Hint: "write when: states.b.exit_code == 1"}},
		},
		{
			name:  "when that is not a boolean",
			steps: []workflow.Step{{Name: "b", Type: workflow.StepShell, When: "len('abc')", Shell: &workflow.ShellStep{Command: "y"}, Fields: map[string]workflow.Pos{"when": pos(3, 11)}}},
			want: []problem{{Pos: "wf.yaml:3:11: ", Field: "steps[0].when", Msg: `when must be a boolean, and "len('abc')" is of type integer`,
				Hint: `compare it: x == "yes", x > 0, x != ""`}},
		},
		{
			name:  "when of a name is checked at run time",
			steps: []workflow.Step{shell("a", "x", 1), {Name: "b", Type: workflow.StepShell, When: "{{ states.a.output }}", Shell: &workflow.ShellStep{Command: "y"}, Fields: map[string]workflow.Pos{"when": pos(3, 11)}}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wf := &workflow.Workflow{Name: "t", Steps: tc.steps}
			got := summarize(New().Check(wf))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Check mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckNamespaces(t *testing.T) {
	tests := []struct {
		name, command string
		want          []problem
	}{
		{"known namespaces", "echo {{env.HOME}} {{workflow.name}} {{run.id}} {{inputs.x}}", nil},
		{"misspelt namespace", "echo {{inptus.x}}", []problem{{Pos: "wf.yaml:1:21: ", Field: "steps[0].command", Msg: `unknown name "inptus"`, Hint: `did you mean "inputs"?`}}},
		{"unknown name", "echo {{ foo }}", []problem{{Pos: "wf.yaml:1:22: ", Field: "steps[0].command", Msg: `unknown name "foo"`}}},
		{"args outside a tool", "echo {{args.x}}", []problem{{Pos: "wf.yaml:1:21: ", Field: "steps[0].command", Msg: `"args" is not available in steps[0].command`, Hint: "args exists in tool commands and approval rules"}}},
		{"workflow field", "echo {{workflow.nme}}", []problem{{Pos: "wf.yaml:1:21: ", Field: "steps[0].command", Msg: `workflow has no field "nme" (fields: name, version, description, dir)`, Hint: `did you mean "name"?`}}},
		{"run field", "echo {{run.dir}} {{run.ID}}", []problem{{Pos: "wf.yaml:1:33: ", Field: "steps[0].command", Msg: `run has no field "ID" (fields: id, dir)`, Hint: `did you mean "id"?`}}},
		{"let and predicates are not names", "echo {{ let y = inputs.x; y + '1' }} {{ map([1], # + 1) }}", nil},
		{"syntax error position", "echo {{ inputs.x + }}", []problem{{Pos: "wf.yaml:1:32: ", Field: "steps[0].command", Msg: `unexpected token EOF in "inputs.x +"`}}},
		{"shell error position", "echo $(( {{inputs.x}} ))", []problem{{Pos: "wf.yaml:1:23: ", Field: "steps[0].command", Msg: "a template value in arithmetic would be evaluated as code; compute it in the expression instead"}}},
		{"raw warning", "ls {{ raw(inputs.x) }}", []problem{{Pos: "wf.yaml:1:17: ", Field: "steps[0].command", Msg: "raw() splices text into the command; the value can change its syntax", Warning: true}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wf := &workflow.Workflow{Name: "t", Inputs: declared("x"), Steps: []workflow.Step{shell("s", tc.command, 1)}}
			got := summarize(New().Check(wf))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Check(%q) mismatch (-want +got):\n%s", tc.command, diff)
			}
		})
	}
}

func TestCheckImplicitInputs(t *testing.T) {
	wf := &workflow.Workflow{Name: "t", Inputs: declared("feature"), Steps: []workflow.Step{
		shell("a", "echo {{inputs.featur}} {{inputs.featur}}", 1),
		shell("b", "echo {{ inputs.path }} {{ inputs?.opt }} {{ inputs.mode ?? 'fast' }} {{ inputs.feature }}", 2),
	}}
	got := summarize(New().Check(wf))
	want := []problem{
		{Pos: "wf.yaml:1:21: ", Field: "steps[0].command", Msg: `input "featur" is used but not declared; treated as a required string`, Hint: `did you mean "feature"?`, Warning: true},
		{Pos: "wf.yaml:2:22: ", Field: "steps[1].command", Msg: `input "path" is used but not declared; treated as a required string`, Warning: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Check problems mismatch (-want +got):\n%s", diff)
	}
	wantInputs := []workflow.Input{
		{Name: "feature", Type: workflow.TypeString},
		{Name: "featur", Type: workflow.TypeString, Required: true, Implicit: true, Pos: pos(1, 21)},
		{Name: "path", Type: workflow.TypeString, Required: true, Implicit: true, Pos: pos(2, 22)},
	}
	if diff := cmp.Diff(wantInputs, wf.Inputs); diff != "" {
		t.Errorf("wf.Inputs mismatch (-want +got):\n%s", diff)
	}
	// A second Check sees the implicit inputs as declared: no duplicates, no new warnings.
	if again := New().Check(wf); len(again) != 0 || len(wf.Inputs) != 3 {
		t.Errorf("second Check = %v with %d inputs, want no problems and 3 inputs", again, len(wf.Inputs))
	}
}

func TestCheckTools(t *testing.T) {
	search := workflow.ToolSpec{Name: "search_code", Command: "rg '{{args.pattern}}' {{inputs.project_path}}", Pos: pos(10, 14),
		Parameters: []workflow.Param{{Name: "pattern", Type: workflow.TypeString, Required: true}}}
	tests := []struct {
		name string
		tool workflow.ToolSpec
		want []problem
	}{
		{"option-like model value", search, []problem{{Pos: "wf.yaml:10:18: ", Field: "tools[0].command", Warning: true,
			Msg: `{{args.pattern}} starts an argument of rg: a value beginning with "-" would be read as an option, and is refused when the tool is called`, Hint: `put "--" before it: rg -- ...`}}},
		{"with --", workflow.ToolSpec{Name: "s", Command: "rg -- '{{args.pattern}}' .", Pos: pos(10, 14),
			Parameters: []workflow.Param{{Name: "pattern"}}}, nil},
		{"unknown parameter", workflow.ToolSpec{Name: "s", Command: "rg --regexp={{args.patern}}", Pos: pos(10, 14),
			Parameters: []workflow.Param{{Name: "pattern"}}},
			[]problem{{Pos: "wf.yaml:10:28: ", Field: "tools[0].command", Msg: `tool "s" has no parameter "patern"`, Hint: `did you mean "pattern"?`}}},
		{"states in a tool", workflow.ToolSpec{Name: "s", Command: "cat {{states.a.output}}", Pos: pos(10, 14)},
			[]problem{{Pos: "wf.yaml:10:20: ", Field: "tools[0].command", Msg: `step "a" is not earlier in the workflow`, Hint: "tools, sandbox and approval rules run within any step and cannot read step states"}}},
		{"restrictions", workflow.ToolSpec{Name: "r", Builtin: true, Pos: pos(10, 5), Restrictions: &workflow.Restrictions{Paths: []string{"{{inputs.project_path}}/**", "{{args.x}}"}}},
			[]problem{{Pos: "wf.yaml:10:7: ", Field: "tools[0].restrictions.paths[1]", Msg: `"args" is not available in tools[0].restrictions.paths[1]`, Hint: "args exists in tool commands and approval rules"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wf := &workflow.Workflow{Name: "t", Inputs: declared("project_path"), Tools: []workflow.ToolSpec{tc.tool}}
			got := summarize(New().Check(wf))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Check mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCheckExpressionScopes(t *testing.T) {
	agent := workflow.Step{Name: "chat", Type: workflow.StepAgent, Fields: map[string]workflow.Pos{"conversation": pos(5, 7)},
		Agent: &workflow.AgentStep{Prompt: "hi", Mode: "conversation", Conversation: &workflow.ConversationOptions{StopCondition: "turn > 3 || response contains 'DONE' || tokens > 1000"}}}
	wf := &workflow.Workflow{Name: "t", Steps: []workflow.Step{agent},
		Approval: &workflow.ApprovalPolicy{Rules: []workflow.ApprovalRule{
			{Tool: "shell", When: `args.command startsWith "git " && tool == "shell"`, Decision: "auto", Pos: pos(20, 7)},
			{When: "turn > 1", Decision: "deny", Pos: pos(21, 7)},
		}},
		Output: "{{ states.chat.output }} {{ response }}", OutputPos: pos(30, 9)}
	got := summarize(New().Check(wf))
	want := []problem{
		{Pos: "wf.yaml:21:7: ", Field: "approval.rules[1].when", Msg: `"turn" is not available in approval.rules[1].when`, Hint: "turn exists in conversation.stop_condition"},
		{Pos: "wf.yaml:30:37: ", Field: "output", Msg: `"response" is not available in output`, Hint: "response exists in conversation.stop_condition"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Check mismatch (-want +got):\n%s", diff)
	}
}

// TestCheckSeedWorkflow checks the YAML of seed 002 as the loader builds it: it must compile,
// with its undeclared inputs made implicit.
func TestCheckSeedWorkflow(t *testing.T) {
	wf := &workflow.Workflow{
		Name: "autonomous-coding", Version: "1.0",
		Tools: []workflow.ToolSpec{
			{Name: "read_file", Builtin: true, Approval: "auto", Restrictions: &workflow.Restrictions{Paths: []string{"{{inputs.project_path}}/**"}}, Pos: pos(5, 5)},
			{Name: "write_file", Builtin: true, Approval: "prompt", Restrictions: &workflow.Restrictions{Paths: []string{"{{inputs.project_path}}/src/**"}}, Pos: pos(12, 5)},
			{Name: "run_tests", Command: "cd {{inputs.project_path}} && npm test", Approval: "auto", Pos: pos(19, 14)},
			{Name: "search_code", Command: "rg '{{args.pattern}}' {{inputs.project_path}}", Approval: "auto", Pos: pos(24, 14),
				Parameters: []workflow.Param{{Name: "pattern", Type: workflow.TypeString, Required: true}}},
		},
		Steps: []workflow.Step{{Name: "implement_feature", Type: workflow.StepAgent, Fields: map[string]workflow.Pos{"prompt": pos(35, 13)},
			Agent: &workflow.AgentStep{Provider: "claude", Prompt: "Implement this feature: {{inputs.feature_description}}\n\nYou have access to tools.\n",
				Tools: []string{"read_file", "write_file", "run_tests", "search_code"}}}},
	}
	ps := New().Check(wf)
	if err := ps.Err(); err != nil {
		t.Fatalf("Check(seed) errors: %v", err)
	}
	var names []string
	for _, in := range wf.Inputs {
		if in.Implicit && in.Required && in.Type == workflow.TypeString {
			names = append(names, in.Name)
		}
	}
	if diff := cmp.Diff([]string{"feature_description", "project_path"}, names); diff != "" {
		t.Errorf("implicit inputs mismatch (-want +got):\n%s", diff)
	}
	var warnings []string
	for _, p := range ps {
		warnings = append(warnings, p.Msg)
	}
	if len(warnings) != 3 || !strings.Contains(strings.Join(warnings, "\n"), "starts an argument of rg") {
		t.Errorf("Check(seed) warnings = %q, want 2 implicit inputs and the rg option warning", warnings)
	}
}

func TestCheckCachesForRun(t *testing.T) {
	tp := New()
	wf := &workflow.Workflow{Name: "t", Inputs: declared("x"), Steps: []workflow.Step{shell("a", "echo {{inputs.x}}", 1)}}
	if ps := tp.Check(wf); len(ps) != 0 {
		t.Fatalf("Check = %v", ps)
	}
	if _, ok := tp.commands.Load("echo {{inputs.x}}"); !ok {
		t.Error("Check did not leave the compiled command in the cache")
	}
}

// TestCacheIsBounded checks a workflow with more distinct templates than the caches keep: the
// check finds the same problem and each cache holds at most cacheLimit entries.
func TestCacheIsBounded(t *testing.T) {
	tp := New()
	wf := &workflow.Workflow{Name: "t", Inputs: declared("x")}
	for i := range cacheLimit + 10 {
		wf.Steps = append(wf.Steps, shell(fmt.Sprintf("s%d", i), fmt.Sprintf("echo %d {{inputs.x}}", i), i+1))
	}
	wf.Steps = append(wf.Steps, shell("last", "echo {{states.nosuch.output}}", cacheLimit+11))
	ps := tp.Check(wf)
	if len(ps) != 1 || !strings.Contains(ps[0].Msg, `"nosuch"`) {
		t.Fatalf("Check = %v, want one problem about nosuch", ps)
	}
	for name, c := range map[string]*cache{"texts": &tp.texts, "exprs": &tp.exprs, "commands": &tp.commands} {
		n := 0
		c.m.Range(func(any, any) bool { n++; return true })
		if n == 0 || n > cacheLimit {
			t.Errorf("%s cache holds %d entries, want 1..%d", name, n, cacheLimit)
		}
	}
	if _, ok := tp.commands.Load("echo {{states.nosuch.output}}"); !ok {
		t.Error("the last command checked is not cached")
	}
}

func TestCheckWarnsOfUnsupportedBuiltins(t *testing.T) {
	wf := &workflow.Workflow{Name: "w", Inputs: []workflow.Input{{Name: "x"}},
		Steps: []workflow.Step{shell("s", "echo {{inputs.x}}\nulimit -n 4096\nsleep 1 & kill $!; wait", 3)}}
	probs := New().Check(wf)
	if len(probs) != 1 || !strings.Contains(probs[0].Msg, "line 2 of the command: ulimit is not a builtin of awf's shell") ||
		probs[0].Severity != workflow.SeverityWarning {
		t.Errorf("problems = %v, want one warning about ulimit on line 2", probs)
	}
	for _, tc := range []struct{ script, want string }{
		{"ul\\\nimit -n 1", "line 1 of the command: ulimit"}, // a line continuation inside the name
		{"echo a; \\\r\nbg", "line 2 of the command: bg"},
		{"u\\\nm\\\nask 022", "line 1 of the command: umask"},
		{"echo 'ulimit' \"bg\"; history=1", ""}, // named, never called
		{"ulimited && fgrep x y", ""},
		{"go test ./...", ""},
	} {
		wf := &workflow.Workflow{Name: "w", Steps: []workflow.Step{shell("s", tc.script, 3)}}
		probs := New().Check(wf)
		if tc.want == "" && len(probs) != 0 || tc.want != "" && (len(probs) != 1 || !strings.Contains(probs[0].Msg, tc.want)) {
			t.Errorf("%q: problems = %v, want %q", tc.script, probs, tc.want)
		}
	}
}
