package workflow

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestTemplates(t *testing.T) {
	p := func(line int) Pos { return Pos{File: "wf.yaml", Line: line, Col: 3} }
	wf := &Workflow{
		Name: "demo",
		Steps: []Step{
			{Name: "setup", Type: StepShell, OutputVar: "prep", When: "inputs.go",
				Shell:  &ShellStep{Command: "make {{inputs.target}}", Dir: "{{inputs.dir}}", Env: map[string]string{"B": "b", "A": "{{inputs.a}}"}},
				Fields: map[string]Pos{"when": p(2), "command": p(3), "dir": p(4), "env": p(5)}},
			{Name: "par", Type: StepParallel, Parallel: &ParallelStep{Steps: []Step{
				{Name: "c1", Type: StepTool, Tool: &ToolStep{Tool: "t", Input: "{{states.setup.output}}", Args: map[string]string{"x": "1"}}},
				{Name: "c2", Type: StepWorkflow, Workflow: &WorkflowStep{Path: "sub.yaml", Inputs: map[string]string{"k": "v"}}},
			}}},
			{Name: "ask", Type: StepAgent, Agent: &AgentStep{Prompt: "p", SystemPrompt: "s", PromptFile: "f",
				Conversation: &ConversationOptions{StopCondition: "turn > 2"}}, Pos: p(20)},
		},
		Tools: []ToolSpec{{Name: "grep", Command: "grep {{args.p}}", Pos: p(30),
			Restrictions: &Restrictions{Paths: []string{"a/**"}, Commands: []string{"grep"}, Hosts: []string{"h"}}}},
		Sandbox:  &Policy{Paths: PathPolicy{Read: []string{"r"}, Write: []string{"w"}, Protect: []string{"x"}}, Hosts: []string{"example.com"}, Pos: p(40)},
		Approval: &ApprovalPolicy{Rules: []ApprovalRule{{When: "tool == 'shell'", Pos: p(50)}, {Decision: "auto"}}},
		Output:   "{{states.ask.output}}", OutputPos: p(60),
	}
	type row struct {
		Field      string
		Kind       TemplateKind
		Pos        int
		Step       string
		Visible    []string
		Tool       string
		Namespaces []string
	}
	var got []row
	for _, r := range wf.Templates() {
		x := row{Field: r.Field, Kind: r.Kind, Pos: r.Pos.Line, Visible: r.Visible, Namespaces: r.Namespaces}
		if r.Step != nil {
			x.Step = r.Step.Name
		}
		if r.Tool != nil {
			x.Tool = r.Tool.Name
		}
		got = append(got, x)
	}
	base := BaseNamespaces
	early := []string{"setup", "prep"}
	all := []string{"setup", "prep", "par", "c1", "c2", "ask"}
	want := []row{
		{"steps[0].when", TemplateExpr, 2, "setup", nil, "", base},
		{"steps[0].command", TemplateCommand, 3, "setup", nil, "", base},
		{"steps[0].dir", TemplateText, 4, "setup", nil, "", base},
		{"steps[0].env.A", TemplateText, 5, "setup", nil, "", base},
		{"steps[0].env.B", TemplateText, 5, "setup", nil, "", base},
		{"steps[1].steps[0].input", TemplateText, 0, "c1", early, "", base},
		{"steps[1].steps[0].args.x", TemplateText, 0, "c1", early, "", base},
		{"steps[1].steps[1].workflow", TemplateText, 0, "c2", early, "", base},
		{"steps[1].steps[1].inputs.k", TemplateText, 0, "c2", early, "", base},
		{"steps[2].prompt", TemplateText, 20, "ask", []string{"setup", "prep", "par", "c1", "c2"}, "", base},
		{"steps[2].system_prompt", TemplateText, 20, "ask", []string{"setup", "prep", "par", "c1", "c2"}, "", base},
		{"steps[2].prompt_file", TemplateText, 20, "ask", []string{"setup", "prep", "par", "c1", "c2"}, "", base},
		{"steps[2].conversation.stop_condition", TemplateExpr, 20, "ask", []string{"setup", "prep", "par", "c1", "c2"}, "",
			[]string{"inputs", "states", "env", "workflow", "run", "response", "turn", "tokens"}},
		{"tools[0].command", TemplateCommand, 30, "", nil, "grep", []string{"inputs", "states", "env", "workflow", "run", "args"}},
		{"tools[0].restrictions.paths[0]", TemplateText, 30, "", nil, "grep", base},
		{"tools[0].restrictions.commands[0]", TemplateText, 30, "", nil, "grep", base},
		{"tools[0].restrictions.hosts[0]", TemplateText, 30, "", nil, "grep", base},
		{"sandbox.paths.read[0]", TemplateText, 40, "", nil, "", base},
		{"sandbox.paths.write[0]", TemplateText, 40, "", nil, "", base},
		{"sandbox.paths.protect[0]", TemplateText, 40, "", nil, "", base},
		{"sandbox.hosts[0]", TemplateText, 40, "", nil, "", base},
		{"approval.rules[0].when", TemplateExpr, 50, "", nil, "", []string{"inputs", "states", "env", "workflow", "run", "args", "tool"}},
		{"output", TemplateText, 60, "", all, "", base},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Templates() mismatch (-want +got):\n%s", diff)
	}
}

func TestTemplatesPointAtTheModel(t *testing.T) {
	wf := &Workflow{Steps: []Step{{Name: "a", Type: StepShell, Shell: &ShellStep{Command: "x"}}}}
	refs := wf.Templates()
	if len(refs) != 1 || refs[0].Step != &wf.Steps[0] {
		t.Fatalf("Templates() = %+v, want one ref pointing at wf.Steps[0]", refs)
	}
	if got := TemplateCommand.String(); got != "command" {
		t.Errorf("TemplateCommand.String() = %q, want command", got)
	}
}

// TestCanReadAgreesWithVisible checks the shared index against a scan of Visible for every ref
// and every name of a workflow with output_var names, a parallel block and a repeated name.
func TestCanReadAgreesWithVisible(t *testing.T) {
	shellStep := func(name, outputVar string) Step {
		return Step{Name: name, Type: StepShell, OutputVar: outputVar, Shell: &ShellStep{Command: "echo {{inputs.x}}"}}
	}
	wf := &Workflow{
		Steps: []Step{
			shellStep("a", "av"),
			{Name: "par", Type: StepParallel, Parallel: &ParallelStep{Steps: []Step{shellStep("p1", ""), shellStep("p2", "a")}}},
			shellStep("b", ""),
			shellStep("c", "b"),
		},
		Tools:  []ToolSpec{{Name: "t", Command: "echo {{args.x}}"}},
		Output: "{{states.c.output}}",
	}
	names := []string{"a", "av", "par", "p1", "p2", "b", "c", "nosuch", ""}
	refs := wf.Templates()
	if len(refs) != 7 {
		t.Fatalf("Templates() = %d refs, want 7", len(refs))
	}
	for _, r := range refs {
		for _, name := range names {
			if got, want := r.CanRead(name), slices.Contains(r.Visible, name); got != want {
				t.Errorf("%s: CanRead(%q) = %v, Visible %v", r.Field, name, got, r.Visible)
			}
		}
	}
	lone := TemplateRef{Visible: []string{"x"}} // built by hand: no index
	if !lone.CanRead("x") || lone.CanRead("y") {
		t.Errorf("CanRead without an index disagrees with Visible %v", lone.Visible)
	}
}
