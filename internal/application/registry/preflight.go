package registry

import (
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// WorkflowTools lists the tools a workflow refers to, sorted: the tool of every tool step and
// every tool an agent step offers, in parallel blocks too. Names holding templates ({{) are
// left out: they are known only when the step runs.
func WorkflowTools(wf *workflow.Workflow) []string {
	var names []string
	var walk func(steps []workflow.Step)
	walk = func(steps []workflow.Step) {
		for _, s := range steps {
			switch {
			case s.Tool != nil:
				names = append(names, s.Tool.Tool)
			case s.Agent != nil:
				names = append(names, s.Agent.Tools...)
			case s.Parallel != nil:
				walk(s.Parallel.Steps)
			}
		}
	}
	walk(wf.Steps)
	names = slices.DeleteFunc(names, func(n string) bool { return n == "" || strings.Contains(n, "{{") })
	slices.Sort(names)
	return slices.Compact(names)
}

// Preflight checks, before a run starts, that every named tool resolves and that everything
// they need is installed: the error (fault.Invalid) lists each unknown tool with the nearest
// name and each missing dependency with the command that installs it. Nothing is installed.
func (r *Registry) Preflight(names ...string) error {
	var lines []string
	var known []string
	for _, n := range names {
		if _, err := r.resolve(n, nil); err != nil {
			lines = append(lines, err.Error())
			continue
		}
		known = append(known, n)
	}
	missing, err := r.CheckDependencies(known...)
	if err != nil {
		return err
	}
	for _, m := range missing {
		lines = append(lines, m.String())
	}
	if len(lines) == 0 {
		return nil
	}
	return fault.New(fault.Invalid, "%s", strings.Join(lines, "\n"))
}
