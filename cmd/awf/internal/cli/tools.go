package cli

import (
	"context"
	"sync"

	"github.com/awf-dev/awf/cmd/awf/internal/toolwire"

	"github.com/awf-dev/awf/cmd/awf/internal/approver"
	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/internal/application/approval"
	"github.com/awf-dev/awf/internal/application/govern"
	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/audit"
	"github.com/awf-dev/awf/internal/infrastructure/manifest"
	"github.com/awf-dev/awf/internal/infrastructure/schema"
)

// toolWiring holds what is built once per process for tools: the audit log (one appender)
// and the terminal approver (one reader of standard input).
type toolWiring struct {
	f        *cmdutil.Factory
	auditLog func() (*audit.Log, error)
	approver func() *approver.Terminal
}

func newToolWiring(f *cmdutil.Factory) *toolWiring {
	w := &toolWiring{f: f}
	w.auditLog = sync.OnceValues(func() (*audit.Log, error) {
		cfg, err := f.Config()
		if err != nil {
			return nil, err
		}
		log, err := audit.Open(cfg.AuditLog, audit.Options{})
		if err == nil {
			f.Cleanup = append(f.Cleanup, func() { log.Close() })
		}
		return log, err
	})
	w.approver = sync.OnceValue(func() *approver.Terminal {
		return approver.New(f.IO, approver.Options{Pause: func() func() {
			if f.Pause == nil {
				return func() {}
			}
			return f.Pause()
		}})
	})
	return w
}

// build returns the governed tool set for a run of wf: built-ins restricted to workDir, the
// workflow's tools, project, user and installed tools, behind the approval flow and the audit
// log.
func (w *toolWiring) build(wf *workflow.Workflow, workDir string) (*cmdutil.Tools, error) {
	f := w.f
	// The audit log is opened at its first record, so that a command that builds the tools
	// only to describe them (awf tools list, show, search, check) writes nothing: no .awf.
	log := ports.AuditSinkFunc(func(ctx context.Context, rec ports.AuditRecord) error {
		l, err := w.auditLog()
		if err != nil {
			return err
		}
		return l.Record(ctx, rec)
	})
	// Before approval.New: it rewrites server.tool references (rules included) to the
	// registered names.
	mcpTools, err := mcpSource(f, wf, workDir)
	if err != nil {
		return nil, err
	}
	var asker ports.Approver = w.approver()
	if f.Approver != nil {
		asker = f.Approver()
	}
	flow, err := approval.New(approval.Config{
		Policy: wf.Approval, Tools: wf.Tools, Override: f.Flags.Approve, Yes: f.Flags.Yes,
		NonInteractive: f.Flags.NonInteractive, Approver: asker, Eval: f.Templater(),
	})
	if err != nil {
		return nil, err
	}
	gate, err := govern.New(govern.Deps{
		Approval: flow, Policy: toolwire.NewPolicyReport(wf, workDir), Audit: log, Clock: ports.ClockFunc(nowFunc), Log: f.Log(),
		Secrets: govern.SecretValues(wf.Sandbox, keyEnvNames(f), f.Environ),
	})
	if err != nil {
		return nil, err
	}
	validator := schema.New()
	reg, err := registry.New(registry.Config{
		Validator: validator, Clock: ports.ClockFunc(nowFunc),
		Stages: []registry.Stage{gate.Stage}, Context: tool.Context{WorkDir: workDir},
	})
	if err != nil {
		return nil, err
	}
	procs, stop := toolwire.Processes(workDir, f.HelperPath, f.Log())
	f.Cleanup = append(f.Cleanup, stop)
	warnings, err := w.load(reg, wf, workDir, procs, mcpTools)
	if err != nil {
		return nil, err
	}
	pinWarnings, err := toolwire.CheckPins(wf.Path, toolwire.Pins(reg.List()))
	if err != nil {
		return nil, err
	}
	warnings = append(warnings, pinWarnings...)
	return &cmdutil.Tools{Registry: reg, Invoker: gate.Invoker(reg), Refuser: gate, Validator: validator, Warnings: warnings,
		Audit: log, Settler: w.approver()}, nil
}

// load loads into reg every tool a run of wf in workDir can reach: built-ins, the workflow's
// tools, project, user and installed tools, and mcpTools (nil: none).
func (w *toolWiring) load(reg *registry.Registry, wf *workflow.Workflow, workDir string, procs ports.ProcessRunner, mcpTools ports.ToolSource) (workflow.Problems, error) {
	f := w.f
	builtins, workflowTools, err := toolwire.Sources(wf, workDir, f.Templater(), f.Environ, procs, nil)
	if err != nil {
		return nil, err
	}
	project, err := cmdutil.ProjectTools(f, workDir)
	if err != nil {
		return nil, err
	}
	sources := []ports.ToolSource{builtins, workflowTools, project, manifest.User(f.Getenv),
		manifest.Installed{Dir: manifest.DefaultInstallDir(f.Getenv)}}
	if mcpTools != nil {
		sources = append(sources, mcpTools)
	}
	return reg.Load(sources...)
}

// pins is Factory.Pins: the pins of the tools a run of wf in workDir would use, its MCP
// servers started as a run starts them, from a registry with no pipeline stage (nothing is
// approved or audited: nothing runs), not checked against any lock file.
func (w *toolWiring) pins(wf *workflow.Workflow, workDir string) (map[string]tool.Pin, workflow.Problems, error) {
	mcpTools, err := mcpSource(w.f, wf, workDir)
	if err != nil {
		return nil, nil, err
	}
	reg, warnings, err := w.registry(wf, workDir, schema.New(), mcpTools)
	if err != nil {
		return nil, warnings, err
	}
	return toolwire.Pins(reg.List()), warnings, nil
}

// keyEnvNames lists the variables holding provider API keys, by the resolved configuration.
func keyEnvNames(f *cmdutil.Factory) []string {
	cfg, _ := f.Config()
	return toolwire.KeyEnvNames(cfg)
}
