package tools

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// ListOptions are everything `awf tools list` needs.
type ListOptions struct {
	IO       *iostreams.IOStreams
	Factory  *cmdutil.Factory
	Tags     []string
	Search   string
	Workflow string
	Output   cmdutil.Format
}

func newCmdList(f *cmdutil.Factory, runF RunFunc) *cobra.Command {
	opts := &ListOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the tools a run can call",
		Long: `List every tool the registry resolves, sorted by name: for each bare name the
definition it resolves to (with the definitions it shadows), and each installed owner/name at
its highest version. With --workflow, the workflow's own tools: entries are included.`,
		Example: `  awf tools list
  awf tools list --tag files --search re
  awf tools list --workflow review.yaml --output json`,
		Args: cmdutil.MaxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return dispatch(cmd.Context(), runF, opts, runList)
		},
	}
	cmd.Flags().StringSliceVar(&opts.Tags, "tag", nil, "only tools with this `TAG` (repeatable; any of them)")
	cmd.Flags().StringVar(&opts.Search, "search", "", "only tools whose name contains `TEXT` (case-insensitive)")
	cmd.Flags().StringVar(&opts.Workflow, "workflow", "", "include the tools of the workflow `FILE`")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

func runList(_ context.Context, opts *ListOptions) error {
	set, _, err := toolSet(opts.Factory, opts.IO, opts.Workflow)
	if err != nil {
		return err
	}
	return writeList(opts.IO, opts.Output, set.Registry.Search(tool.Query{NameContains: opts.Search, Tags: opts.Tags}))
}
