package loader

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"

	"github.com/awf-dev/awf/internal/domain/workflow"
)

var (
	sandboxKeys = []string{
		"paths", "commands", "hosts", "network", "limits", "env", "require", "enforce",
		"exec", "backend", "image", "git_hooks",
	}
	pathKeys   = []string{"read", "write", "protect"}
	limitKeys  = []string{"timeout", "output", "memory", "pids", "file_size", "cpu"}
	envKeys    = []string{"allow", "set", "secret"}
	approvKeys = []string{"default", "rules", "timeout"}
	ruleKeys   = []string{"tool", "when", "decision"}
	toolKeys   = []string{
		"name", "builtin", "description", "command", "parameters", "approval", "restrictions",
		"use", "max_calls", "idempotent", "read_only", "cache", "timeout", "verify",
	}
	paramKeys       = []string{"name", "type", "description", "required", "default", "enum"}
	restrictionKeys = []string{"paths", "commands", "hosts", "exec"}
)

// policy decodes the sandbox: block.
func (d *decoder) policy(path string, raw ast.Node) *workflow.Policy {
	o := d.object(path, "\"sandbox\"", raw)
	if o == nil {
		return nil
	}
	o.checkKeys("sandbox", sandboxKeys)
	p := &workflow.Policy{
		Commands: o.strings("commands"), Hosts: o.strings("hosts"), Network: o.str("network"),
		Require: o.strings("require"), Enforce: o.str("enforce"), Exec: o.str("exec"), Backend: o.str("backend"),
		Image: o.str("image"), GitHooks: o.boolean("git_hooks"), Pos: o.pos,
	}
	if sub := d.sub(o, "paths"); sub != nil {
		sub.checkKeys("sandbox paths", pathKeys)
		p.Paths = workflow.PathPolicy{Read: sub.strings("read"), Write: sub.strings("write"), Protect: sub.strings("protect")}
	}
	if sub := d.sub(o, "limits"); sub != nil {
		sub.checkKeys("sandbox limits", limitKeys)
		p.Limits = workflow.Limits{
			Timeout: sub.duration("timeout"), Output: sub.size("output"), Memory: sub.size("memory"),
			PIDs: sub.integer("pids"), FileSize: sub.size("file_size"),
		}
		if cpu := sub.number("cpu"); cpu != nil {
			p.Limits.CPU = *cpu
		}
	}
	if sub := d.sub(o, "env"); sub != nil {
		sub.checkKeys("sandbox env", envKeys)
		p.Env = workflow.EnvPolicy{Allow: sub.strings("allow"), Set: sub.strmap("set"), Secret: sub.strings("secret")}
	}
	return p
}

// sub decodes a nested mapping of an object; nil when absent or not a mapping (reported).
func (d *decoder) sub(o *object, key string) *object {
	raw, ok := o.raw(key)
	if !ok {
		return nil
	}
	return d.object(o.child(key), fmt.Sprintf("%q", key), raw)
}

// approval decodes the approval: block.
func (d *decoder) approval(path string, raw ast.Node) *workflow.ApprovalPolicy {
	o := d.object(path, "\"approval\"", raw)
	if o == nil {
		return nil
	}
	o.checkKeys("approval", approvKeys)
	a := &workflow.ApprovalPolicy{Default: o.str("default"), Timeout: o.duration("timeout"), Pos: o.pos}
	items, _ := o.list("rules")
	for i, item := range items {
		rpath := fmt.Sprintf("%s[%d]", o.child("rules"), i)
		d.record(rpath, d.pos(item))
		r := d.object(rpath, "an approval rule", item)
		if r == nil {
			a.Rules = append(a.Rules, workflow.ApprovalRule{Decision: workflow.ApprovalDeny}) // keeps indexes aligned
			continue
		}
		r.checkKeys("approval rule", ruleKeys)
		a.Rules = append(a.Rules, workflow.ApprovalRule{
			Tool: r.str("tool"), When: r.str("when"), Decision: r.str("decision"), Pos: r.pos,
		})
	}
	return a
}

// tools decodes the tools: list.
func (d *decoder) tools(o *object) []workflow.ToolSpec {
	items, _ := o.list("tools")
	var out []workflow.ToolSpec
	for i, item := range items {
		path := fmt.Sprintf("tools[%d]", i)
		d.record(path, d.pos(item))
		t := d.object(path, "a tool", item)
		if t == nil {
			out = append(out, workflow.ToolSpec{Pos: d.pos(item)}) // keeps indexes aligned with paths
			continue
		}
		name := t.str("name")
		t.checkKeys(describeNamed("tool", name), toolKeys)
		spec := workflow.ToolSpec{
			Name: name, Builtin: t.boolean("builtin"), Description: t.str("description"),
			Command: t.str("command"), Verify: t.str("verify"), Approval: t.str("approval"), Use: t.str("use"),
			MaxCalls: t.integer("max_calls"), Idempotent: t.boolean("idempotent"),
			ReadOnly: t.boolean("read_only"), Cache: t.boolean("cache"),
			Timeout: t.duration("timeout"), Pos: t.pos,
		}
		spec.Parameters = d.params(t)
		if r := d.sub(t, "restrictions"); r != nil {
			r.checkKeys("tool restrictions", restrictionKeys)
			spec.Restrictions = &workflow.Restrictions{
				Paths: r.strings("paths"), Commands: r.strings("commands"), Hosts: r.strings("hosts"),
				Exec: r.str("exec"),
			}
		}
		out = append(out, spec)
	}
	return out
}

// params decodes a custom tool's parameters list.
func (d *decoder) params(t *object) []workflow.Param {
	items, _ := t.list("parameters")
	var out []workflow.Param
	for i, item := range items {
		path := fmt.Sprintf("%s[%d]", t.child("parameters"), i)
		d.record(path, d.pos(item))
		p := d.object(path, "a parameter", item)
		if p == nil {
			out = append(out, workflow.Param{Pos: d.pos(item)}) // keeps indexes aligned with paths
			continue
		}
		p.checkKeys("parameter", paramKeys)
		param := workflow.Param{
			Name: p.str("name"), Type: workflow.InputType(p.str("type")),
			Description: p.str("description"), Required: p.boolean("required"), Pos: p.pos,
		}
		param.Default, _ = p.value("default")
		if enum, ok := p.value("enum"); ok {
			list, isList := enum.([]any)
			if !isList {
				_, epos, _ := p.get("enum")
				d.errorf(p.child("enum"), epos, "", "\"enum\" must be a list of allowed values")
			}
			param.Enum = list
		}
		out = append(out, param)
	}
	return out
}

// describeNamed names a thing for messages: `tool "x"`, or just "tool" when it has no name.
func describeNamed(kind, name string) string {
	if name == "" {
		return kind
	}
	return fmt.Sprintf("%s %q", kind, name)
}
