package compile

import (
	"context"
	"fmt"
	"strings"

	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// Tools checks the tools wf's steps name against catalog, the tools a run of wf can reach:
// the tool of every tool step and each name in an agent step's tools must be known (else the
// problem says the nearest name), and a tool step's args must fit the tool's parameters
// (registry.StaticArgs, with validator). Names with a template, and tools of the workflow's
// MCP servers (known only once their servers run), are left to the run. Each problem has the
// position of the step's field.
func Tools(ctx context.Context, wf *workflow.Workflow, catalog ports.ToolCatalog, validator ports.SchemaValidator) workflow.Problems {
	c := toolChecker{ctx: ctx, wf: wf, catalog: catalog, validator: validator}
	c.steps("steps", wf.Steps)
	return c.probs
}

// toolChecker accumulates the problems of one Tools call.
type toolChecker struct {
	ctx       context.Context
	wf        *workflow.Workflow
	catalog   ports.ToolCatalog
	validator ports.SchemaValidator
	probs     workflow.Problems
}

func (c *toolChecker) steps(path string, steps []workflow.Step) {
	for i := range steps {
		s, at := &steps[i], fmt.Sprintf("%s[%d]", path, i)
		switch {
		case s.Parallel != nil:
			c.steps(at+".steps", s.Parallel.Steps)
		case s.Tool != nil:
			if info, ok := c.describe(s, at+".tool", "tool", s.Tool.Tool); ok && len(s.Tool.Args) > 0 {
				c.args(s, at+".args", info)
			}
		case s.Agent != nil:
			for _, name := range s.Agent.Tools {
				c.describe(s, at+".tools", "tools", name)
			}
		}
	}
}

// describe looks name up, reporting an unknown tool at the step's field; ok is false when it is
// unknown or left to the run.
func (c *toolChecker) describe(s *workflow.Step, field, key, name string) (ports.ToolInfo, bool) {
	if name == "" || strings.Contains(name, "{{") || strings.Contains(name, "*") || c.mcpTool(name) {
		return ports.ToolInfo{}, false
	}
	infos, err := c.catalog.Describe(c.ctx, ports.ToolQuery{Names: []string{name}, Step: s.Name, WorkDir: c.wf.Dir})
	if err == nil && len(infos) != 1 {
		err = fmt.Errorf("tool %q: the catalog described %d tools", name, len(infos))
	}
	if err != nil {
		c.probs = append(c.probs, workflow.Problem{Pos: s.FieldPos(key), Field: field,
			Msg: fmt.Sprintf("step %q: %v", s.Name, err)})
		return ports.ToolInfo{}, false
	}
	return infos[0], true
}

// mcpTool reports whether name is server.tool for one of the workflow's MCP servers.
func (c *toolChecker) mcpTool(name string) bool {
	server, _, ok := strings.Cut(name, ".")
	_, known := c.wf.MCPServers[server]
	return ok && known
}

// args checks a tool step's arguments against the tool's parameters.
func (c *toolChecker) args(s *workflow.Step, field string, info ports.ToolInfo) {
	errs, err := registry.StaticArgs(c.validator, info.Schema.Parameters, s.Tool.Args)
	if err != nil {
		return // the tool's own schema is broken: its definition's problem, reported there
	}
	for _, e := range errs {
		c.probs = append(c.probs, workflow.Problem{Pos: s.FieldPos("args"), Field: field,
			Msg: fmt.Sprintf("step %q: args%s: %s (tool %s)", s.Name, strings.TrimPrefix(e.Path, "$"), e.Message, s.Tool.Tool)})
	}
}
