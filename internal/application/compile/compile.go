// Package compile is the use case behind `awf validate` and the first half of `awf run`: load a
// workflow file, validate it, and compile every template and expression in it, so that every
// problem that can be known before running is reported at once, with its position.
package compile

import (
	"errors"
	"slices"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// Result is a compiled workflow with the warnings found on the way. Workflow is nil when the
// file did not compile.
type Result struct {
	Workflow *workflow.Workflow
	Warnings workflow.Problems
	// CallsTools is true when the workflow, or a workflow it calls, has a tool or agent step
	// (set by File, which compiles the workflows called): a run without needs no tools built.
	CallsTools bool
	// Files are the absolute paths of the workflow files loaded: the workflow and those it
	// calls (set by File), sorted.
	Files []string
}

// File loads, validates and compiles the workflow at path, and every workflow its workflow
// steps call (each file once), checking the inputs each such step passes. Load and template
// errors of all of them are returned together as one workflow.Problems error (fault.Invalid);
// I/O errors of the file itself keep the kind the loader gave them.
func File(l ports.WorkflowLoader, t ports.Templater, path string) (Result, error) {
	c := &compiler{l: l, t: t, loaded: map[string]*workflow.Workflow{}}
	_, res, err := c.file(path)
	if res.Workflow != nil {
		for path, w := range c.loaded {
			res.CallsTools = res.CallsTools || w != nil && w.CallsTools()
			if w != nil {
				res.Files = append(res.Files, path)
			}
		}
		slices.Sort(res.Files)
	}
	return res, err
}

// compiler compiles a workflow and the workflows it calls.
type compiler struct {
	l      ports.WorkflowLoader
	t      ports.Templater
	loaded map[string]*workflow.Workflow // by absolute path; nil while being compiled or unloadable
	active []string                      // absolute paths of the workflows being compiled, caller first
}

// file compiles the workflow at path and its children, and records it in c.loaded (the
// workflow calling itself, or a cycle, finds it there and is not compiled again). It returns
// the workflow as loaded (nil when nothing could be decoded), for the caller's input check.
func (c *compiler) file(path string) (*workflow.Workflow, Result, error) {
	key := absPath(path)
	c.loaded[key] = nil // being compiled
	c.active = append(c.active, key)
	defer func() { c.active = c.active[:len(c.active)-1] }()
	wf, err := c.l.Load(path)
	c.loaded[key] = wf
	var all workflow.Problems
	if err != nil {
		all = Problems(err)
		if wf == nil || all == nil {
			return nil, Result{}, err
		}
	}
	res, checkErr := Workflow(c.t, wf)
	all = append(all, Problems(checkErr)...)
	for _, p := range c.children(wf) {
		if p.Severity == workflow.SeverityWarning {
			res.Warnings = append(res.Warnings, p)
		} else {
			all = append(all, p)
		}
	}
	res.Warnings.Sort()
	if len(all) == 0 {
		return wf, res, nil
	}
	all.Sort()
	return wf, Result{Warnings: res.Warnings}, dedupe(all)
}

// Workflow compiles an already loaded workflow.
func Workflow(t ports.Templater, wf *workflow.Workflow) (Result, error) {
	problems := append(workflow.Problems{}, wf.Warnings...)
	problems = append(problems, t.Check(wf)...)
	res := Result{Workflow: wf}
	for _, p := range problems {
		if p.Severity == workflow.SeverityWarning {
			res.Warnings = append(res.Warnings, p)
		}
	}
	res.Warnings.Sort()
	if err := problems.Err(); err != nil {
		return Result{Warnings: res.Warnings}, err
	}
	return res, nil
}

// Problems extracts the problems of a compile error, or nil for other errors.
func Problems(err error) workflow.Problems {
	var ps workflow.Problems
	if errors.As(err, &ps) {
		return ps
	}
	return nil
}

// dedupe drops problems reported twice at the same position with the same message.
func dedupe(ps workflow.Problems) workflow.Problems {
	seen := map[string]bool{}
	out := ps[:0]
	for _, p := range ps {
		if k := p.String(); !seen[k] {
			seen[k] = true
			out = append(out, p)
		}
	}
	return out
}
