package templater

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/shellsyntax"
)

// Check compiles every template and bare expression of wf (see workflow.Templates) and checks
// the references that can be known before running: namespaces, earlier steps and their
// fields, tool parameters, workflow and run fields. An input that is used but not declared is
// appended to wf.Inputs as an implicit required string, with a warning (the seed workflows rely
// on it). raw() in a command, and a model-chosen value that starts a command argument, are
// warnings. Compiled forms stay cached for the run.
func (t *Templater) Check(wf *workflow.Workflow) workflow.Problems {
	c := &refChecker{t: t, wf: wf, steps: map[string]bool{}, declared: map[string]bool{}, hints: workflow.NewHinter()}
	for _, name := range allStepNames(wf.Steps) {
		c.steps[name] = true
	}
	c.blocks = blocksOf(wf.Steps)
	for _, in := range wf.Inputs {
		c.declare(in.Name)
	}
	for _, ref := range wf.Templates() {
		c.check(ref)
	}
	return c.probs
}

// refChecker accumulates the problems of one Check call.
type refChecker struct {
	t  *Templater
	wf *workflow.Workflow
	// inputs are the declared inputs, implicit ones included, in order; declared holds the
	// same names, to look them up.
	inputs   []string
	declared map[string]bool
	steps    map[string]bool // every step name and output_var of the workflow
	blocks   blocks
	// hints bounds the work of hints: a file's problems and the names they are compared
	// with both grow with it (see workflow.Hinter).
	hints *workflow.Hinter
	probs workflow.Problems
}

// declare adds an input name.
func (c *refChecker) declare(name string) {
	c.inputs = append(c.inputs, name)
	c.declared[name] = true
}

func (c *refChecker) check(r workflow.TemplateRef) {
	if r.Kind == workflow.TemplateExpr {
		c.condition(r)
		return
	}
	tt, err := c.t.text(r.Text)
	if err != nil {
		c.syntax(r, err)
		return
	}
	for _, p := range tt.parts {
		if p.prog != nil {
			c.expr(r, p.prog, p.seg.start+2)
		}
	}
	if r.Kind == workflow.TemplateCommand {
		c.command(r)
	}
}

// condition checks a bare expression (when, stop_condition, approval rules): its syntax, its
// references and that it can be true or false. A template written where an expression is
// wanted ({{ x }} == 1) is told to drop the braces.
func (c *refChecker) condition(r workflow.TemplateRef) {
	name := r.Field[strings.LastIndexByte(r.Field, '.')+1:]
	prog, off, err := c.t.bare(r.Text)
	if err != nil {
		if i := strings.Index(r.Text, "{{"); i >= 0 {
			bare := strings.TrimSpace(strings.NewReplacer("{{", "", "}}", "").Replace(r.Text))
			c.errorf(r, i, fmt.Sprintf("write %s: %s", name, strings.Join(strings.Fields(bare), " ")),
				"%s is an expression: drop the {{ }}", name)
			return
		}
		c.syntax(r, err)
		return
	}
	if t := prog.typ; t != nil && t.Kind() != reflect.Bool && t.Kind() != reflect.Interface {
		c.errorf(r, off, `compare it: x == "yes", x > 0, x != ""`,
			"%s must be a boolean, and %q is of type %s", name, strings.TrimSpace(r.Text), typeName(reflect.Zero(t).Interface()))
	}
	c.expr(r, prog, off)
}

// command checks the shell side of a command template.
func (c *refChecker) command(r workflow.TemplateRef) {
	ct, err := c.t.command(r.Text)
	if err != nil {
		c.syntax(r, err)
		return
	}
	c.unsupported(r, ct)
	for _, h := range ct.holes {
		switch {
		case h.name == "":
			c.warn(r, h.start, "", "raw() splices text into the command; the value can change its syntax")
		case h.optionLike && r.Tool != nil && usesArgs(h.prog):
			c.warn(r, h.start, fmt.Sprintf(`put "--" before it: %s -- ...`, h.command),
				"{{%s}} starts an argument of %s: a value beginning with \"-\" would be read as an option, and is refused when the tool is called", h.prog.src, h.command)
		}
	}
}

// unsupportedBuiltins are the bash builtins awf's shell does not have (docs/dsl.md, "The
// shell"): a script that calls one fails there when it runs.
var unsupportedBuiltins = []string{"bg", "fg", "disown", "suspend", "ulimit", "umask", "enable", "caller",
	"complete", "compgen", "compopt", "history", "fc", "newgrp", "logout", "bind"}

// lineContinuations removes what the shell's lexer removes inside a word: a backslash at the
// end of a line (ul\ at the end of a line, then imit, is ulimit).
var lineContinuations = strings.NewReplacer("\\\r\n", "", "\\\n", "")

// unsupported warns of each call of an unsupported builtin in the command, naming its line.
// Only a call whose name is one literal word is found, and such a word appears as it is in
// the script once line continuations are taken out: a script in which no such name appears
// is not parsed.
func (c *refChecker) unsupported(r workflow.TemplateRef, ct *commandTemplate) {
	if ct.hasRaw {
		return
	}
	joined := lineContinuations.Replace(ct.script)
	if !slices.ContainsFunc(unsupportedBuiltins, func(name string) bool { return strings.Contains(joined, name) }) {
		return
	}
	f, err := shellsyntax.Parse(ct.script, "")
	if err != nil {
		return
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		if name := call.Args[0].Lit(); slices.Contains(unsupportedBuiltins, name) {
			c.warn(r, 0, "see \"The shell\" in docs/dsl.md for the builtins awf's shell has",
				"line %d of the command: %s is not a builtin of awf's shell: the call fails when the command runs", call.Pos().Line(), name)
		}
		return true
	})
}

func usesArgs(p *program) bool {
	for _, ch := range p.chains {
		if ch.root == workflow.NamespaceArgs {
			return true
		}
	}
	return false
}

// expr checks the references of one compiled expression found at offset off of r.Text.
func (c *refChecker) expr(r workflow.TemplateRef, p *program, off int) {
	for _, ch := range p.chains {
		c.chain(r, ch, off+ch.offset)
	}
}

// chain checks one reference chain such as states.build.output.
func (c *refChecker) chain(r workflow.TemplateRef, top *ref, off int) {
	root := top.root
	if !slices.Contains(r.Namespaces, root) {
		if slices.Contains(workflow.AllNamespaces, root) {
			c.errorf(r, off, availability(root), "%q is not available in %s", root, r.Field)
			return
		}
		c.errorf(r, off, workflow.DidYouMean(root, r.Namespaces), "unknown name %q", root)
		return
	}
	segs := staticPath(top)
	if len(segs) < 2 {
		return
	}
	name := segs[1]
	switch root {
	case workflow.NamespaceInputs:
		c.input(r, name, off, refAt(top, 2).lenient)
	case workflow.NamespaceStates:
		c.state(r, segs, off)
	case workflow.NamespaceArgs:
		if r.Tool != nil && r.Kind == workflow.TemplateCommand && !hasParam(r.Tool, name) {
			c.errorf(r, off, workflow.DidYouMean(name, paramNames(r.Tool)), "tool %q has no parameter %q", r.Tool.Name, name)
		}
	case workflow.NamespaceWorkflow:
		c.field(r, off, segs, workflow.WorkflowFields)
	case workflow.NamespaceRun:
		c.field(r, off, segs, workflow.RunFields)
	}
}

// input declares an undeclared input as an implicit required string, with a warning. A
// lenient reference (inputs?.x, inputs.x ?? d) does not require the input.
func (c *refChecker) input(r workflow.TemplateRef, name string, off int, lenient bool) {
	if c.declared[name] || lenient {
		return
	}
	hint := c.hints.DidYouMean(name, c.inputs)
	c.declare(name)
	pos := c.pos(r, off)
	c.wf.Inputs = append(c.wf.Inputs, workflow.Input{
		Name: name, Type: workflow.TypeString, Required: true, Implicit: true, Pos: pos,
	})
	c.probs = append(c.probs, workflow.Problem{Pos: pos, Field: r.Field, Hint: hint, Severity: workflow.SeverityWarning,
		Msg: fmt.Sprintf("input %q is used but not declared; treated as a required string", name)})
}

func (c *refChecker) state(r workflow.TemplateRef, segs []string, off int) {
	name := segs[1]
	if !r.CanRead(name) {
		c.errorf(r, off, c.stepHint(r, name), "step %q is not earlier in the workflow", name)
		return
	}
	if len(segs) > 2 && !slices.Contains(workflow.StepStateFields, segs[2]) {
		c.errorf(r, off, workflow.DidYouMean(segs[2], workflow.StepStateFields),
			"states.%s has no field %q (fields: %s)", name, segs[2], strings.Join(workflow.StepStateFields, ", "))
	}
}

// stepHint explains why a step's state cannot be read here.
func (c *refChecker) stepHint(r workflow.TemplateRef, name string) string {
	switch {
	case r.Step == nil && r.Field != "output":
		return "tools, sandbox and approval rules run within any step and cannot read step states"
	case r.Step == nil:
		return c.hints.DidYouMean(name, r.Visible)
	case r.Step.Name == name || r.Step.OutputVar == name:
		return "a step cannot read its own state"
	case c.steps[name]:
		if c.blocks.siblings(r.Step, name) {
			return fmt.Sprintf("%q runs in parallel with this step", name)
		}
		return fmt.Sprintf("%q runs later", name)
	}
	return c.hints.DidYouMean(name, r.Visible)
}

func (c *refChecker) field(r workflow.TemplateRef, off int, segs, fields []string) {
	if !slices.Contains(fields, segs[1]) {
		c.errorf(r, off, workflow.DidYouMean(segs[1], fields), "%s has no field %q (fields: %s)", segs[0], segs[1], strings.Join(fields, ", "))
	}
}

func (c *refChecker) syntax(r workflow.TemplateRef, err error) {
	var se *SyntaxError
	if errors.As(err, &se) {
		c.errorf(r, se.Offset, "", "%s", se.Msg)
		return
	}
	c.errorf(r, 0, "", "%v", err)
}

func (c *refChecker) errorf(r workflow.TemplateRef, off int, hint, format string, args ...any) {
	c.probs = append(c.probs, workflow.Problem{Pos: c.pos(r, off), Field: r.Field, Hint: hint,
		Msg: fmt.Sprintf(format, args...)})
}

func (c *refChecker) warn(r workflow.TemplateRef, off int, hint, format string, args ...any) {
	c.probs = append(c.probs, workflow.Problem{Pos: c.pos(r, off), Field: r.Field, Hint: hint,
		Msg: fmt.Sprintf(format, args...), Severity: workflow.SeverityWarning})
}

// pos is the position of byte offset off of the value: the value's own position moved right
// by the offset when the value is on one line. For values of several lines the loader's
// position of the value is kept, since where their text starts depends on the YAML style.
func (c *refChecker) pos(r workflow.TemplateRef, off int) workflow.Pos {
	p := r.Pos
	if off <= 0 || off > len(r.Text) {
		return p
	}
	before := r.Text[:off]
	if !strings.Contains(r.Text, "\n") {
		if q, ok := c.wf.Blocks[r.Field]; ok {
			p = q // a quoted value: its text starts after the quote
		}
		if p.Col > 0 {
			p.Col += utf8.RuneCountInString(before)
		}
		return p
	}
	// A multi-line value: exact inside a literal block (key: |), whose lines are the file's.
	b, ok := c.wf.Blocks[r.Field]
	if !ok {
		return p
	}
	nl := strings.LastIndexByte(before, '\n')
	b.Line += strings.Count(before, "\n")
	b.Col += utf8.RuneCountInString(before[nl+1:])
	return b
}

// staticPath returns the longest constant path of a chain from its root: ["states", "b",
// "output"] for states.b.output, ["states"] for states[name].output.
func staticPath(top *ref) []string {
	for x := top; x != nil; x = x.base {
		if x.static {
			return x.segs
		}
	}
	return nil
}

// refAt returns the access of the chain at depth n (1 is the root name).
func refAt(top *ref, n int) *ref {
	for x := top; x != nil; x = x.base {
		if x.static && len(x.segs) == n {
			return x
		}
	}
	return top
}

func availability(ns string) string {
	switch ns {
	case workflow.NamespaceArgs:
		return "args exists in tool commands and approval rules"
	case workflow.NamespaceResponse, workflow.NamespaceTurn, workflow.NamespaceTokens:
		return ns + " exists in conversation.stop_condition"
	case workflow.NamespaceTool:
		return "tool exists in approval rules"
	}
	return ""
}

func hasParam(t *workflow.ToolSpec, name string) bool {
	return slices.Contains(paramNames(t), name)
}

func paramNames(t *workflow.ToolSpec) []string {
	names := make([]string, len(t.Parameters))
	for i, p := range t.Parameters {
		names[i] = p.Name
	}
	return names
}

// allStepNames lists every step name and output_var, parallel children included.
func allStepNames(steps []workflow.Step) []string {
	var names []string
	for i := range steps {
		s := &steps[i]
		names = append(names, s.Name)
		if s.OutputVar != "" {
			names = append(names, s.OutputVar)
		}
		if s.Parallel != nil {
			names = append(names, allStepNames(s.Parallel.Steps)...)
		}
	}
	return names
}

// blocks says which of a workflow's top-level parallel blocks each step is inside, to tell a
// step that runs later from one that runs beside another, in one look-up: searching the
// blocks for each reference to a later step made checking a workflow quadratic.
type blocks struct {
	of    map[*workflow.Step]int // a step nested in a top-level block: the block's index
	names map[blockName]bool     // the step names and output_vars nested in each block
}

type blockName struct {
	block int
	name  string
}

// blocksOf indexes the top-level parallel blocks of steps.
func blocksOf(steps []workflow.Step) blocks {
	b := blocks{of: map[*workflow.Step]int{}, names: map[blockName]bool{}}
	for i := range steps {
		if steps[i].Parallel == nil {
			continue
		}
		for j := range steps[i].Parallel.Steps {
			b.index(i, &steps[i].Parallel.Steps[j])
		}
	}
	return b
}

// index records s, and the steps nested in it, as inside block i.
func (b blocks) index(i int, s *workflow.Step) {
	b.of[s] = i
	b.names[blockName{i, s.Name}] = true
	if s.OutputVar != "" {
		b.names[blockName{i, s.OutputVar}] = true
	}
	if s.Parallel != nil {
		for j := range s.Parallel.Steps {
			b.index(i, &s.Parallel.Steps[j])
		}
	}
}

// siblings reports whether name is a step of the same top-level parallel block as s.
func (b blocks) siblings(s *workflow.Step, name string) bool {
	i, ok := b.of[s]
	return ok && b.names[blockName{i, name}]
}
