package compile

import (
	"cmp"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/workflow"
)

// children compiles the workflows that wf's workflow steps call, at any depth of parallel
// steps, and checks the inputs each step passes. Each file is compiled once, however often it
// is called; a file already being compiled up the chain is a workflow calling itself, directly
// or through others, which is an error (it would nest runs until the runner's depth limit). Problems inside a child keep the child's
// positions, with a hint naming the step that calls it (the chain of them, for grandchildren).
func (c *compiler) children(wf *workflow.Workflow) workflow.Problems {
	var probs workflow.Problems
	var walk func(path string, steps []workflow.Step)
	walk = func(path string, steps []workflow.Step) {
		for i := range steps {
			s, at := &steps[i], fmt.Sprintf("%s[%d]", path, i)
			if s.Parallel != nil {
				walk(at+".steps", s.Parallel.Steps)
			}
			if s.Workflow != nil && s.Workflow.Path != "" {
				probs = append(probs, c.child(wf, at, s)...)
			}
		}
	}
	walk("steps", wf.Steps)
	return probs
}

// child compiles the workflow step s calls (once) and checks the inputs s passes to it.
func (c *compiler) child(parent *workflow.Workflow, at string, s *workflow.Step) workflow.Problems {
	// Named as the parent's file was given (relative stays relative), keyed absolute.
	path := s.Workflow.Path
	if !filepath.IsAbs(path) {
		dir := filepath.Dir(s.Pos.File)
		if s.Pos.File == "" {
			dir = parent.Dir
		}
		path = filepath.Join(dir, path)
	}
	calledBy := fmt.Sprintf("called by step %q at %s", s.Name, s.FieldPos("workflow"))
	if p, ok := c.cycle(at, s, absPath(path)); ok {
		return workflow.Problems{p}
	}
	child, seen := c.loaded[absPath(path)]
	if !seen {
		child, res, err := c.file(path)
		var probs workflow.Problems
		for _, p := range append(res.Warnings, Problems(err)...) {
			if p.Hint == "" {
				p.Hint = calledBy
			} else {
				p.Hint += "; " + calledBy
			}
			probs = append(probs, p)
		}
		if err != nil && Problems(err) == nil {
			probs = append(probs, workflow.Problem{Pos: s.FieldPos("workflow"), Field: at + ".workflow",
				Msg: fmt.Sprintf("step %q: %v", s.Name, err), Hint: "the path is relative to this workflow's directory"})
		}
		if child != nil {
			probs = append(probs, checkCall(at, s, child)...)
		}
		return probs
	}
	if child == nil {
		return nil // reported where it was first compiled, or a cycle
	}
	return checkCall(at, s, child)
}

// cycle reports a step that calls key, a workflow being compiled up the chain: the chain of
// files from it back to itself.
func (c *compiler) cycle(at string, s *workflow.Step, key string) (workflow.Problem, bool) {
	i := slices.Index(c.active, key)
	if i < 0 {
		return workflow.Problem{}, false
	}
	names := make([]string, 0, len(c.active)-i+1)
	for _, p := range append(c.active[i:], key) {
		names = append(names, filepath.Base(p))
	}
	what := "calls its own workflow"
	if len(names) > 2 {
		what = "closes a cycle of workflows"
	}
	return workflow.Problem{Pos: s.FieldPos("workflow"), Field: at + ".workflow",
		Msg:  fmt.Sprintf("step %q %s: %s", s.Name, what, strings.Join(names, " -> ")),
		Hint: "a workflow cannot call itself, directly or through others; repeat work with retry or a loop in a step instead"}, true
}

// checkCall checks the inputs a workflow step passes against those its workflow declares:
// every name must be declared, and every required input without a default must be given.
func checkCall(at string, s *workflow.Step, child *workflow.Workflow) workflow.Problems {
	var probs workflow.Problems
	declared := make([]string, 0, len(child.Inputs))
	for _, in := range child.Inputs {
		declared = append(declared, in.Name)
	}
	given := slices.Sorted(maps.Keys(s.Workflow.Inputs))
	pos := s.FieldPos("inputs")
	for _, name := range given {
		if !slices.Contains(declared, name) {
			probs = append(probs, workflow.Problem{Pos: pos, Field: at + ".inputs." + name,
				Msg:  fmt.Sprintf("step %q passes input %q, which workflow %s does not declare", s.Name, name, child.Name),
				Hint: cmp.Or(workflow.DidYouMean(name, declared), fmt.Sprintf("its inputs: %v", declared))})
		}
	}
	for _, in := range child.Inputs {
		if in.Required && !in.HasDefault && !slices.Contains(given, in.Name) {
			probs = append(probs, workflow.Problem{Pos: pos, Field: at + ".inputs",
				Msg:  fmt.Sprintf("step %q does not pass input %q, which workflow %s requires", s.Name, in.Name, child.Name),
				Hint: fmt.Sprintf("add %s: ... under the step's inputs", in.Name)})
		}
	}
	return probs
}

// absPath keys c.loaded: path made absolute, or as it is if that fails.
func absPath(path string) string {
	if abs, err := filepath.Abs(path); err == nil {
		return abs
	}
	return path
}
