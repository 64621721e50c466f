// Package history implements `awf history`: past runs, newest first, filtered by workflow and
// status.
package history

import (
	"context"
	"fmt"
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
	runs := Filter(all, opts.Workflow, opts.Status, opts.Limit)
	if opts.Output.JSON() {
		return cmdutil.WriteJSON(opts.IO.Out, map[string]any{"runs": runs})
	}
	if len(runs) == 0 {
		fmt.Fprintln(opts.IO.ErrOut, "no runs")
		return nil
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN ID\tWORKFLOW\tSTATUS\tSTARTED\tDURATION")
	var unreadable []ports.RunSummary
	for _, r := range runs {
		if r.Unreadable != "" {
			unreadable = append(unreadable, r)
			fmt.Fprintf(tw, "%s\t-\tunreadable\t-\t-\n", render.Line(r.ID))
			continue
		}
		dur := "-"
		if r.FinishedAt != nil {
			dur = r.FinishedAt.Sub(r.StartedAt).Round(time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", render.Line(r.ID), render.Line(r.Workflow), render.Line(statusText(r)), r.StartedAt.Local().Format("2006-01-02 15:04:05"), dur)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range unreadable {
		fmt.Fprintf(opts.IO.Out, "unreadable run %s: %s\n", render.Line(r.ID), render.Line(r.Unreadable))
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

// Filter keeps runs of the workflow and status (empty = any), at most limit (0 = all).
// Unreadable runs are kept whatever the limit unless a workflow or status is asked for:
// they need attention, and sort last.
func Filter(runs []ports.RunSummary, wf, status string, limit int) []ports.RunSummary {
	out := []ports.RunSummary{}
	kept := 0
	for _, r := range runs {
		if r.Unreadable != "" {
			if wf == "" && status == "" {
				out = append(out, r)
			}
			continue
		}
		if kept == limit && limit > 0 {
			continue
		}
		if (wf == "" || r.Workflow == wf) && (status == "" || string(r.Status) == status) {
			out = append(out, r)
			kept++
		}
	}
	return out
}
