package cli

import (
	"context"
	"strings"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/process"
	"github.com/awf-dev/awf/internal/infrastructure/providers/factory"
	"github.com/awf-dev/awf/internal/infrastructure/schema"
)

// describe is Factory.Describe: for --dry-run, a registry of the tools a run of wf could reach
// (built-ins, the workflow's tools, project, user and installed tools) with no pipeline stage,
// so that it opens no audit log and asks nobody, and the run's provider source, whose Close is
// never called, so that no --record cassette is written.
func (w *toolWiring) describe(wf *workflow.Workflow, workDir string, opts cmdutil.RunnerOptions) (ports.ToolCatalog, ports.ProviderSource, error) {
	catalog, _, err := w.catalog(wf, workDir)
	if err != nil {
		return nil, nil, err
	}
	providers, err := providerSource(w.f, w.f.Environ, opts)
	if err != nil {
		return nil, nil, err
	}
	return catalog, providers, nil
}

// catalog is Factory.Catalog: the tools a run of wf in workDir could reach, described as
// describe does, without models, and the validator of their arguments.
func (w *toolWiring) catalog(wf *workflow.Workflow, workDir string) (ports.ToolCatalog, ports.SchemaValidator, error) {
	validator := schema.New()
	reg, _, err := w.registry(wf, workDir, validator, nil)
	if err != nil {
		return nil, nil, err
	}
	return dryCatalog{reg: reg, servers: wf.MCPServers}, validator, nil
}

// toolRegistry is Factory.ToolRegistry: the registry catalog describes.
func (w *toolWiring) toolRegistry(wf *workflow.Workflow, workDir string) (*registry.Registry, error) {
	reg, _, err := w.registry(wf, workDir, schema.New(), nil)
	return reg, err
}

// registry loads the tools a run of wf in workDir could reach, and mcpTools (nil: none), into
// a registry with no pipeline stage: nothing is approved or audited, and nothing runs. The
// warnings are the registry's.
func (w *toolWiring) registry(wf *workflow.Workflow, workDir string, validator ports.SchemaValidator, mcpTools ports.ToolSource) (*registry.Registry, workflow.Problems, error) {
	reg, err := registry.New(registry.Config{
		Validator: validator, Clock: ports.ClockFunc(nowFunc), Context: tool.Context{WorkDir: workDir},
	})
	if err != nil {
		return nil, nil, err
	}
	// Nothing runs: the process runner only completes the tools' configuration.
	warnings, err := w.load(reg, wf, workDir, process.New(process.Config{}), mcpTools)
	if err != nil {
		return nil, warnings, err
	}
	return reg, warnings, nil
}

// dryCatalog describes the registry's tools. The tools of the workflow's MCP servers
// (server.tool, server.*) are known only once their servers run, which a dry run does not do:
// a step using one gets an error saying so instead of "unknown tool".
type dryCatalog struct {
	reg     ports.ToolCatalog
	servers map[string]workflow.MCPServer
}

func (c dryCatalog) Describe(ctx context.Context, q ports.ToolQuery) ([]ports.ToolInfo, error) {
	for _, name := range q.Names {
		if server, _, ok := strings.Cut(name, "."); ok {
			if _, mcp := c.servers[server]; mcp {
				return nil, fault.New(fault.Invalid, "%s is a tool of MCP server %q, and a dry run starts no server", name, server)
			}
		}
	}
	return c.reg.Describe(ctx, q)
}

// providerSource resolves agent steps' providers with the configuration and the run's model
// settings: the one place both runs and dry runs build it.
func providerSource(f *cmdutil.Factory, environ []string, opts cmdutil.RunnerOptions) (*factory.Factory, error) {
	cfg, err := f.Config()
	if err != nil {
		return nil, err
	}
	return factory.New(factory.Options{
		Getenv: f.Getenv, Environ: environ, WorkDir: opts.WorkDir, Providers: cfg.Providers,
		DefaultProvider: cfg.Provider, DefaultModel: cfg.Model,
		Provider: opts.Provider, Model: opts.Model, Replay: opts.Replay, Record: opts.Record,
		AgentMCP: agentServe(f, cfg),
	})
}
