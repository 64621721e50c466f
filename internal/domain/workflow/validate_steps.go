package workflow

import (
	"fmt"
	"strings"
)

// stepRef is a step seen during validation, with its field path.
type stepRef struct {
	path string
	step *Step
}

func (v *validator) steps() {
	if len(v.w.Steps) == 0 {
		v.errorf("steps", v.w.Pos, "", "the workflow has no steps")
		return
	}
	v.outVars = map[string]Pos{}
	var all []stepRef
	collectSteps("steps", v.w.Steps, &all)
	for _, r := range all {
		v.stepName(r)
	}
	for _, r := range all {
		v.outputVar(r)
	}
	v.stepList("steps", v.w.Steps, nil, true)
}

// collectSteps lists every step, nested ones after their parallel parent, in source order.
func collectSteps(path string, steps []Step, out *[]stepRef) {
	for i := range steps {
		s := &steps[i]
		p := fmt.Sprintf("%s[%d]", path, i)
		*out = append(*out, stepRef{p, s})
		if s.Parallel != nil {
			collectSteps(p+".steps", s.Parallel.Steps, out)
		}
	}
}

// stepName checks a name's form and that no earlier step, at any depth, has it.
func (v *validator) stepName(r stepRef) {
	s := r.step
	pos := s.FieldPos("name")
	switch {
	case s.Name == "":
		v.errorf(r.path+".name", s.Pos, "", "step has no name (add name: with letters, digits, - and _)")
		return
	case !stepName.MatchString(s.Name):
		v.errorf(r.path+".name", pos, "", "step name %q may hold only letters, digits, - and _", s.Name)
	}
	if first, dup := v.stepPos[s.Name]; dup {
		v.errorf(r.path+".name", pos, "", "duplicate step name %q%s", s.Name, atLine("first defined at", first))
		return
	}
	v.stepPos[s.Name] = pos
	v.stepTypes[s.Name] = s.Type
}

// outputVar checks that an output_var is a valid name, unique and not a step's name.
func (v *validator) outputVar(r stepRef) {
	s := r.step
	if s.OutputVar == "" {
		return
	}
	field, pos := r.path+".output_var", s.FieldPos("output_var")
	step, isStep := v.stepPos[s.OutputVar]
	first, dup := v.outVars[s.OutputVar]
	switch {
	case !stepName.MatchString(s.OutputVar):
		v.errorf(field, pos, "", "output_var %q may hold only letters, digits, - and _", s.OutputVar)
	case isStep:
		v.errorf(field, pos, "", "output_var %q is also the name of a step%s; choose another name", s.OutputVar, atLine("at", step))
	case dup:
		v.errorf(field, pos, "", "duplicate output_var %q%s", s.OutputVar, atLine("first at", first))
	default:
		v.outVars[s.OutputVar] = pos
	}
}

// stepList checks steps in order. earlier holds the agent steps that finish before the list
// starts; in a sequential list each step also sees the agent steps of the steps before it,
// in a parallel one it does not (they run at the same time). It returns the agent steps of
// the list, nested ones included.
//
// The only sequential list is the workflow's, which starts with nothing before it; every
// other list is a parallel block's, whose steps all see what its block sees. So every list
// of earlier agent steps is a prefix of one that grows (never a copy), and v.agentAt finds a
// name in it in one look-up (see finished): copying or searching it at every step made
// checking a workflow quadratic in its agent steps.
func (v *validator) stepList(path string, steps []Step, earlier []string, sequential bool) []string {
	seen := earlier
	var agents []string
	for i := range steps {
		s := &steps[i]
		p := fmt.Sprintf("%s[%d]", path, i)
		mine := v.step(p, s, seen)
		agents = append(agents, mine...)
		if sequential {
			for _, a := range mine {
				if _, ok := v.agentAt[a]; !ok {
					v.agentAt[a] = len(seen)
				}
				seen = append(seen, a)
			}
		}
	}
	return agents
}

// finished reports whether name is one of earlier, a prefix of the workflow's list of agent
// steps (see stepList).
func (v *validator) finished(name string, earlier []string) bool {
	i, ok := v.agentAt[name]
	return ok && i < len(earlier)
}

// step checks one step and returns its agent steps (itself, or those nested in it).
func (v *validator) step(path string, s *Step, earlier []string) []string {
	if s.Timeout < 0 {
		v.errorf(path+".timeout", s.FieldPos("timeout"), "", "timeout must not be negative")
	}
	v.retry(path, s)
	what := stepLabel(s)
	switch s.Type {
	case "":
		v.errorf(path+".type", s.Pos, "", "%s has no type; expected one of %s", what, strings.Join(stringsOf(StepTypes), ", "))
	case StepShell:
		if s.Shell == nil || strings.TrimSpace(s.Shell.Command) == "" {
			v.errorf(path+".command", s.FieldPos("command"), "", "shell %s needs a command", what)
		}
	case StepTool:
		if s.Tool == nil || s.Tool.Tool == "" {
			v.errorf(path+".tool", s.FieldPos("tool"), "", "tool %s needs tool: the name of the tool to call", what)
		}
	case StepAgent:
		v.agent(path, s, earlier)
		if s.Name != "" {
			return []string{s.Name}
		}
	case StepParallel:
		return v.parallel(path, s, earlier)
	case StepWorkflow:
		if s.Workflow == nil || s.Workflow.Path == "" {
			v.errorf(path+".workflow", s.FieldPos("workflow"), "", "workflow %s needs workflow: the path of the workflow file to run", what)
		}
	default:
		v.oneOf(path+".type", s.FieldPos("type"), "", "step type", string(s.Type), stringsOf(StepTypes), false)
	}
	return nil
}

// stepLabel names a step for messages.
func stepLabel(s *Step) string {
	if s.Name == "" {
		return "step"
	}
	return fmt.Sprintf("step %q", s.Name)
}

func (v *validator) retry(path string, s *Step) {
	r := s.Retry
	if r == nil {
		return
	}
	pos := s.FieldPos("retry")
	if r.MaxAttempts < 1 {
		v.errorf(path+".retry.max_attempts", pos, "", "retry.max_attempts must be at least 1 (the first attempt counts), got %d", r.MaxAttempts)
	}
	v.oneOf(path+".retry.backoff", pos, "", "backoff", string(r.Backoff), stringsOf(backoffs), true)
	switch {
	case r.Initial < 0 || r.Max < 0:
		v.errorf(path+".retry", pos, "", "retry delays must not be negative")
	case r.Max > 0 && r.Initial > r.Max:
		v.errorf(path+".retry.max", pos, "", "retry.max (%v) is less than retry.initial (%v)", r.Max, r.Initial)
	}
}

func (v *validator) agent(path string, s *Step, earlier []string) {
	a := s.Agent
	what := stepLabel(s)
	if a == nil {
		a = &AgentStep{}
	}
	switch {
	case a.Prompt == "" && a.PromptFile == "":
		v.errorf(path+".prompt", s.Pos, "", "agent %s needs a prompt or a prompt_file", what)
	case a.Prompt != "" && a.PromptFile != "":
		v.errorf(path+".prompt_file", s.FieldPos("prompt_file"), "", "agent %s has both prompt and prompt_file; keep one", what)
	}
	v.oneOf(path+".output_format", s.FieldPos("output_format"), "", "output_format", a.OutputFormat, outputFormats, true)
	if a.OutputSchema != nil && a.OutputFormat != "json" {
		v.warnf(path+".output_schema", s.FieldPos("output_schema"), "output_schema is used only with output_format: json")
	}
	v.oneOf(path+".mode", s.FieldPos("mode"), "", "mode", a.Mode, []string{modeConversation}, true)
	if c := a.Conversation; c != nil {
		v.oneOf(path+".conversation.strategy", s.FieldPos("conversation"), "", "conversation strategy", c.Strategy, strategies, true)
		if a.Mode != modeConversation {
			v.warnf(path+".conversation", s.FieldPos("conversation"), "conversation options are used only with mode: conversation")
		}
	}
	o := a.ToolOptions
	v.oneOf(path+".tool_options.tool_format", s.FieldPos("tool_options"), "", "tool_format", o.ToolFormat, toolFormats, true)
	v.oneOf(path+".tool_options.on_max_calls", s.FieldPos("tool_options"), "", "on_max_calls", o.OnMaxCalls, onMaxCallsModes, true)
	if o.MaxCalls < 0 || o.MaxRepeats < 0 || o.TimeoutPerCall < 0 {
		v.errorf(path+".tool_options", s.FieldPos("tool_options"), "", "tool_options must not be negative")
	}
	v.agentTools(path, s, a.Tools)
	v.continueFrom(path, s, earlier)
}

// agentTools checks that an agent step lists each tool once.
func (v *validator) agentTools(path string, s *Step, tools []string) {
	seen := map[string]bool{}
	for i, t := range tools {
		field := fmt.Sprintf("%s.tools[%d]", path, i)
		switch {
		case t == "":
			v.errorf(field, s.FieldPos("tools"), "", "empty tool name in tools")
		case seen[t]:
			v.errorf(field, s.FieldPos("tools"), "", "tool %q is listed twice", t)
		}
		seen[t] = true
	}
}

// continueFrom checks that continue_from names an agent step that has finished before this
// one starts.
func (v *validator) continueFrom(path string, s *Step, earlier []string) {
	ref := s.Agent.ContinueFrom
	if ref == "" {
		return
	}
	field, pos := path+".continue_from", s.FieldPos("continue_from")
	if v.finished(ref, earlier) {
		return
	}
	typ, exists := v.stepTypes[ref]
	switch {
	case ref == s.Name:
		v.errorf(field, pos, "", "continue_from names the step itself; it must name an earlier agent step")
	case exists && typ != StepAgent:
		v.errorf(field, pos, "", "continue_from: step %q is a %s step, not an agent step", ref, typ)
	case exists:
		v.errorf(field, pos, "", "continue_from: step %q does not finish before this step starts; it must name an earlier agent step", ref)
	default:
		v.errorf(field, pos, v.hints.DidYouMean(ref, earlier), "continue_from: no earlier agent step is named %q", ref)
	}
}

func (v *validator) parallel(path string, s *Step, earlier []string) []string {
	p := s.Parallel
	if p == nil || len(p.Steps) == 0 {
		v.errorf(path+".steps", s.FieldPos("steps"), "", "parallel %s needs at least one step in steps", stepLabel(s))
		return nil
	}
	if p.MaxConcurrency < 0 {
		v.errorf(path+".max_concurrency", s.FieldPos("max_concurrency"), "", "max_concurrency must not be negative")
	}
	return v.stepList(path+".steps", p.Steps, earlier, false)
}
