package mcp

import (
	"errors"
	"fmt"
	"time"

	"github.com/awf-dev/awf/internal/application/plan"

	"github.com/awf-dev/awf/cmd/awf/internal/toolwire"
	"github.com/awf-dev/awf/internal/application/compile"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/internal/application/approval"
	"github.com/awf-dev/awf/internal/application/govern"
	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/audit"
	"github.com/awf-dev/awf/internal/infrastructure/manifest"
	awfmcp "github.com/awf-dev/awf/internal/infrastructure/mcp"
	"github.com/awf-dev/awf/internal/infrastructure/schema"
)

// ToolsetRequest says what a governed toolset is built for.
type ToolsetRequest struct {
	// Workflow supplies the tools: list, sandbox and approval policies and mcp_servers; nil
	// means the built-ins and the project's and user's tools under the default policy. Its
	// references to MCP tools (server.tool, server.* in steps and approval rules) are
	// rewritten in place into registered names (server__tool).
	Workflow *workflow.Workflow
	// Inputs are the workflow's resolved inputs, which its templates (restriction paths,
	// {{inputs.x}} in custom commands) read.
	Inputs map[string]any
	// WorkDir is the absolute working directory: file tools' root, commands' directory.
	WorkDir string
	RunID   string
	// Approver asks a person; nil means nobody can be asked (the non-interactive policy).
	Approver ports.Approver
	// MCPTools are more tool references (beyond the workflow's steps) whose MCP servers
	// must start: `awf mcp serve --tools fs.*`.
	MCPTools []string
	Clock    ports.Clock
}

// Toolset is a tool registry whose every call runs through the governed path (call gate,
// sandbox policy, approval, audit) — what agent steps use, and what `awf mcp serve` exposes.
// Close it when done: it stops MCP servers and closes the audit log.
type Toolset struct {
	Registry *registry.Registry
	// Invoker runs calls: the registry wrapped so that calls refused before the governed
	// stage (unknown tool, invalid arguments) are audited too.
	Invoker ports.ToolInvoker
	// Refuser audits calls refused before Invoker (an unserved name, non-object arguments).
	Refuser ports.CallRefuser
	// MCP is the workflow's MCP servers as a tool source.
	MCP *awfmcp.Source
	// Scope is the template scope calls carry (inputs, env, workflow, run).
	Scope ports.Scope
	// Warnings are the problems that did not stop loading (a tool shadowing another).
	Warnings workflow.Problems
	// AuditPath is the audit log's file.
	AuditPath string

	flow   *approval.Flow
	runID  string
	closes []func() error
}

// BuildToolset wires the tools of req into a governed toolset, with the factory's
// configuration (audit log), logger, templater and global flags (--approve, --yes,
// --non-interactive). The sandbox policy check is ports.AllowAll until a policy checker
// exists; the file and http tools enforce their own path and host rules (L1) and processes
// get the workflow's policy. Errors: fault.Invalid for a workflow whose tools do not load
// (collisions, MCP servers that do not start), fault.System for an audit log that cannot
// be opened.
func BuildToolset(f *cmdutil.Factory, req ToolsetRequest) (ts *Toolset, err error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	if req.Clock == nil {
		req.Clock = ports.ClockFunc(time.Now)
	}
	log := f.Log()
	wf := req.Workflow
	if wf == nil {
		wf = &workflow.Workflow{}
	}
	ts = &Toolset{runID: req.RunID, AuditPath: cfg.AuditLog}
	defer func() {
		if err != nil {
			err = errors.Join(err, ts.Close())
			ts = nil
		}
	}()
	inputs := req.Inputs
	if inputs == nil {
		inputs = map[string]any{}
	}
	ts.Scope = plan.BaseScope(wf, inputs, req.RunID, req.WorkDir, f.Environ)
	if wf, err = compile.ResolvePolicies(f.Templater(), wf, ts.Scope); err != nil {
		return ts, err
	}

	auditLog, err := audit.Open(cfg.AuditLog, audit.Options{})
	if err != nil {
		return ts, err
	}
	ts.closes = append(ts.closes, auditLog.Close)
	// The MCP servers start first: their tools' names replace the workflow's references
	// (steps, approval rules) before anything reads them.
	ts.MCP = awfmcp.NewSource(awfmcp.SourceConfig{Servers: wf.MCPServers,
		Start: mcpServers(wf, append(awfmcp.Referenced(wf), req.MCPTools...)),
		Dir:   req.WorkDir, Environ: f.Environ, Version: f.Version, Log: log})
	ts.closes = append(ts.closes, ts.MCP.Close)
	if probs := ts.MCP.Resolve(wf); len(probs) > 0 {
		return ts, fmt.Errorf("tools: %w", probs)
	}
	ts.flow, err = approval.New(approval.Config{
		Policy: wf.Approval, Tools: wf.Tools, Override: f.Flags.Approve, Yes: f.Flags.Yes,
		NonInteractive: f.Flags.NonInteractive, Approver: req.Approver, Eval: f.Templater(),
	})
	if err != nil {
		return ts, err
	}
	gate, err := govern.New(govern.Deps{Approval: ts.flow, Audit: auditLog, Clock: req.Clock, Log: log,
		Policy: toolwire.NewPolicyReport(wf, req.WorkDir), Secrets: govern.SecretValues(wf.Sandbox, toolwire.KeyEnvNames(cfg), f.Environ)})
	if err != nil {
		return ts, err
	}
	ts.Registry, err = registry.New(registry.Config{Validator: schema.New(), Clock: req.Clock,
		Stages: []registry.Stage{gate.Stage}, Context: tool.Context{WorkDir: req.WorkDir}})
	if err != nil {
		return ts, err
	}
	ts.Invoker, ts.Refuser = gate.Invoker(ts.Registry), gate

	sources, err := ts.sources(f, wf, req)
	if err != nil {
		return ts, err
	}
	probs, err := ts.Registry.Load(sources...)
	for _, p := range probs {
		if p.Severity == workflow.SeverityWarning {
			ts.Warnings = append(ts.Warnings, p)
		}
	}
	if err != nil {
		return ts, fmt.Errorf("tools: %w", err)
	}
	pins, err := toolwire.CheckPins(wf.Path, toolwire.Pins(ts.Registry.List()))
	ts.Warnings = append(ts.Warnings, pins...)
	return ts, err
}

// sources are where the toolset's tools come from, as for runs (toolwire): built-ins and the
// workflow's tools under its policy, resolved once from the toolset's inputs, then the
// project's, user's and installed tools and the workflow's MCP servers.
func (ts *Toolset) sources(f *cmdutil.Factory, wf *workflow.Workflow, req ToolsetRequest) ([]ports.ToolSource, error) {
	procs, stop := toolwire.Processes(req.WorkDir, f.HelperPath, f.Log())
	ts.closes = append(ts.closes, func() error { stop(); return nil })
	builtins, workflowTools, err := toolwire.Sources(wf, req.WorkDir, f.Templater(), f.Environ, procs, ts.Scope)
	if err != nil {
		return nil, err
	}
	project, err := cmdutil.ProjectTools(f, req.WorkDir)
	if err != nil {
		return nil, err
	}
	return []ports.ToolSource{
		builtins,
		project,
		manifest.User(f.Getenv),
		manifest.Installed{Dir: manifest.DefaultInstallDir(f.Getenv)},
		workflowTools,
		ts.MCP,
	}, nil
}

// mcpServers names the servers that refs (workflow spellings or server names) use.
func mcpServers(wf *workflow.Workflow, refs []string) []string {
	servers := make([]string, 0, len(wf.MCPServers))
	for name := range wf.MCPServers {
		servers = append(servers, name)
	}
	out := []string{}
	for _, r := range refs {
		name := r
		if ref, ok := awfmcp.ParseRef(r, servers); ok {
			name = ref.Server
		}
		if _, declared := wf.MCPServers[name]; declared {
			out = append(out, name)
		}
	}
	return out
}

// Close stops the MCP servers, forgets the run's approvals and quotas and closes the audit
// log. Safe to call more than once.
func (ts *Toolset) Close() error {
	if ts == nil {
		return nil
	}
	if ts.flow != nil {
		ts.flow.End(ts.runID)
	}
	var errs []error
	for i := len(ts.closes) - 1; i >= 0; i-- {
		errs = append(errs, ts.closes[i]())
	}
	ts.closes = nil
	return errors.Join(errs...)
}
