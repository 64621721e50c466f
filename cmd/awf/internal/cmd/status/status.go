// Package status implements `awf status RUN_ID`: one run's state, summarised for people or
// whole as JSON.
package status

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/cmd/awf/internal/render"
	"github.com/awf-dev/awf/internal/domain/state"
)

// Options are everything `awf status` needs.
type Options struct {
	IO      *iostreams.IOStreams
	Factory *cmdutil.Factory
	RunID   string
	Output  cmdutil.Format
}

// NewCmdStatus returns `awf status`.
func NewCmdStatus(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "status RUN_ID",
		Short: "Show the state of a run",
		Args:  cmdutil.ExactArgs(1, "need a run id: awf status RUN_ID (see awf history)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunID = args[0]
			if runF == nil {
				runF = runStatus
			}
			return runF(cmd.Context(), opts)
		},
	}
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

func runStatus(ctx context.Context, opts *Options) error {
	store, err := opts.Factory.Store()
	if err != nil {
		return err
	}
	run, err := store.Load(ctx, opts.RunID)
	if err != nil {
		return err
	}
	if cmdutil.Gone(store, run.ID, run.Status) {
		run.Status, run.Error = state.Interrupted, cmdutil.ProcessGone
	}
	if opts.Output.JSON() {
		return cmdutil.WriteJSON(opts.IO.Out, run)
	}
	Write(opts.IO, run, store.Path(run.ID))
	return nil
}

// Write prints a run for people. Every text from the run is escaped (render.Line and
// render.Text), on a terminal or not: status is read by people, and a state file can hold
// anything a tool printed; --output json gives the exact text.
func Write(ios *iostreams.IOStreams, run *state.RunState, path string) {
	w := ios.Out
	l := render.Line
	fmt.Fprintf(w, "run:      %s\nworkflow: %s (%s)\nstatus:   %s\n", l(run.ID), l(run.Workflow), l(run.WorkflowFile), l(string(run.Status)))
	fmt.Fprintf(w, "started:  %s\n", run.StartedAt.Format(time.RFC3339))
	if run.FinishedAt != nil {
		fmt.Fprintf(w, "finished: %s (%s)\n", run.FinishedAt.Format(time.RFC3339), run.FinishedAt.Sub(run.StartedAt).Round(time.Millisecond))
	}
	fmt.Fprintf(w, "state:    %s\n", l(path))
	if run.Error != "" {
		fmt.Fprintf(w, "error:    %s\n", l(run.Error))
	}
	fmt.Fprintln(w, "steps:")
	for _, name := range run.Order {
		s := run.States[name]
		if s == nil {
			continue
		}
		line := fmt.Sprintf("  %-24s %-11s", l(name), l(string(s.Status)))
		if s.DurationMs > 0 {
			line += fmt.Sprintf(" %s", (time.Duration(s.DurationMs) * time.Millisecond).String())
		}
		if s.ToolStats != nil {
			line += fmt.Sprintf("  tools: %d calls, %d ok, %d failed, %d denied", s.ToolStats.TotalCalls, s.ToolStats.Successful, s.ToolStats.Failed, s.ToolStats.Denied)
		}
		if s.Error != "" {
			line += "  " + l(firstLine(s.Error))
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	if run.Output != "" {
		fmt.Fprintf(w, "output:\n%s\n", render.Text(strings.TrimRight(run.Output, "\n")))
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
