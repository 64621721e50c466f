// Package compile is the use case behind `awf validate` and the first half of `awf run`: load a
// workflow file, validate it, and compile every template and expression in it, so that every
// problem that can be known before running is reported at once, with its position.
package compile

import (
	"errors"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// Result is a compiled workflow with the warnings found on the way. Workflow is nil when the
// file did not compile.
type Result struct {
	Workflow *workflow.Workflow
	Warnings workflow.Problems
}

// File loads, validates and compiles the workflow at path. Load and template errors are
// returned together as one workflow.Problems error (fault.Invalid); I/O errors keep the kind
// the loader gave them.
func File(l ports.WorkflowLoader, t ports.Templater, path string) (Result, error) {
	wf, err := l.Load(path)
	if err == nil {
		return Workflow(t, wf)
	}
	loadProblems := Problems(err)
	if wf == nil || loadProblems == nil {
		return Result{}, err
	}
	// The loader returned what it could decode: report its template problems in the same pass.
	res, checkErr := Workflow(t, wf)
	all := append(workflow.Problems{}, loadProblems...)
	all = append(all, Problems(checkErr)...)
	all.Sort()
	return Result{Warnings: res.Warnings}, dedupe(all)
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
