package plan

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/awf-dev/awf/internal/bom"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// Agent is what an agent step would send its model: the provider and model it resolves to,
// its prompts with the templates resolved that can be, and the schemas of its tools, as the
// model would be told them.
type Agent struct {
	Provider string `json:"provider"`
	Model    string `json:"model,omitempty"`
	// ProviderError says why the provider could not be resolved (an unknown name, a missing
	// API key): the run would fail there. Provider and Model are then as the step wrote them.
	ProviderError string `json:"provider_error,omitempty"`
	// Handoff names the agent CLI that would call the step's tools itself through `awf mcp
	// serve` (ports.ResolvedProvider.Handoff).
	Handoff string `json:"handoff,omitempty"`
	// ContinueFrom is the step whose conversation this one continues; the prompt is added to
	// it.
	ContinueFrom string `json:"continue_from,omitempty"`
	SystemPrompt *Field `json:"system_prompt,omitempty"`
	Prompt       *Field `json:"prompt,omitempty"`
	// Tools are the schemas the model would get, in the step's order. When the tools could
	// not be described, ToolsError says why and Tools is empty.
	Tools []ports.ToolSchema `json:"tools,omitempty"`
	// ToolNames are the step's tools when their schemas are not described (no catalog, or
	// ToolsError).
	ToolNames  []string `json:"tool_names,omitempty"`
	ToolsError string   `json:"tools_error,omitempty"`
}

// Agents is what BuildWith needs to describe agent steps as a run would start them. Every
// field may be left out: agent steps then show their provider and model as written and their
// tools by name.
type Agents struct {
	// Providers resolves each step's provider and model (with --provider, --model, --replay
	// applied). It must not call a model.
	Providers ports.ProviderSource
	// Tools describes the tools; the run's tool registry implements it.
	Tools ports.ToolCatalog
	// WorkDir is the run's working directory, which tool descriptions may mention.
	WorkDir string
	// ReadFile reads prompt_file; nil means os.ReadFile.
	ReadFile func(path string) ([]byte, error)
}

// HasAgents reports whether wf has an agent step, at any depth: only then is it worth
// building what Agents holds.
func HasAgents(wf *workflow.Workflow) bool {
	var walk func([]workflow.Step) bool
	walk = func(list []workflow.Step) bool {
		return slices.ContainsFunc(list, func(s workflow.Step) bool {
			return s.Agent != nil || s.Parallel != nil && walk(s.Parallel.Steps)
		})
	}
	return walk(wf.Steps)
}

// isPromptField reports whether a template field of an agent step belongs in its Agent
// section rather than among its fields.
func isPromptField(name string) bool {
	return name == "prompt" || name == "system_prompt" || name == "prompt_file"
}

// describer describes the agent steps of one plan.
type describer struct {
	ctx   context.Context
	t     ports.Templater
	wf    *workflow.Workflow
	scope ports.Scope
	a     Agents
}

// agent describes one agent step; prompts are the step's prompt fields, already resolved.
func (d *describer) agent(s *workflow.Step, prompts []Field) *Agent {
	a := s.Agent
	model, _ := a.Options["model"].(string)
	out := &Agent{Provider: a.Provider, Model: model, ContinueFrom: a.ContinueFrom, ToolNames: a.Tools}
	for i := range prompts {
		f := &prompts[i]
		switch f.Name {
		case "system_prompt":
			out.SystemPrompt = f
		case "prompt":
			out.Prompt = f
		case "prompt_file":
			out.Prompt = d.promptFile(*f)
		}
	}
	d.provider(s, model, out)
	d.tools(s, out)
	return out
}

// provider resolves the step's provider as the agent loop would, without calling the model.
func (d *describer) provider(s *workflow.Step, model string, out *Agent) {
	if d.a.Providers == nil {
		return
	}
	rp, err := d.a.Providers.Provider(d.ctx, ports.ProviderRef{
		Workflow: d.wf, Step: s.Name, Name: s.Agent.Provider, Model: model,
		ToolFormat: s.Agent.ToolOptions.ToolFormat, Tools: s.Agent.Tools,
	})
	if err != nil {
		out.ProviderError = err.Error()
		return
	}
	if rp.Name != "" {
		out.Provider = rp.Name
	}
	out.Model, out.Handoff = rp.Model, rp.Handoff
}

// tools describes the step's tools with the schemas the model would get.
func (d *describer) tools(s *workflow.Step, out *Agent) {
	names := s.Agent.Tools
	if len(names) == 0 || d.a.Tools == nil {
		return
	}
	infos, err := d.a.Tools.Describe(d.ctx, ports.ToolQuery{Step: s.Name, Names: names, WorkDir: d.a.WorkDir})
	if err != nil {
		out.ToolsError = err.Error()
		return
	}
	if len(infos) != len(names) {
		out.ToolsError = fmt.Sprintf("the catalog described %d tools for %d names", len(infos), len(names))
		return
	}
	out.Tools = make([]ports.ToolSchema, len(infos))
	for i, info := range infos {
		info.Schema.Name = names[i]
		out.Tools[i] = info.Schema
	}
	out.ToolNames = nil
}

// promptFile reads and resolves prompt_file, whose path f holds, as the agent loop does:
// relative to the workflow's directory. The field keeps the path in its name.
func (d *describer) promptFile(f Field) *Field {
	p := &Field{Name: "prompt_file " + f.Template, Template: f.Template, Reason: f.Reason}
	if !f.Resolved {
		return p
	}
	path := f.Value
	p.Name = "prompt_file " + path
	if !filepath.IsAbs(path) && d.wf.Dir != "" {
		path = filepath.Join(d.wf.Dir, path)
	}
	read := d.a.ReadFile
	if read == nil {
		read = os.ReadFile
	}
	data, err := read(path)
	if err == nil {
		data, err = bom.Strip(data) // as the agent step reads it
	}
	if err != nil {
		p.Reason = "not read: " + err.Error()
		return p
	}
	p.Template = string(data)
	v, err := d.t.Render(p.Template, d.scope)
	if err != nil {
		p.Reason = "resolved at run time: " + err.Error()
		return p
	}
	p.Value, p.Resolved, p.Reason = v, true, ""
	return p
}

// writeAgent prints an agent step's section.
func writeAgent(w io.Writer, a *Agent, indent string) {
	line := "provider: " + a.Provider
	if a.Provider == "" {
		line = "provider: (the configured default)"
	}
	if a.Model != "" {
		line += ", model: " + a.Model
	}
	if a.ProviderError != "" {
		line += "  [not resolved: " + a.ProviderError + "]"
	}
	fmt.Fprintf(w, "%s%s\n", indent, line)
	if a.Handoff != "" {
		fmt.Fprintf(w, "%sthe %s CLI calls the tools itself, through awf mcp serve (governed and audited)\n", indent, a.Handoff)
	}
	if a.ContinueFrom != "" {
		fmt.Fprintf(w, "%scontinues the conversation of %s\n", indent, a.ContinueFrom)
	}
	if a.SystemPrompt != nil {
		writeField(w, *a.SystemPrompt, indent)
	}
	if a.Prompt != nil {
		writeField(w, *a.Prompt, indent)
	}
	switch {
	case a.ToolsError != "":
		fmt.Fprintf(w, "%stools: %v  [not described: %s]\n", indent, a.ToolNames, a.ToolsError)
	case len(a.Tools) > 0:
		fmt.Fprintf(w, "%stools:\n", indent)
		for _, t := range a.Tools {
			writeTool(w, t, indent+"  ")
		}
	case len(a.ToolNames) > 0:
		fmt.Fprintf(w, "%stools: %v\n", indent, a.ToolNames)
	}
}

// writeTool prints one tool schema: its name, description and parameters as compact JSON.
func writeTool(w io.Writer, t ports.ToolSchema, indent string) {
	fmt.Fprintf(w, "%s- %s: %s\n", indent, t.Name, indentLines(t.Description, indent+"    "))
	params := []byte(t.Parameters)
	var buf bytes.Buffer
	if json.Compact(&buf, params) == nil {
		params = buf.Bytes()
	}
	if len(params) == 0 {
		params = []byte("(none)")
	}
	fmt.Fprintf(w, "%s  parameters: %s\n", indent, params)
}
