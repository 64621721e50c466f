// Package history implements `awf history`: past runs, newest first, filtered by workflow and
// status.
package history

import (
	"context"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/cmd/awf/internal/render"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// Options are everything `awf history` needs.
type Options struct {
	IO       *iostreams.IOStreams
	Factory  *cmdutil.Factory
	Workflow string
	Status   string
	Limit    int
	Output   cmdutil.Format
}

var statuses = []state.Status{state.Pending, state.Running, state.Completed, state.Failed, state.Interrupted}

// NewCmdHistory returns `awf history`.
func NewCmdHistory(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List past runs, newest first",
		Args:  cmdutil.MaxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Status != "" && !validStatus(opts.Status) {
				return fault.New(fault.Usage, "--status %q: want one of %v", opts.Status, statuses)
			}
			if runF == nil {
				runF = runHistory
			}
			return runF(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Workflow, "workflow", "w", "", "only runs of this workflow `NAME`")
	cmd.Flags().StringVarP(&opts.Status, "status", "s", "", "only runs in this `STATUS` (completed, failed, interrupted, running)")
	cmd.Flags().IntVarP(&opts.Limit, "limit", "n", 20, "at most `N` runs (0: all)")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	_ = cmd.RegisterFlagCompletionFunc("workflow", cmdutil.CompleteRunWorkflows(f))
	_ = cmd.RegisterFlagCompletionFunc("status", cmdutil.CompleteValues("completed", "failed", "interrupted", "running"))
	return cmd
}

func validStatus(s string) bool {
	for _, v := range statuses {
		if string(v) == s {
			return true
		}
	}
	return false
}

func runHistory(ctx context.Context, opts *Options) error {
	store, err := opts.Factory.Store()
	if err != nil {
		return err
	}
	all, err := store.List(ctx)
	if err != nil && len(all) == 0 {
		return err
	}
	if err != nil {
		fmt.Fprintf(opts.IO.ErrOut, "warning: %v\n", err)
	}
	for i := range all {
		if cmdutil.Gone(store, all[i].ID, all[i].Status) {
			all[i].Status, all[i].Error = state.Interrupted, cmdutil.ProcessGone
		}
	}
	rows := Tree(Filter(all, opts.Workflow, opts.Status), opts.Limit)
	if opts.Output.JSON() {
		runs := make([]ports.RunSummary, len(rows))
		for i, r := range rows {
			runs[i] = r.RunSummary
		}
		return cmdutil.WriteJSON(opts.IO.Out, map[string]any{"runs": runs})
	}
	if len(rows) == 0 {
		fmt.Fprintln(opts.IO.ErrOut, "no runs")
		return nil
	}
	return WriteTable(opts.IO.Out, rows)
}

// WriteTable prints runs as an aligned table, sub-workflow runs indented under their parent.
func WriteTable(w io.Writer, rows []Row) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN ID\tWORKFLOW\tSTATUS\tSTARTED\tDURATION")
	var unreadable []Row
	for _, r := range rows {
		if r.Unreadable != "" {
			unreadable = append(unreadable, r)
			fmt.Fprintf(tw, "%s\t-\tunreadable\t-\t-\n", render.Line(r.ID))
			continue
		}
		dur := "-"
		if r.FinishedAt != nil {
			dur = (time.Duration(r.DurationMs) * time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\n", r.Prefix, render.Line(r.ID), render.Line(r.Workflow), render.Line(statusText(r.RunSummary)),
			r.StartedAt.Local().Format("2006-01-02 15:04:05"), dur)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range unreadable {
		fmt.Fprintf(w, "unreadable run %s: %s\n", render.Line(r.ID), render.Line(r.Unreadable))
	}
	return nil
}

// statusText is a run's status for the table: a run whose process is gone says so.
func statusText(r ports.RunSummary) string {
	if r.Error == cmdutil.ProcessGone {
		return string(r.Status) + " (process gone)"
	}
	return string(r.Status)
}

// Row is one line of the history: a run and the tree drawing before its id.
type Row struct {
	ports.RunSummary
	Prefix string
}

// Tree orders runs (newest first) as a tree: each run whose parent is not among them, newest
// first, followed by the runs it started as sub-workflows, oldest first, indented under it.
// limit counts the top-level runs (0: all); unreadable runs are kept beyond it: they need
// attention, and sort last.
func Tree(runs []ports.RunSummary, limit int) []Row {
	byID := make(map[string]bool, len(runs))
	for _, r := range runs {
		byID[r.ID] = true
	}
	children := map[string][]ports.RunSummary{}
	var roots []ports.RunSummary
	for _, r := range runs {
		if r.Parent != "" && r.Parent != r.ID && byID[r.Parent] {
			children[r.Parent] = append(children[r.Parent], r)
		} else {
			roots = append(roots, r)
		}
	}
	for _, kids := range children {
		slices.Reverse(kids) // oldest first: the order the parent's steps started them
	}
	if limit > 0 && len(roots) > limit {
		roots = slices.Concat(roots[:limit], slices.DeleteFunc(roots[limit:], func(r ports.RunSummary) bool { return r.Unreadable == "" }))
	}
	var rows []Row
	seen := map[string]bool{}
	var walk func(r ports.RunSummary, prefix, childPrefix string)
	walk = func(r ports.RunSummary, prefix, childPrefix string) {
		if seen[r.ID] { // a parent loop in damaged files
			return
		}
		seen[r.ID] = true
		rows = append(rows, Row{RunSummary: r, Prefix: prefix})
		kids := children[r.ID]
		for i, c := range kids {
			if i == len(kids)-1 {
				walk(c, childPrefix+"└─ ", childPrefix+"   ")
			} else {
				walk(c, childPrefix+"├─ ", childPrefix+"│  ")
			}
		}
	}
	for _, r := range roots {
		walk(r, "", "")
	}
	return rows
}

// Filter keeps runs of the workflow and status (empty = any), and unreadable runs when
// neither is asked for.
func Filter(runs []ports.RunSummary, wf, status string) []ports.RunSummary {
	out := []ports.RunSummary{}
	for _, r := range runs {
		if r.Unreadable != "" {
			if wf == "" && status == "" {
				out = append(out, r)
			}
			continue
		}
		if (wf == "" || r.Workflow == wf) && (status == "" || string(r.Status) == status) {
			out = append(out, r)
		}
	}
	return out
}
