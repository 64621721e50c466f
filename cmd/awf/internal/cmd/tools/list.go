package tools

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/cmd/awf/internal/render"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/tool"
	awfmcp "github.com/awf-dev/awf/internal/infrastructure/mcp"
)

// ListOptions are everything `awf tools list` needs.
type ListOptions struct {
	IO       *iostreams.IOStreams
	Factory  *cmdutil.Factory
	Tags     []string
	Search   string
	Workflow string
	// MCP lists the tools of the workflow's MCP servers instead of the registry's.
	MCP    bool
	Output cmdutil.Format
}

func newCmdList(f *cmdutil.Factory, runF RunFunc) *cobra.Command {
	opts := &ListOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the tools a run can call",
		Long: `List every tool the registry resolves, sorted by name: for each bare name the
definition it resolves to (with the definitions it shadows), and each installed owner/name at
its highest version. With --workflow, the workflow's own tools: entries are included, and the
tools of its MCP servers that its steps use.

With --mcp (and --workflow), list instead every tool of every MCP server the workflow declares
under mcp_servers:, whether its steps use it or not: awf starts each server, lists its tools and
stops it. Each tool is shown as a step names it (server.tool), with the name the model, the
state file and the audit log use (server__tool), whether the server declares it read-only
(read-only tools are approved automatically unless a rule says otherwise) and its description.
A server that does not start is an error naming it.`,
		Example: `  awf tools list
  awf tools list --tag files --search re
  awf tools list --workflow review.yaml --output json
  awf tools list --workflow review.yaml --mcp`,
		Args: cmdutil.MaxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkList(opts); err != nil {
				return err
			}
			return dispatch(cmd.Context(), runF, opts, runList)
		},
	}
	cmd.Flags().StringSliceVar(&opts.Tags, "tag", nil, "only tools with this `TAG` (repeatable; any of them)")
	cmd.Flags().StringVar(&opts.Search, "search", "", "only tools whose name contains `TEXT` (case-insensitive)")
	cmd.Flags().StringVar(&opts.Workflow, "workflow", "", "include the tools of the workflow `FILE`")
	cmd.Flags().BoolVar(&opts.MCP, "mcp", false, "list the tools of the workflow's MCP servers (starts each of them)")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// checkList rejects flag combinations before anything starts.
func checkList(o *ListOptions) error {
	switch {
	case o.MCP && o.Workflow == "":
		return fault.New(fault.Usage, "--mcp needs --workflow FILE: MCP servers are declared in a workflow's mcp_servers")
	case o.MCP && len(o.Tags) > 0:
		return fault.New(fault.Usage, "--tag does not apply to --mcp: MCP tools have no tags")
	}
	return nil
}

func runList(ctx context.Context, opts *ListOptions) error {
	if opts.MCP {
		return runListMCP(ctx, opts)
	}
	set, _, err := toolSet(opts.Factory, opts.IO, opts.Workflow)
	if err != nil {
		return err
	}
	return writeList(opts.IO, opts.Output, set.Registry.Search(tool.Query{NameContains: opts.Search, Tags: opts.Tags}))
}

// MCPListResult is the JSON object of `awf tools list --mcp`.
type MCPListResult struct {
	Tools []awfmcp.Imported `json:"tools"`
}

// runListMCP starts every MCP server of the workflow, lists their tools and stops them. A
// server that does not start is a fault.Invalid error at its mcp_servers entry.
func runListMCP(_ context.Context, opts *ListOptions) error {
	f := opts.Factory
	wf, workDir, err := loadWorkflow(f, opts.IO, opts.Workflow)
	if err != nil {
		return err
	}
	list, err := awfmcp.ListTools(wf.MCPServers,
		awfmcp.SourceConfig{Dir: workDir, Environ: f.Environ, Version: f.Version, Log: f.Log()})
	if err != nil {
		return fmt.Errorf("MCP servers of %s: %w", opts.Workflow, err)
	}
	out := MCPListResult{Tools: []awfmcp.Imported{}}
	search := strings.ToLower(opts.Search)
	for _, t := range list {
		if strings.Contains(strings.ToLower(t.Ref), search) || strings.Contains(strings.ToLower(t.Name), search) {
			out.Tools = append(out.Tools, t)
		}
	}
	if opts.Output.JSON() {
		return cmdutil.WriteJSON(opts.IO.Out, out)
	}
	switch {
	case len(wf.MCPServers) == 0:
		fmt.Fprintf(opts.IO.ErrOut, "%s declares no MCP servers (mcp_servers:)\n", opts.Workflow)
		return nil
	case len(out.Tools) == 0:
		fmt.Fprintln(opts.IO.ErrOut, "no matching tools")
		return nil
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tREGISTERED\tREAD-ONLY\tDESCRIPTION")
	for _, t := range out.Tools {
		ro := "no"
		if t.ReadOnly {
			ro = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", render.Line(t.Ref), render.Line(t.Name), ro, summary(t.Description, 72))
	}
	return tw.Flush()
}
