// Package plan is the use case behind `awf run --dry-run`: what a workflow would do with the
// given inputs, with every template resolved that can be resolved before anything runs.
// Templates that need a step's results are shown as written. Agent steps also show the
// provider and model they resolve to and the schemas of their tools, through ports only: no
// model is called and no tool runs.
package plan

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// Plan is a workflow's dry run.
type Plan struct {
	Workflow string         `json:"workflow"`
	File     string         `json:"file"`
	Inputs   map[string]any `json:"inputs"`
	// MissingInputs are required inputs the dry run was not given: the plan shows a
	// placeholder for each, and a real run would ask for them or stop.
	MissingInputs []string `json:"missing_inputs,omitempty"`
	Steps         []Step   `json:"steps"`
	Output        *Field   `json:"output,omitempty"`
}

// Step is one step of the plan. An agent step's prompts are in Agent, not in Fields.
type Step struct {
	Name   string  `json:"name"`
	Type   string  `json:"type"`
	Fields []Field `json:"fields,omitempty"`
	Agent  *Agent  `json:"agent,omitempty"`
	Steps  []Step  `json:"steps,omitempty"`
}

// Field is one template of a step: its text and, when it could be resolved, its value.
type Field struct {
	Name     string `json:"name"`
	Template string `json:"template"`
	Value    string `json:"value,omitempty"`
	Resolved bool   `json:"resolved"`
	Reason   string `json:"reason,omitempty"`
}

// Build resolves what it can of wf with inputs. environ is the process environment. Agent
// steps show their provider and model as written and their tools by name; BuildWith
// describes them as a run would start them.
func Build(t ports.Templater, wf *workflow.Workflow, inputs map[string]any, environ []string) Plan {
	return BuildWith(context.Background(), t, wf, inputs, environ, Agents{})
}

// BuildWith is Build with what a describes of agent steps: the provider and model each
// resolves to, and its tools' schemas. A provider or tool that cannot be resolved is shown
// with the reason, not returned as an error: the plan shows where the run would fail.
func BuildWith(ctx context.Context, t ports.Templater, wf *workflow.Workflow, inputs map[string]any, environ []string, a Agents) Plan {
	scope := BaseScope(wf, inputs, "dry-run", wf.Dir, environ)
	fields := map[*workflow.Step][]Field{}
	prompts := map[*workflow.Step][]Field{}
	var output *Field
	for _, ref := range wf.Templates() {
		f := resolve(t, ref, scope)
		switch {
		case ref.Step != nil && ref.Step.Agent != nil && isPromptField(f.Name):
			prompts[ref.Step] = append(prompts[ref.Step], f)
		case ref.Step != nil:
			fields[ref.Step] = append(fields[ref.Step], f)
		case ref.Field == "output":
			output = &f
		}
	}
	b := &builder{fields: fields, prompts: prompts, d: &describer{ctx: ctx, t: t, wf: wf, scope: scope, a: a}}
	return Plan{Workflow: wf.Name, File: wf.Path, Inputs: inputs, Steps: b.steps(wf.Steps), Output: output}
}

// builder turns a workflow's steps into plan steps.
type builder struct {
	fields, prompts map[*workflow.Step][]Field
	d               *describer
}

func (b *builder) steps(list []workflow.Step) []Step {
	out := make([]Step, 0, len(list))
	for i := range list {
		s := &list[i]
		p := Step{Name: s.Name, Type: string(s.Type), Fields: b.fields[s]}
		if s.Agent != nil {
			p.Agent = b.d.agent(s, b.prompts[s])
		}
		if s.Parallel != nil {
			p.Steps = b.steps(s.Parallel.Steps)
		}
		out = append(out, p)
	}
	return out
}

func resolve(t ports.Templater, ref workflow.TemplateRef, scope ports.Scope) Field {
	f := Field{Name: shortField(ref.Field), Template: ref.Text}
	if ref.Kind == workflow.TemplateExpr {
		f.Reason = "evaluated at run time"
		return f
	}
	v, err := t.Render(ref.Text, scope)
	if err != nil {
		f.Reason = "resolved at run time: " + err.Error()
		return f
	}
	f.Value, f.Resolved = v, true
	return f
}

// shortField turns "steps[1].steps[0].command" into "command".
func shortField(field string) string {
	if i := strings.LastIndex(field, "]."); i >= 0 {
		return field[i+2:]
	}
	return field
}

// BaseScope is the template scope before any step has run: inputs, env, workflow and run.
func BaseScope(wf *workflow.Workflow, inputs map[string]any, runID, runDir string, environ []string) ports.Scope {
	env := make(map[string]any, len(environ))
	for _, kv := range environ {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return ports.Scope{
		"inputs": inputs,
		"states": map[string]any{},
		"env":    env,
		"workflow": map[string]any{
			"name": wf.Name, "version": wf.Version, "description": wf.Description, "dir": wf.Dir,
		},
		"run": map[string]any{"id": runID, "dir": runDir},
	}
}

// Write prints the plan for people.
func Write(w io.Writer, p Plan) error {
	fmt.Fprintf(w, "workflow %s (%s)\n", p.Workflow, p.File)
	if len(p.Inputs) > 0 {
		fmt.Fprintln(w, "inputs:")
		for _, k := range sortedKeys(p.Inputs) {
			fmt.Fprintf(w, "  %s = %v\n", k, p.Inputs[k])
		}
	}
	if len(p.MissingInputs) > 0 {
		fmt.Fprintf(w, "missing required inputs: %s (shown as <missing input NAME>; a real run needs --input NAME=...)\n",
			strings.Join(p.MissingInputs, ", "))
	}
	fmt.Fprintln(w, "steps:")
	writeSteps(w, p.Steps, "  ")
	if p.Output != nil {
		writeField(w, *p.Output, "")
	}
	_, err := fmt.Fprintln(w, "dry run: nothing was executed")
	return err
}

func writeSteps(w io.Writer, list []Step, indent string) {
	for i, s := range list {
		fmt.Fprintf(w, "%s%d. %s (%s)\n", indent, i+1, s.Name, s.Type)
		if s.Agent != nil {
			writeAgent(w, s.Agent, indent+"   ")
		}
		for _, f := range s.Fields {
			writeField(w, f, indent+"   ")
		}
		writeSteps(w, s.Steps, indent+"   ")
	}
}

func writeField(w io.Writer, f Field, indent string) {
	if f.Resolved {
		fmt.Fprintf(w, "%s%s: %s\n", indent, f.Name, indentLines(f.Value, indent+"  "))
		return
	}
	fmt.Fprintf(w, "%s%s: %s  [%s]\n", indent, f.Name, indentLines(f.Template, indent+"  "), f.Reason)
}

func indentLines(s, indent string) string {
	s = strings.TrimRight(s, "\n")
	if !strings.Contains(s, "\n") {
		return s
	}
	return "|\n" + indent + strings.ReplaceAll(s, "\n", "\n"+indent)
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
