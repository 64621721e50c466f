package workflow

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// base returns a small valid workflow for the cases to break.
func base() *Workflow {
	return &Workflow{
		Name: "wf",
		Pos:  Pos{File: "wf.yaml", Line: 1, Col: 1},
		Steps: []Step{
			{Name: "build", Type: StepShell, Shell: &ShellStep{Command: "make"}, Pos: Pos{Line: 3}},
			{Name: "draft", Type: StepAgent, Agent: &AgentStep{Prompt: "write"}, Pos: Pos{Line: 5}},
		},
	}
}

func shell(name string) Step {
	return Step{Name: name, Type: StepShell, Shell: &ShellStep{Command: "true"}}
}

func agent(name, continueFrom string) Step {
	return Step{Name: name, Type: StepAgent, Agent: &AgentStep{Prompt: "p", ContinueFrom: continueFrom}}
}

// render lists problems as "field: message (hint)" lines, warnings marked.
func render(ps Problems) []string {
	var out []string
	for _, p := range ps {
		line := p.Field + ": " + p.Msg
		if p.Hint != "" {
			line += " (" + p.Hint + ")"
		}
		if p.Severity == SeverityWarning {
			line = "warning " + line
		}
		out = append(out, line)
	}
	return out
}

func TestValidate(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name   string
		change func(w *Workflow)
		want   []string
	}{
		{"valid", func(*Workflow) {}, nil},
		{"no name", func(w *Workflow) { w.Name = "" }, []string{
			"name: the workflow has no name (add name: with lowercase letters, digits, - and _)"}},
		{"bad name", func(w *Workflow) { w.Name = "My_WF" }, []string{
			`name: workflow name "My_WF" may hold only lowercase letters, digits, - and _`}},
		{"no steps", func(w *Workflow) { w.Steps = nil }, []string{"steps: the workflow has no steps"}},
		{"duplicate nested step", func(w *Workflow) {
			w.Steps = append(w.Steps, Step{Name: "group", Type: StepParallel, Parallel: &ParallelStep{Steps: []Step{shell("build")}}})
		}, []string{`steps[2].steps[0].name: duplicate step name "build" (first defined at line 3)`}},
		{"bad step name", func(w *Workflow) { w.Steps[0].Name = "a b" }, []string{
			`steps[0].name: step name "a b" may hold only letters, digits, - and _`}},
		{"unnamed step", func(w *Workflow) { w.Steps[0].Name = "" }, []string{
			"steps[0].name: step has no name (add name: with letters, digits, - and _)"}},
		{"shell without command", func(w *Workflow) { w.Steps[0].Shell.Command = " " }, []string{
			`steps[0].command: shell step "build" needs a command`}},
		{"shell part missing", func(w *Workflow) { w.Steps[0].Shell = nil }, []string{
			`steps[0].command: shell step "build" needs a command`}},
		{"tool without tool", func(w *Workflow) { w.Steps[0] = Step{Name: "t", Type: StepTool, Tool: &ToolStep{}} }, []string{
			`steps[0].tool: tool step "t" needs tool: the name of the tool to call`}},
		{"agent without prompt", func(w *Workflow) { w.Steps[1].Agent.Prompt = "" }, []string{
			`steps[1].prompt: agent step "draft" needs a prompt or a prompt_file`}},
		{"agent with both prompts", func(w *Workflow) { w.Steps[1].Agent.PromptFile = "p.md" }, []string{
			`steps[1].prompt_file: agent step "draft" has both prompt and prompt_file; keep one`}},
		{"empty parallel", func(w *Workflow) {
			w.Steps = append(w.Steps, Step{Name: "p", Type: StepParallel, Parallel: &ParallelStep{}})
		}, []string{`steps[2].steps: parallel step "p" needs at least one step in steps`}},
		{"workflow without path", func(w *Workflow) {
			w.Steps = append(w.Steps, Step{Name: "sub", Type: StepWorkflow, Workflow: &WorkflowStep{}})
		}, []string{`steps[2].workflow: workflow step "sub" needs workflow: the path of the workflow file to run`}},
		{"no type", func(w *Workflow) { w.Steps[0].Type = "" }, []string{
			`steps[0].type: step "build" has no type; expected one of shell, tool, agent, parallel, workflow`}},
		{"unknown type", func(w *Workflow) { w.Steps[0].Type = "shel" }, []string{
			`steps[0].type: unknown step type "shel"; expected one of shell, tool, agent, parallel, workflow (did you mean "shell"?)`}},
		{"retry", func(w *Workflow) {
			w.Steps[0].Retry = &Retry{MaxAttempts: 0, Backoff: "lineer", Initial: 2 * time.Second, Max: time.Second}
		}, []string{
			"steps[0].retry.max_attempts: retry.max_attempts must be at least 1 (the first attempt counts), got 0",
			`steps[0].retry.backoff: unknown backoff "lineer"; expected one of constant, linear, exponential (did you mean "linear"?)`,
			"steps[0].retry.max: retry.max (1s) is less than retry.initial (2s)",
		}},
		{"output_var shadows step", func(w *Workflow) { w.Steps[0].OutputVar = "draft" }, []string{
			`steps[0].output_var: output_var "draft" is also the name of a step (at line 5); choose another name`}},
		{"output_var shadows step without position", func(w *Workflow) {
			w.Steps = append(w.Steps, shell("x"))
			w.Steps[0].OutputVar = "x"
		}, []string{`steps[0].output_var: output_var "x" is also the name of a step; choose another name`}},
		{"duplicate output_var", func(w *Workflow) {
			w.Steps[0].OutputVar = "out"
			w.Steps[1].OutputVar = "out"
			w.Steps[1].Fields = map[string]Pos{"output_var": {Line: 9}}
			w.Steps[0].Fields = map[string]Pos{"output_var": {Line: 4}}
		}, []string{`steps[1].output_var: duplicate output_var "out" (first at line 4)`}},
		{"continue_from earlier agent", func(w *Workflow) { w.Steps = append(w.Steps, agent("more", "draft")) }, nil},
		{"continue_from misspelt", func(w *Workflow) { w.Steps = append(w.Steps, agent("more", "draf")) }, []string{
			`steps[2].continue_from: continue_from: no earlier agent step is named "draf" (did you mean "draft"?)`}},
		{"continue_from later step", func(w *Workflow) {
			w.Steps = append(w.Steps, agent("first", "second"), agent("second", ""))
		}, []string{`steps[2].continue_from: continue_from: step "second" does not finish before this step starts; it must name an earlier agent step`}},
		{"continue_from shell", func(w *Workflow) { w.Steps = append(w.Steps, agent("more", "build")) }, []string{
			`steps[2].continue_from: continue_from: step "build" is a shell step, not an agent step`}},
		{"continue_from itself", func(w *Workflow) { w.Steps = append(w.Steps, agent("more", "more")) }, []string{
			"steps[2].continue_from: continue_from names the step itself; it must name an earlier agent step"}},
		{"continue_from parallel sibling", func(w *Workflow) {
			w.Steps = append(w.Steps, Step{Name: "p", Type: StepParallel, Parallel: &ParallelStep{Steps: []Step{agent("x", ""), agent("y", "x")}}})
		}, []string{`steps[2].steps[1].continue_from: continue_from: step "x" does not finish before this step starts; it must name an earlier agent step`}},
		{"continue_from agent inside earlier parallel", func(w *Workflow) {
			w.Steps = append(w.Steps, Step{Name: "p", Type: StepParallel, Parallel: &ParallelStep{Steps: []Step{agent("x", "draft")}}}, agent("z", "x"))
		}, nil},
		{"agent enums", func(w *Workflow) {
			a := w.Steps[1].Agent
			a.OutputFormat, a.Mode = "yaml", "chat"
			a.Conversation = &ConversationOptions{Strategy: "summarise"}
			a.ToolOptions = ToolOptions{ToolFormat: "jsn", OnMaxCalls: "halt"}
			a.OutputSchema = map[string]any{"type": "object"}
		}, []string{
			`steps[1].output_format: unknown output_format "yaml"; expected one of text, json`,
			"warning steps[1].output_schema: output_schema is used only with output_format: json",
			`steps[1].mode: unknown mode "chat"; expected conversation`,
			`steps[1].conversation.strategy: unknown conversation strategy "summarise"; expected one of sliding_window, truncate_middle, summarize (did you mean "summarize"?)`,
			"warning steps[1].conversation: conversation options are used only with mode: conversation",
			`steps[1].tool_options.tool_format: unknown tool_format "jsn"; expected one of auto, json, xml (did you mean "json"?)`,
			`steps[1].tool_options.on_max_calls: unknown on_max_calls "halt"; expected one of fail, stop`,
		}},
		{"agent tools listed twice", func(w *Workflow) { w.Steps[1].Agent.Tools = []string{"read_file", "read_file"} }, []string{
			`steps[1].tools[1]: tool "read_file" is listed twice`}},
		{"tools", func(w *Workflow) {
			w.Tools = []ToolSpec{
				{Name: "t", Builtin: true, Approval: "autto", Pos: Pos{Line: 10}},
				{Name: "t", Command: "echo", Use: "x/y@1", Pos: Pos{Line: 12}},
				{Name: "bad name!", Parameters: []Param{{Name: "p"}}},
			}
		}, []string{
			`tools[0].approval: tool "t" has unknown approval "autto"; expected one of auto, prompt, deny (did you mean "auto"?)`,
			`tools[1].name: duplicate tool "t" (first defined at line 10)`,
			`tools[1].use: tool "t" sets command and use; a tool is a built-in, a command or a library tool, only one`,
			`tools[2].name: tool name "bad name!" may hold only letters, digits, - and _ (at most 64)`,
			`tools[2].parameters: tool "bad name!" has parameters but no command to use them`,
		}},
		{"tool parameters", func(w *Workflow) {
			w.Tools = []ToolSpec{{Name: "t", Command: "echo {{args.n}}", Parameters: []Param{
				{Name: "n", Type: TypeInteger, Default: "x"}, {Name: "n", Type: "int"}, {},
			}}}
		}, []string{
			`tools[0].parameters[0].default: default of parameter "n": "x" is not an integer`,
			`tools[0].parameters[1].name: tool "t": duplicate parameter "n"`,
			`tools[0].parameters[1].type: parameter "n" has unknown type "int"; expected one of string, integer, number, boolean, array, object`,
			`tools[0].parameters[2].name: parameter of tool "t" has no name`,
		}},
		{"inputs", func(w *Workflow) {
			w.Inputs = []Input{
				{Name: "count", Type: TypeInteger, Default: "many", HasDefault: true, Pos: Pos{Line: 2}},
				{Name: "count", Type: "integr"},
				{Name: "1st"},
				{Name: "level", Enum: []any{"low", "high"}, Default: "mid", HasDefault: true},
				{Name: "re", Pattern: "("},
				{Name: "n", Type: TypeNumber, Min: f(5), Max: f(1)},
				{Name: "path", Type: TypeInteger, FileExists: true, DirExists: true},
				{Name: "flags", Type: TypeBoolean, Enum: []any{"maybe"}},
			}
		}, []string{
			`inputs[0].default: default of input "count": "many" is not an integer`,
			`inputs[1].name: duplicate input "count" (first declared at line 2)`,
			`inputs[1].type: input "count" has unknown type "integr"; expected one of string, integer, number, boolean, array, object (did you mean "integer"?)`,
			`inputs[2].name: input name "1st" may hold only letters, digits and _, and must not start with a digit`,
			`inputs[3].default: default of input "level": "mid" is not one of "low", "high"`,
			"inputs[4].pattern: input \"re\": pattern \"(\" does not compile: error parsing regexp: missing closing ): `(`",
			`inputs[5].min: input "n": min 5 is more than max 1`,
			`inputs[6].dir_exists: input "path": file_exists and dir_exists exclude each other`,
			`inputs[6].type: input "path": file_exists and dir_exists apply to string inputs, not integer`,
			`inputs[7].enum: input "flags": enum value "maybe" is not a boolean (use true or false)`,
		}},
		{"providers and mcp", func(w *Workflow) {
			w.Providers = map[string]ProviderConfig{"claude": {}, "local": {Type: "olama"}, "x": {}}
			w.MCPServers = map[string]MCPServer{"a": {}, "b": {Command: "c", URL: "http://u"}}
		}, []string{
			`providers.local.type: provider "local" has unknown type "olama"; expected one of openai, anthropic, claude, ollama, cli, replay (did you mean "ollama"?)`,
			`providers.x.type: provider "x" has no type; expected one of openai, anthropic, claude, ollama, cli, replay`,
			`mcp_servers.a: MCP server "a" needs a command or a url`,
			`mcp_servers.b.url: MCP server "b" has both a command and a url; keep one`,
		}},
		{"sandbox and approval", func(w *Workflow) {
			w.Sandbox = &Policy{Network: "open", Enforce: "strickt", Backend: "vm", Image: "alpine", Limits: Limits{PIDs: -1}}
			w.Approval = &ApprovalPolicy{Default: "ask", Rules: []ApprovalRule{{Tool: "shell"}, {Decision: "deny"}}}
		}, []string{
			`sandbox.network: unknown network "open"; expected one of none, allowlist, host`,
			`sandbox.enforce: unknown enforce "strickt"; expected one of best_effort, strict (did you mean "strict"?)`,
			`sandbox.backend: unknown backend "vm"; expected one of process, container`,
			"warning sandbox.image: image is used only with backend: container",
			"sandbox.limits: sandbox limits must not be negative",
			`approval.default: unknown approval default "ask"; expected one of auto, prompt, deny`,
			"approval.rules[0].decision: approval rule has no decision; expected one of auto, prompt, deny",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := base()
			tc.change(w)
			if diff := cmp.Diff(tc.want, render(w.Validate())); diff != "" {
				t.Errorf("Validate() problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestValidatePositions checks that problems point at the field when the step knows it.
func TestValidatePositions(t *testing.T) {
	w := base()
	w.Steps[0].Type = "shel"
	w.Steps[0].Fields = map[string]Pos{"type": {File: "wf.yaml", Line: 4, Col: 11}}
	probs := w.Validate()
	if len(probs) != 1 || probs[0].Pos != (Pos{File: "wf.yaml", Line: 4, Col: 11}) {
		t.Errorf("Validate() = %v, want one problem at wf.yaml:4:11", probs)
	}
}

func TestValidateManySteps(t *testing.T) {
	w := base()
	for i := range 200 {
		w.Steps = append(w.Steps, shell(fmt.Sprintf("s%d", i)))
	}
	if probs := w.Validate(); len(probs) != 0 {
		t.Errorf("Validate() = %v, want none", probs)
	}
}

func TestNameForms(t *testing.T) {
	tests := []struct {
		form nameForm
		in   string
		want bool
	}{
		{workflowName, "build-and-test_2", true},
		{workflowName, "Build", false},
		{workflowName, "", false},
		{stepName, "Step_1-a", true},
		{stepName, "1st", true},
		{stepName, "a.b", false},
		{inputName, "project_path", true},
		{inputName, "9x", false},
		{inputName, "a-b", false},
		{toolName, strings.Repeat("a", 64), true},
		{toolName, strings.Repeat("a", 65), false},
		{toolName, "read_file", true},
		{toolName, "héllo", false},
	}
	for _, tc := range tests {
		if got := tc.form.MatchString(tc.in); got != tc.want {
			t.Errorf("%+v.MatchString(%q) = %v, want %v", tc.form, tc.in, got, tc.want)
		}
	}
}
