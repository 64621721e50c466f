package compile

import (
	"fmt"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// ResolvePolicies returns a copy of wf whose sandbox policy and tool restrictions have their
// templates resolved with scope (inputs, env, workflow, run): policies are fixed once, when a
// run starts, so nothing a step or a model produces later can change them. wf is not modified.
func ResolvePolicies(t ports.Templater, wf *workflow.Workflow, scope ports.Scope) (*workflow.Workflow, error) {
	out := *wf
	r := resolver{t: t, scope: scope}
	if wf.Sandbox != nil {
		p := *wf.Sandbox
		p.Paths.Read = r.list("sandbox.paths.read", p.Paths.Read)
		p.Paths.Write = r.list("sandbox.paths.write", p.Paths.Write)
		p.Paths.Protect = r.list("sandbox.paths.protect", p.Paths.Protect)
		p.Commands = r.list("sandbox.commands", p.Commands)
		p.Hosts = r.list("sandbox.hosts", p.Hosts)
		if p.Env.Set != nil {
			set := make(map[string]string, len(p.Env.Set))
			for k, v := range p.Env.Set {
				set[k] = r.one("sandbox.env.set."+k, v)
			}
			p.Env.Set = set
		}
		out.Sandbox = &p
	}
	out.Tools = make([]workflow.ToolSpec, len(wf.Tools))
	for i, spec := range wf.Tools {
		if spec.Restrictions != nil {
			rs := *spec.Restrictions
			field := fmt.Sprintf("tools[%d].restrictions", i)
			rs.Paths = r.list(field+".paths", rs.Paths)
			rs.Commands = r.list(field+".commands", rs.Commands)
			rs.Hosts = r.list(field+".hosts", rs.Hosts)
			spec.Restrictions = &rs
		}
		out.Tools[i] = spec
	}
	if r.err != nil {
		return nil, r.err
	}
	return &out, nil
}

type resolver struct {
	t     ports.Templater
	scope ports.Scope
	err   error
}

// list renders each entry; the first error is kept, classified as a usage error (the value
// that is missing is an input the user gave or did not give).
func (r *resolver) list(field string, in []string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = r.one(fmt.Sprintf("%s[%d]", field, i), s)
	}
	return out
}

func (r *resolver) one(field, s string) string {
	v, err := r.t.Render(s, r.scope)
	if err != nil && r.err == nil {
		r.err = fault.Wrap(fault.Usage, fmt.Errorf("%s: %w", field, err))
	}
	return v
}
