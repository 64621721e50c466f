// Package list implements `awf list`: the workflows found in ./workflows and the project's
// .awf/workflows.
package list

import (
	"context"
	"fmt"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/cmd/awf/internal/render"
	"github.com/awf-dev/awf/internal/application/compile"
)

// Options are everything `awf list` needs.
type Options struct {
	IO      *iostreams.IOStreams
	Factory *cmdutil.Factory
	Output  cmdutil.Format
}

// NewCmdList returns `awf list`.
func NewCmdList(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the workflows in ./workflows and ./.awf/workflows",
		Args:  cmdutil.MaxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF == nil {
				runF = runList
			}
			return runF(cmd.Context(), opts)
		},
	}
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// Entry is one workflow file.
type Entry struct {
	Name        string `json:"name"`
	File        string `json:"file"`
	Description string `json:"description,omitempty"`
	Valid       bool   `json:"valid"`
	Error       string `json:"error,omitempty"`
}

func runList(ctx context.Context, opts *Options) error {
	var entries []Entry
	dirs := cmdutil.SearchDirs(opts.Factory)
	for _, dir := range dirs {
		files, err := cmdutil.WorkflowFiles(dir)
		if err != nil {
			return err
		}
		for _, file := range files {
			entries = append(entries, describe(opts.Factory, file))
		}
	}
	if opts.Output.JSON() {
		if entries == nil {
			entries = []Entry{}
		}
		return cmdutil.WriteJSON(opts.IO.Out, map[string]any{"workflows": entries})
	}
	if len(entries) == 0 {
		fmt.Fprintf(opts.IO.ErrOut, "no workflows in %s (create one with awf init)\n", dirs)
		return nil
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tFILE\tDESCRIPTION")
	for _, e := range entries {
		desc := e.Description
		if !e.Valid {
			desc = "INVALID: " + firstLine(e.Error)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", render.Line(e.Name), render.Line(e.File), render.Line(firstLine(desc)))
	}
	return tw.Flush()
}

func describe(f *cmdutil.Factory, file string) Entry {
	e := Entry{File: file, Name: trimExt(filepath.Base(file))}
	res, err := compile.File(f.Loader(), f.Templater(), file)
	if res.Workflow != nil {
		e.Name, e.Description = res.Workflow.Name, res.Workflow.Description
	}
	if err != nil {
		e.Error = err.Error()
		return e
	}
	e.Valid = true
	return e
}

func trimExt(s string) string { return s[:len(s)-len(filepath.Ext(s))] }

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
