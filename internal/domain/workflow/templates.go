package workflow

import (
	"fmt"
	"slices"
)

// TemplateKind says how a template string is read.
type TemplateKind int

// Template kinds.
const (
	// TemplateText is text with {{ expr }} placeholders; values are rendered into the text.
	TemplateText TemplateKind = iota
	// TemplateCommand is shell source with {{ expr }} placeholders; values are bound as
	// variables, never parsed as shell (DESIGN section 3).
	TemplateCommand
	// TemplateExpr is a bare expression (when, stop_condition, approval rules).
	TemplateExpr
)

func (k TemplateKind) String() string {
	switch k {
	case TemplateCommand:
		return "command"
	case TemplateExpr:
		return "expression"
	default:
		return "text"
	}
}

// Namespaces of a template scope: the top-level names a template or expression can use.
const (
	NamespaceInputs   = "inputs"
	NamespaceStates   = "states"
	NamespaceEnv      = "env"
	NamespaceWorkflow = "workflow"
	NamespaceRun      = "run"
	// NamespaceArgs holds a tool call's arguments: in tool commands and approval rules.
	NamespaceArgs = "args"
	// NamespaceResponse, NamespaceTurn and NamespaceTokens exist in a conversation's
	// stop_condition: the last reply's text, the turn number and the tokens used so far.
	NamespaceResponse = "response"
	NamespaceTurn     = "turn"
	NamespaceTokens   = "tokens"
	// NamespaceTool is the called tool's name, in approval rules.
	NamespaceTool = "tool"
)

// BaseNamespaces are the names every template scope has.
var BaseNamespaces = []string{NamespaceInputs, NamespaceStates, NamespaceEnv, NamespaceWorkflow, NamespaceRun}

// AllNamespaces are every name some template scope has, for messages such as
// `"args" is not available here`.
var AllNamespaces = []string{
	NamespaceInputs, NamespaceStates, NamespaceEnv, NamespaceWorkflow, NamespaceRun,
	NamespaceArgs, NamespaceResponse, NamespaceTurn, NamespaceTokens, NamespaceTool,
}

// StepStateFields are the fields of states.<step> in a template scope, named as in the state
// file. The runner builds each entry with exactly these keys; the templater's static check
// refuses any other.
var StepStateFields = []string{"output", "response", "exit_code", "status", "error", "tokens", "tool_calls", "tool_stats"}

// WorkflowFields and RunFields are the keys of the workflow and run namespaces.
var (
	WorkflowFields = []string{"name", "version", "description", "dir"}
	RunFields      = []string{"id", "dir"}
)

// TemplateRef is one template or bare expression of a workflow, with what a static check needs
// to know about where it is evaluated.
type TemplateRef struct {
	// Field is the dotted path of the value, such as "steps[2].command" or "tools[1].command".
	Field string
	// Text is the template or expression as written.
	Text string
	Kind TemplateKind
	// Pos is the position of the value (for a step field, Step.FieldPos of its key); for a
	// one-line value, a checker adds the column of what it reports inside the value.
	Pos Pos
	// Step is the step the value belongs to, or nil for workflow-level values (tools,
	// sandbox, approval, output).
	Step *Step
	// Visible lists the step names and output_var names whose states the template may read:
	// the steps that have finished before it is evaluated. Ask CanRead rather than searching
	// it: it is as long as the workflow.
	Visible []string
	// Tool is the tool whose command or restrictions this is, or nil.
	Tool *ToolSpec
	// Namespaces lists the top-level names of the scope the value is evaluated in.
	Namespaces []string

	// first maps each name of the workflow's finishing order to its first position in it,
	// shared by every ref of one Templates call; each ref's Visible is a prefix of that order.
	first map[string]int
}

// CanRead reports whether the template may read the state of name (a step or an output_var),
// that is whether name is in Visible. For refs from Templates it is one map look-up: a scan of
// Visible for every reference made checking a workflow quadratic in its steps.
func (r *TemplateRef) CanRead(name string) bool {
	if r.first == nil {
		return slices.Contains(r.Visible, name)
	}
	i, ok := r.first[name]
	return ok && i < len(r.Visible)
}

// Templates enumerates every template and bare expression of the workflow, in file order of
// steps first, then tools, sandbox, approval rules and output. Empty values are left out.
//
// Visibility follows execution order: a step sees the steps before it (and their output_var
// names); a child of a parallel step sees only what ran before the parallel block, not its
// siblings; tool, sandbox and approval templates see no step states (a tool may be called by
// any step); the workflow output sees every step.
func (w *Workflow) Templates() []TemplateRef {
	e := &enumerator{first: map[string]int{}}
	var visible []string
	for i := range w.Steps {
		// A full slice expression, not a copy: the steps share one growing list (copying it
		// per step made a workflow of n steps cost n²/2 names), and an append to one step's
		// view cannot write into the next step's names.
		e.step(&w.Steps[i], fmt.Sprintf("steps[%d]", i), visible[:len(visible):len(visible)])
		for _, name := range stepNames(&w.Steps[i]) {
			if _, seen := e.first[name]; !seen {
				e.first[name] = len(visible)
			}
			visible = append(visible, name)
		}
	}
	e.tools(w.Tools)
	e.sandbox(w.Sandbox)
	e.approval(w.Approval)
	if w.Output != "" {
		e.add(TemplateRef{Field: "output", Text: w.Output, Kind: TemplateText, Pos: w.OutputPos,
			Visible: visible, Namespaces: BaseNamespaces})
	}
	return e.refs
}

// enumerator collects TemplateRefs during one Templates call.
type enumerator struct {
	refs  []TemplateRef
	first map[string]int // see TemplateRef.first
}

func (e *enumerator) add(r TemplateRef) {
	if r.Text == "" {
		return
	}
	if r.Namespaces == nil {
		r.Namespaces = BaseNamespaces
	}
	r.first = e.first
	e.refs = append(e.refs, r)
}

// stepNames returns the names a finished step makes visible: its own, its output_var and,
// for a parallel step, those of its children.
func stepNames(s *Step) []string {
	names := []string{s.Name}
	if s.OutputVar != "" {
		names = append(names, s.OutputVar)
	}
	if s.Parallel != nil {
		for i := range s.Parallel.Steps {
			names = append(names, stepNames(&s.Parallel.Steps[i])...)
		}
	}
	return names
}

// step adds the templates of one step; visible are the names finished before it starts.
func (e *enumerator) step(s *Step, path string, visible []string) {
	field := func(key, text string, kind TemplateKind) {
		e.add(TemplateRef{Field: path + "." + key, Text: text, Kind: kind, Pos: s.FieldPos(key),
			Step: s, Visible: visible})
	}
	fieldMap := func(key string, m map[string]string) {
		for _, k := range templateKeys(m) {
			e.add(TemplateRef{Field: path + "." + key + "." + k, Text: m[k], Kind: TemplateText,
				Pos: s.FieldPos(key), Step: s, Visible: visible})
		}
	}
	field("when", s.When, TemplateExpr)
	switch {
	case s.Shell != nil:
		field("command", s.Shell.Command, TemplateCommand)
		field("dir", s.Shell.Dir, TemplateText)
		fieldMap("env", s.Shell.Env)
	case s.Tool != nil:
		field("input", s.Tool.Input, TemplateText)
		fieldMap("args", s.Tool.Args)
	case s.Agent != nil:
		e.agent(s, path, visible)
	case s.Workflow != nil:
		field("workflow", s.Workflow.Path, TemplateText)
		fieldMap("inputs", s.Workflow.Inputs)
	case s.Parallel != nil:
		for i := range s.Parallel.Steps {
			e.step(&s.Parallel.Steps[i], fmt.Sprintf("%s.steps[%d]", path, i), visible)
		}
	}
}

func (e *enumerator) agent(s *Step, path string, visible []string) {
	a := s.Agent
	for _, f := range []struct{ key, text string }{
		{"prompt", a.Prompt}, {"system_prompt", a.SystemPrompt}, {"prompt_file", a.PromptFile},
	} {
		e.add(TemplateRef{Field: path + "." + f.key, Text: f.text, Kind: TemplateText,
			Pos: s.FieldPos(f.key), Step: s, Visible: visible})
	}
	if a.Conversation != nil {
		e.add(TemplateRef{Field: path + ".conversation.stop_condition", Text: a.Conversation.StopCondition,
			Kind: TemplateExpr, Pos: s.FieldPos("conversation"), Step: s, Visible: visible,
			Namespaces: withNamespaces(NamespaceResponse, NamespaceTurn, NamespaceTokens)})
	}
}

func (e *enumerator) tools(tools []ToolSpec) {
	for i := range tools {
		t := &tools[i]
		path := fmt.Sprintf("tools[%d]", i)
		e.add(TemplateRef{Field: path + ".command", Text: t.Command, Kind: TemplateCommand, Pos: t.Pos,
			Tool: t, Namespaces: withNamespaces(NamespaceArgs)})
		if r := t.Restrictions; r != nil {
			e.list(path+".restrictions.paths", r.Paths, t.Pos, t)
			e.list(path+".restrictions.commands", r.Commands, t.Pos, t)
			e.list(path+".restrictions.hosts", r.Hosts, t.Pos, t)
		}
	}
}

func (e *enumerator) sandbox(p *Policy) {
	if p == nil {
		return
	}
	e.list("sandbox.paths.read", p.Paths.Read, p.Pos, nil)
	e.list("sandbox.paths.write", p.Paths.Write, p.Pos, nil)
	e.list("sandbox.paths.protect", p.Paths.Protect, p.Pos, nil)
	e.list("sandbox.hosts", p.Hosts, p.Pos, nil)
}

func (e *enumerator) approval(a *ApprovalPolicy) {
	if a == nil {
		return
	}
	for i, r := range a.Rules {
		e.add(TemplateRef{Field: fmt.Sprintf("approval.rules[%d].when", i), Text: r.When, Kind: TemplateExpr,
			Pos: r.Pos, Namespaces: withNamespaces(NamespaceArgs, NamespaceTool)})
	}
}

// list adds the text templates of a list value such as restrictions.paths.
func (e *enumerator) list(path string, items []string, pos Pos, t *ToolSpec) {
	for i, s := range items {
		e.add(TemplateRef{Field: fmt.Sprintf("%s[%d]", path, i), Text: s, Kind: TemplateText, Pos: pos, Tool: t})
	}
}

// templateKeys returns the keys of a map of templates in order, so enumeration is stable.
func templateKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func withNamespaces(extra ...string) []string {
	return slices.Concat(BaseNamespaces, extra)
}
