package loader

import (
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/awf-dev/awf/internal/domain/workflow"
)

// commonStepKeys are accepted by every step type.
var commonStepKeys = []string{
	"name", "type", "when", "timeout", "retry", "continue_on_error", "output_var",
}

// stepKeys are the keys each step type adds to the common ones.
var stepKeys = map[workflow.StepType][]string{
	workflow.StepShell: {"command", "dir", "env"},
	workflow.StepTool:  {"tool", "input", "args", "provider"},
	workflow.StepAgent: {
		"provider", "prompt", "prompt_file", "system_prompt", "tools", "options", "tool_options",
		"output_format", "output_schema", "mode", "conversation", "continue_from",
	},
	workflow.StepParallel: {"steps", "max_concurrency", "fail_fast"},
	workflow.StepWorkflow: {"workflow", "inputs"},
}

// typeMarkers are the keys that reveal a step's type when type: is missing.
var typeMarkers = []struct {
	key string
	typ workflow.StepType
}{
	{"command", workflow.StepShell},
	{"tool", workflow.StepTool},
	{"prompt", workflow.StepAgent},
	{"prompt_file", workflow.StepAgent},
	{"steps", workflow.StepParallel},
	{"workflow", workflow.StepWorkflow},
}

var (
	retryKeys        = []string{"max_attempts", "backoff", "initial", "max"}
	toolOptionKeys   = []string{"max_calls", "timeout_per_call", "parallel", "tool_format", "on_max_calls", "max_repeats"}
	conversationKeys = []string{"max_turns", "max_context_tokens", "strategy", "stop_condition"}
)

// steps decodes a list of steps; depth counts enclosing parallel steps.
func (d *decoder) steps(path string, items []ast.Node, depth int) []workflow.Step {
	return d.appendSteps(make([]workflow.Step, 0, len(items)), path, items, depth)
}

// appendSteps decodes items as the steps of the list at path that follow those in out.
func (d *decoder) appendSteps(out []workflow.Step, path string, items []ast.Node, depth int) []workflow.Step {
	for _, item := range items {
		spath := fmt.Sprintf("%s[%d]", path, len(out))
		d.record(spath, d.pos(item))
		// A step that is not a mapping stays as an empty placeholder, so that indexes match
		// field paths; it was reported, and Validate's problems about it are dropped.
		out = append(out, d.step(spath, item, depth))
	}
	return out
}

// step decodes one step.
func (d *decoder) step(path string, item ast.Node, depth int) workflow.Step {
	o := d.object(path, "a step", item)
	if o == nil {
		return workflow.Step{Pos: d.pos(item)}
	}
	s := workflow.Step{Name: o.str("name"), Pos: o.pos, Fields: make(map[string]workflow.Pos, len(o.entries))}
	for _, e := range o.entries {
		s.Fields[e.key] = e.valPos
	}
	s.Type = d.stepType(o, &s)
	d.checkStepKeys(o, &s)
	s.When = o.str("when")
	s.Timeout = o.duration("timeout")
	s.ContinueOnError = o.boolean("continue_on_error")
	s.OutputVar = o.str("output_var")
	if r := d.sub(o, "retry"); r != nil {
		r.checkKeys("retry", retryKeys)
		s.Retry = &workflow.Retry{
			MaxAttempts: r.integer("max_attempts"), Backoff: workflow.Backoff(r.str("backoff")),
			Initial: r.duration("initial"), Max: r.duration("max"),
		}
	}
	switch s.Type {
	case workflow.StepShell:
		s.Shell = &workflow.ShellStep{Command: o.str("command"), Dir: o.str("dir"), Env: o.strmap("env")}
	case workflow.StepTool:
		s.Tool = &workflow.ToolStep{Tool: o.str("tool"), Input: o.str("input"), Args: o.strmap("args"), Provider: o.str("provider")}
	case workflow.StepAgent:
		s.Agent = d.agent(o)
	case workflow.StepParallel:
		s.Parallel = d.parallel(o, depth)
	case workflow.StepWorkflow:
		s.Workflow = &workflow.WorkflowStep{Path: o.str("workflow"), Inputs: o.inputmap("inputs")}
	}
	return s
}

// stepType reads type:, or infers it from the keys present when it is missing and exactly one
// type fits. An unknown type is kept as written; Validate reports it.
func (d *decoder) stepType(o *object, s *workflow.Step) workflow.StepType {
	if o.has("type") {
		return workflow.StepType(o.str("type"))
	}
	var found []workflow.StepType
	for _, m := range typeMarkers {
		if o.has(m.key) && !slices.Contains(found, m.typ) {
			found = append(found, m.typ)
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	if len(found) > 1 {
		names := make([]string, len(found))
		for i, t := range found {
			names[i] = string(t)
		}
		d.errorf(o.child("type"), s.Pos, "add type: to say which",
			"%s has no type and its keys fit more than one: %s", describeNamed("step", s.Name), strings.Join(names, ", "))
	}
	return ""
}

// checkStepKeys reports keys that no step accepts, and keys of another step type.
func (d *decoder) checkStepKeys(o *object, s *workflow.Step) {
	own, known := stepKeys[s.Type]
	valid := slices.Concat(commonStepKeys, own)
	if !known {
		valid = allStepKeys()
	}
	what := describeNamed("step", s.Name)
	for _, e := range o.entries {
		if slices.Contains(valid, e.key) {
			continue
		}
		if owners := ownersOf(e.key); len(owners) > 0 {
			d.errorf(o.child(e.key), e.keyPos, "",
				"%q is not a field of %s steps (it belongs to %s steps)", e.key, s.Type, strings.Join(owners, " and "))
			continue
		}
		o.unknown(e, what, valid)
	}
}

// ownersOf lists the step types that accept a key, in StepTypes order.
func ownersOf(key string) []string {
	var out []string
	for _, t := range workflow.StepTypes {
		if slices.Contains(stepKeys[t], key) {
			out = append(out, string(t))
		}
	}
	return out
}

func allStepKeys() []string {
	keys := slices.Clone(commonStepKeys)
	for _, t := range workflow.StepTypes {
		for _, k := range stepKeys[t] {
			if !slices.Contains(keys, k) {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// agent decodes the fields of an agent step.
func (d *decoder) agent(o *object) *workflow.AgentStep {
	a := &workflow.AgentStep{
		Provider: o.str("provider"), Prompt: o.str("prompt"), PromptFile: o.str("prompt_file"),
		SystemPrompt: o.str("system_prompt"), Tools: o.strings("tools"), Options: o.anymap("options"),
		OutputFormat: o.str("output_format"), OutputSchema: o.anymap("output_schema"),
		Mode: o.str("mode"), ContinueFrom: o.str("continue_from"),
	}
	if t := d.sub(o, "tool_options"); t != nil {
		t.checkKeys("tool_options", toolOptionKeys)
		a.ToolOptions = workflow.ToolOptions{
			MaxCalls: t.integer("max_calls"), TimeoutPerCall: t.duration("timeout_per_call"),
			Parallel: t.boolp("parallel"), ToolFormat: t.str("tool_format"),
			OnMaxCalls: t.str("on_max_calls"), MaxRepeats: t.integer("max_repeats"),
		}
	}
	if c := d.sub(o, "conversation"); c != nil {
		c.checkKeys("conversation", conversationKeys)
		a.Conversation = &workflow.ConversationOptions{
			MaxTurns: c.integer("max_turns"), MaxContextTokens: c.integer("max_context_tokens"),
			Strategy: c.str("strategy"), StopCondition: c.str("stop_condition"),
		}
	}
	return a
}

// maxParallelDepth bounds how deeply parallel steps nest.
const maxParallelDepth = 16

// parallel decodes the fields of a parallel step and its children.
func (d *decoder) parallel(o *object, depth int) *workflow.ParallelStep {
	p := &workflow.ParallelStep{MaxConcurrency: o.integer("max_concurrency"), FailFast: true}
	if b := o.boolp("fail_fast"); b != nil {
		p.FailFast = *b
	}
	items, ok := o.list("steps")
	if !ok {
		return p
	}
	if depth >= maxParallelDepth {
		_, pos, _ := o.get("steps")
		d.errorf(o.child("steps"), pos, "", "parallel steps nest more than %d levels deep", maxParallelDepth)
		return p
	}
	raw, _ := o.raw("steps")
	if steps, ok := d.nestedSteps(o.child("steps"), raw, items, depth+1); ok {
		p.Steps = steps
		return p
	}
	p.Steps = d.steps(o.child("steps"), items, depth+1)
	return p
}
