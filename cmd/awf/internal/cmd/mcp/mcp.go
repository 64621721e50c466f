// Package mcp implements `awf mcp serve`: awf's tools served over the Model Context Protocol
// (stdio or streamable HTTP), every call through the governed path. It also builds that
// governed toolset (BuildToolset): the tool registry with the built-ins, the project's and
// user's tools, the workflow's tools and MCP servers, behind the call gate, policy, approval
// and audit log.
package mcp

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
)

// NewCmdMCP returns `awf mcp` with its serve subcommand. runF replaces serve's run function in
// flag tests.
func NewCmdMCP(f *cmdutil.Factory, runF func(context.Context, *ServeOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Serve awf's governed tools over the Model Context Protocol",
		Long: `Model Context Protocol commands. awf serves its tools to MCP clients (Claude Code, Codex,
Gemini CLI, IDEs) with "awf mcp serve"; workflows use other MCP servers' tools through
mcp_servers: (see docs/mcp.md).`,
		Args: cmdutil.MaxArgs(0),
	}
	cmd.AddCommand(NewCmdServe(f, runF))
	return cmd
}
