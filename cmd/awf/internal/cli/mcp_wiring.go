package cli

import (
	"fmt"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
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
