package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/bom/bomtest"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/ports/portstest"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/templater"
)

// agentWorkflow has an agent step at the top and one inside a parallel step.
func agentWorkflow() *workflow.Workflow {
	return &workflow.Workflow{
		Name: "agents", Dir: "/wf",
		Steps: []workflow.Step{
			{Name: "first", Type: workflow.StepShell, Shell: &workflow.ShellStep{Command: "echo {{inputs.who}}"}},
			{Name: "ask", Type: workflow.StepAgent, Agent: &workflow.AgentStep{
				Provider: "claude", SystemPrompt: "You help {{inputs.who}}.",
				Prompt: "Read {{states.first.output}} for {{inputs.who}}.", Tools: []string{"read_file", "search"},
				Options:     map[string]any{"model": "big", "temperature": 0.1},
				ToolOptions: workflow.ToolOptions{ToolFormat: "xml"},
			}},
			{Name: "fan", Type: workflow.StepParallel, Parallel: &workflow.ParallelStep{Steps: []workflow.Step{
				{Name: "inner", Type: workflow.StepAgent, Agent: &workflow.AgentStep{
					PromptFile: "prompts/{{inputs.who}}.md", Mode: "conversation", ContinueFrom: "ask",
				}},
			}}},
		},
	}
}

var catalog = portstest.Catalog{
	"read_file": {Schema: ports.ToolSchema{Description: "Read a file.", Parameters: json.RawMessage(`{"type": "object", "properties": {"path": {"type": "string"}}}`)}},
	"search":    {Schema: ports.ToolSchema{Description: "Search.", Parameters: json.RawMessage(`{"type":"object"}`)}},
}

func readPrompt(files map[string]string) func(string) ([]byte, error) {
	return func(path string) ([]byte, error) {
		if s, ok := files[path]; ok {
			return []byte(s), nil
		}
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
}

func TestBuildWithDescribesAgentSteps(t *testing.T) {
	inputs := map[string]any{"who": "ada"}
	prompts := readPrompt(map[string]string{"/wf/prompts/ada.md": "Go on, {{inputs.who}}."})
	tests := []struct {
		name       string
		agents     Agents
		ask, inner *Agent
		wantRefs   []ports.ProviderRef
	}{
		{
			name:   "nothing to resolve with: as written",
			agents: Agents{ReadFile: prompts},
			ask: &Agent{Provider: "claude", Model: "big", ToolNames: []string{"read_file", "search"},
				SystemPrompt: &Field{Name: "system_prompt", Template: "You help {{inputs.who}}.", Value: "You help ada.", Resolved: true},
				Prompt: &Field{Name: "prompt", Template: "Read {{states.first.output}} for {{inputs.who}}.",
					Reason: `resolved at run time: states.first.output: no step "first" has run`}},
			inner: &Agent{ContinueFrom: "ask",
				Prompt: &Field{Name: "prompt_file prompts/ada.md", Template: "Go on, {{inputs.who}}.", Value: "Go on, ada.", Resolved: true}},
		},
		{
			name: "resolved provider and described tools",
			agents: Agents{ReadFile: prompts, Tools: catalog, WorkDir: "/work",
				Providers: &portstest.Providers{Name: "claude (replayed)", Model: "default-model"}},
			ask: &Agent{Provider: "claude (replayed)", Model: "big",
				SystemPrompt: &Field{Name: "system_prompt", Template: "You help {{inputs.who}}.", Value: "You help ada.", Resolved: true},
				Prompt: &Field{Name: "prompt", Template: "Read {{states.first.output}} for {{inputs.who}}.",
					Reason: `resolved at run time: states.first.output: no step "first" has run`},
				Tools: []ports.ToolSchema{
					{Name: "read_file", Description: "Read a file.", Parameters: json.RawMessage(`{"type": "object", "properties": {"path": {"type": "string"}}}`)},
					{Name: "search", Description: "Search.", Parameters: json.RawMessage(`{"type":"object"}`)},
				}},
			inner: &Agent{Provider: "claude (replayed)", Model: "default-model", ContinueFrom: "ask",
				Prompt: &Field{Name: "prompt_file prompts/ada.md", Template: "Go on, {{inputs.who}}.", Value: "Go on, ada.", Resolved: true}},
			wantRefs: []ports.ProviderRef{
				{Step: "ask", Name: "claude", Model: "big", ToolFormat: "xml", Tools: []string{"read_file", "search"}},
				{Step: "inner"},
			},
		},
		{
			name: "provider and tools that do not resolve are shown with the reason",
			agents: Agents{Tools: portstest.Catalog{"read_file": catalog["read_file"]}, ReadFile: readPrompt(nil),
				Providers: &portstest.Providers{Err: fault.New(fault.Usage, "anthropic: no API key: set ANTHROPIC_API_KEY")}},
			ask: &Agent{Provider: "claude", Model: "big", ProviderError: "anthropic: no API key: set ANTHROPIC_API_KEY",
				ToolNames: []string{"read_file", "search"}, ToolsError: `unknown tool "search"`,
				SystemPrompt: &Field{Name: "system_prompt", Template: "You help {{inputs.who}}.", Value: "You help ada.", Resolved: true},
				Prompt: &Field{Name: "prompt", Template: "Read {{states.first.output}} for {{inputs.who}}.",
					Reason: `resolved at run time: states.first.output: no step "first" has run`}},
			inner: &Agent{ContinueFrom: "ask", ProviderError: "anthropic: no API key: set ANTHROPIC_API_KEY",
				Prompt: &Field{Name: "prompt_file prompts/ada.md", Template: "prompts/{{inputs.who}}.md",
					Reason: "not read: open /wf/prompts/ada.md: file does not exist"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wf := agentWorkflow()
			p := BuildWith(t.Context(), templater.New(), wf, inputs, nil, tc.agents)
			if len(p.Steps) != 3 || len(p.Steps[2].Steps) != 1 {
				t.Fatalf("plan steps = %+v", p.Steps)
			}
			if p.Steps[0].Agent != nil {
				t.Errorf("shell step has an agent section: %+v", p.Steps[0].Agent)
			}
			if diff := cmp.Diff(tc.ask, p.Steps[1].Agent); diff != "" {
				t.Errorf("ask (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.inner, p.Steps[2].Steps[0].Agent); diff != "" {
				t.Errorf("inner (-want +got):\n%s", diff)
			}
			for _, f := range p.Steps[1].Fields {
				if isPromptField(f.Name) {
					t.Errorf("prompt field %q also listed among the fields", f.Name)
				}
			}
			if src, ok := tc.agents.Providers.(*portstest.Providers); ok && tc.wantRefs != nil {
				refs := src.Refs()
				for i := range refs {
					if refs[i].Workflow != wf {
						t.Errorf("ref %d: workflow %p, want the plan's %p", i, refs[i].Workflow, wf)
					}
					refs[i].Workflow = nil
				}
				if diff := cmp.Diff(tc.wantRefs, refs); diff != "" {
					t.Errorf("provider refs (-want +got):\n%s", diff)
				}
			}
		})
	}
}

// The plan shows a prompt file as the agent step sends it: without the byte order mark it was
// saved with; a UTF-16 one is not read, with what to do.
func TestBuildPromptFileByteOrderMark(t *testing.T) {
	bomtest.Test(t, []bomtest.Case{{Name: "prompt", Doc: "Go on, {{inputs.who}}."}}, func(t *testing.T, data []byte) (string, error) {
		read := readPrompt(map[string]string{"/wf/prompts/ada.md": string(data)})
		p := BuildWith(t.Context(), templater.New(), agentWorkflow(), map[string]any{"who": "ada"}, nil, Agents{ReadFile: read})
		f := p.Steps[2].Steps[0].Agent.Prompt
		if f.Reason != "" {
			return "", errors.New(f.Reason)
		}
		return f.Template + " -> " + f.Value, nil
	})
}

func TestBuildKeepsWorkingWithoutAgents(t *testing.T) {
	wf := &workflow.Workflow{Name: "plain", Steps: []workflow.Step{
		{Name: "hi", Type: workflow.StepShell, Shell: &workflow.ShellStep{Command: "echo {{inputs.who}}"}},
	}}
	p := Build(templater.New(), wf, map[string]any{"who": "bob"}, nil)
	want := []Step{{Name: "hi", Type: "shell", Fields: []Field{{Name: "command", Template: "echo {{inputs.who}}", Value: "echo bob", Resolved: true}}}}
	if diff := cmp.Diff(want, p.Steps); diff != "" {
		t.Errorf("steps (-want +got):\n%s", diff)
	}
}

func TestHasAgents(t *testing.T) {
	shell := workflow.Step{Name: "s", Type: workflow.StepShell, Shell: &workflow.ShellStep{Command: "true"}}
	agent := workflow.Step{Name: "a", Type: workflow.StepAgent, Agent: &workflow.AgentStep{Prompt: "hi"}}
	nested := workflow.Step{Name: "p", Type: workflow.StepParallel, Parallel: &workflow.ParallelStep{Steps: []workflow.Step{shell, agent}}}
	tests := []struct {
		name  string
		steps []workflow.Step
		want  bool
	}{
		{"none", []workflow.Step{shell}, false},
		{"top level", []workflow.Step{shell, agent}, true},
		{"inside parallel", []workflow.Step{nested}, true},
		{"empty", nil, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := HasAgents(&workflow.Workflow{Steps: tc.steps}); got != tc.want {
				t.Errorf("HasAgents(%s) = %v, want %v", tc.name, got, tc.want)
			}
		})
	}
}

func TestWriteShowsAgentSections(t *testing.T) {
	p := BuildWith(context.Background(), templater.New(), agentWorkflow(), map[string]any{"who": "ada"}, nil, Agents{
		Tools: catalog, ReadFile: readPrompt(map[string]string{"/wf/prompts/ada.md": "Go on."}),
		Providers: &portstest.Providers{Name: "local", Model: "qwen"},
	})
	var out bytes.Buffer
	if err := Write(&out, p); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"2. ask (agent)\n     provider: local, model: big\n     system_prompt: You help ada.\n",
		"     prompt: Read {{states.first.output}} for {{inputs.who}}.  [resolved at run time:",
		"     tools:\n       - read_file: Read a file.\n         parameters: {\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\"}}}\n",
		"       - search: Search.\n",
		"1. inner (agent)\n        provider: local, model: qwen\n        continues the conversation of ask\n        prompt_file prompts/ada.md: Go on.\n",
		"dry run: nothing was executed",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("plan lacks %q:\n%s", want, text)
		}
	}

	p = BuildWith(context.Background(), templater.New(), agentWorkflow(), map[string]any{"who": "ada"}, nil, Agents{
		Providers: &portstest.Providers{Name: "claude-code", Handoff: "claude"},
	})
	out.Reset()
	if err := Write(&out, p); err != nil {
		t.Fatal(err)
	}
	if want := "provider: claude-code, model: big\n     the claude CLI calls the tools itself, through awf mcp serve (governed and audited)\n"; !strings.Contains(out.String(), want) {
		t.Errorf("plan lacks %q:\n%s", want, out.String())
	}

	p = BuildWith(context.Background(), templater.New(), agentWorkflow(), map[string]any{"who": "ada"}, nil, Agents{
		Providers: &portstest.Providers{Err: errors.New("no API key: set X_KEY")},
	})
	out.Reset()
	if err := Write(&out, p); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"provider: claude, model: big  [not resolved: no API key: set X_KEY]\n",
		"tools: [read_file search]\n",
		"provider: (the configured default)  [not resolved: no API key: set X_KEY]\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("plan lacks %q:\n%s", want, out.String())
		}
	}
}
