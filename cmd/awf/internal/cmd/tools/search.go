package tools

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// SearchOptions are everything `awf tools search` needs.
type SearchOptions struct {
	IO       *iostreams.IOStreams
	Factory  *cmdutil.Factory
	Query    string
	Tags     []string
	AllTags  bool
	Workflow string
	Output   cmdutil.Format
}

func newCmdSearch(f *cmdutil.Factory, runF RunFunc) *cobra.Command {
	opts := &SearchOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "search [QUERY]",
		Short: "Find tools by name and tags",
		Long: `Find tools whose name contains QUERY (case-insensitive) and that carry any of the
--tag values (all of them with --all-tags). Without QUERY, tags alone select.`,
		Example: `  awf tools search grep
  awf tools search --tag files --tag example --all-tags`,
		Args:              cmdutil.MaxArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Query = args[0]
			}
			return dispatch(cmd.Context(), runF, opts, runSearch)
		},
	}
	cmd.Flags().StringSliceVar(&opts.Tags, "tag", nil, "tools with this `TAG` (repeatable)")
	cmd.Flags().BoolVar(&opts.AllTags, "all-tags", false, "a tool must carry every --tag, not any")
	cmd.Flags().StringVar(&opts.Workflow, "workflow", "", "include the tools of the workflow `FILE`")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

func runSearch(_ context.Context, opts *SearchOptions) error {
	set, _, err := toolSet(opts.Factory, opts.IO, opts.Workflow)
	if err != nil {
		return err
	}
	q := tool.Query{NameContains: opts.Query, Tags: opts.Tags, MatchAll: opts.AllTags}
	return writeList(opts.IO, opts.Output, set.Registry.Search(q))
}
