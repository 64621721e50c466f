package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/config"
	awfmcp "github.com/awf-dev/awf/internal/infrastructure/mcp"
)

// mcpSource is the tool source of wf's MCP servers for a run: it starts the servers wf's
// steps use (once; the others never start), rewrites wf's references to their tools (steps'
// server.tool and server.*, approval rules' patterns) into the registered names server__tool,
// and stops the servers when the command ends (f.Cleanup). Call it before approval.New, which
// reads the rules, and load the source into the run's registry with the others. Problems (a
// server that does not start, a tool it does not have) are a fault.Invalid error with
// positions.
func mcpSource(f *cmdutil.Factory, wf *workflow.Workflow, workDir string) (ports.ToolSource, error) {
	src := awfmcp.ForWorkflow(wf, awfmcp.SourceConfig{Dir: workDir, Environ: f.Environ, Version: f.Version, Log: f.Log()})
	f.Cleanup = append(f.Cleanup, func() {
		if err := src.Close(); err != nil {
			f.Log().Warn("stop MCP servers", "error", err)
		}
	})
	if probs := src.Resolve(wf); len(probs) > 0 {
		return nil, fmt.Errorf("tools: %w", probs)
	}
	return src, nil
}

// agentServe is how the agent CLIs of a run's cli providers start `awf mcp serve` for a step
// (factory.Options.AgentMCP): this executable, with the run's audit log and state directory
// as absolute paths, and the approval flags of the command line. The paths are resolved here
// because an agent CLI may start its MCP servers in another directory or with a reduced
// environment, where awf's configuration would resolve to other files and the calls would
// be audited elsewhere. nil when the executable cannot be found: cli providers then describe
// the tools in the prompt.
func agentServe(f *cmdutil.Factory, cfg config.Config) *awfmcp.ServeCommand {
	exe, err := os.Executable()
	if err != nil {
		f.Log().Warn("agent CLIs cannot be given tools through MCP: awf's executable is unknown", "error", err)
		return nil
	}
	flags := make([]string, 0, 8)
	for _, p := range []struct{ flag, path string }{{"--audit-log", cfg.AuditLog}, {"--state-dir", cfg.StateDir}} {
		abs, err := filepath.Abs(p.path)
		if err != nil {
			f.Log().Warn("agent CLIs cannot be given tools through MCP", "flag", p.flag, "error", err)
			return nil
		}
		flags = append(flags, p.flag, abs)
	}
	if f.Flags.NonInteractive != "" {
		flags = append(flags, "--non-interactive="+f.Flags.NonInteractive)
	}
	if f.Flags.Approve != "" {
		flags = append(flags, "--approve", f.Flags.Approve)
	}
	if f.Flags.Yes {
		flags = append(flags, "--yes")
	}
	return &awfmcp.ServeCommand{Executable: exe, Flags: flags}
}
