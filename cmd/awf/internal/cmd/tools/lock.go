package tools

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/cmd/awf/internal/render"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/infrastructure/toollock"
)

// LockOptions are everything `awf tools lock` needs.
type LockOptions struct {
	IO       *iostreams.IOStreams
	Factory  *cmdutil.Factory
	Workflow string
	Output   cmdutil.Format
}

func newCmdLock(f *cmdutil.Factory, runF RunFunc) *cobra.Command {
	opts := &LockOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "lock --workflow FILE",
		Short: "Pin the tools a workflow uses (write FILE.lock)",
		Long: `Write the lock file of a workflow, FILE.lock beside FILE: for every tool a run of the
workflow can reach but awf's built-ins (the workflow's command tools, project, user and installed
manifests, .tool files, and the tools of the MCP servers its steps use, which are started to list
them), the SHA-256 digests of its description, its parameter schema and, for a tool defined in a
file of its own, that file.

Every later run of the workflow (and awf tools run, awf mcp serve, awf tools list --workflow)
compares the tools with the lock: a tool whose description, schema or definition differs is
refused with its name and what changed, before any model sees it; a tool not in the lock is a
warning, as is every MCP tool of a workflow without a lock. This is the defence against tool
poisoning and rug pulls: review the tools, lock them, commit the lock file, and run awf tools
lock again after reviewing a change.

Exit codes: 0 written, 1 usage, 2 invalid workflow or tool definitions, 3 an MCP server did not
start, 4 system error.`,
		Example: `  awf tools lock --workflow review.yaml
  git diff review.yaml.lock`,
		Args:              cmdutil.MaxArgs(0),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Workflow == "" {
				return fault.New(fault.Usage, "need --workflow FILE: a lock file pins the tools of one workflow")
			}
			return dispatch(cmd.Context(), runF, opts, runLock)
		},
	}
	cmd.Flags().StringVar(&opts.Workflow, "workflow", "", "pin the tools of the workflow `FILE`")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// LockResult is the JSON object `awf tools lock` prints.
type LockResult struct {
	File  string              `json:"file"`
	Tools map[string]tool.Pin `json:"tools"`
	// Changes are the differences from the lock file it replaced (none when there was none).
	Changes []string `json:"changes"`
}

func runLock(_ context.Context, opts *LockOptions) error {
	f := opts.Factory
	wf, workDir, err := loadWorkflow(f, opts.IO, opts.Workflow)
	if err != nil {
		return err
	}
	pins, warnings, err := f.Pins(wf, workDir)
	printWarnings(opts.IO, warnings)
	if err != nil {
		return err
	}
	path := toollock.Path(opts.Workflow)
	old, _, _ := toollock.Read(path) // a damaged one is replaced
	out := LockResult{File: path, Tools: pins, Changes: []string{}}
	if old != nil {
		for _, c := range tool.ComparePins(old.Tools, pins) {
			out.Changes = append(out.Changes, c.String())
		}
	}
	if err := toollock.Write(path, &toollock.File{Workflow: filepath.Base(opts.Workflow), Tools: pins}); err != nil {
		return err
	}
	if opts.Output.JSON() {
		return cmdutil.WriteJSON(opts.IO.Out, out)
	}
	names := make([]string, 0, len(pins))
	for name := range pins {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, c := range out.Changes {
		fmt.Fprintln(opts.IO.ErrOut, render.Line(c))
	}
	fmt.Fprintf(opts.IO.Out, "%s: %d tools pinned", render.Line(path), len(pins))
	if len(names) > 0 {
		fmt.Fprintf(opts.IO.Out, " (%s)", render.Line(strings.Join(names, ", ")))
	}
	fmt.Fprintln(opts.IO.Out)
	return nil
}
