// Package resume implements `awf resume RUN_ID`: continue an interrupted or failed run without
// re-running the steps that completed.
package resume

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmd/run"
	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/cmd/awf/internal/render"
)

// Options are everything `awf resume` needs.
type Options struct {
	IO      *iostreams.IOStreams
	Factory *cmdutil.Factory
	RunID   string
	Output  cmdutil.Format
}

// NewCmdResume returns `awf resume`.
func NewCmdResume(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "resume RUN_ID",
		Short: "Continue an interrupted or failed run",
		Long: `Continue a run from its state file: steps that completed (or were skipped) keep their
results and are not run again; the run goes on from the first step that did not complete,
with the inputs it was started with. The workflow file is read again, so a fix made to a
failing step is picked up.`,
		Args: cmdutil.ExactArgs(1, "need a run id: awf resume RUN_ID (see awf history)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunID = args[0]
			if runF == nil {
				runF = runResume
			}
			return runF(cmd.Context(), opts)
		},
	}
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

func runResume(ctx context.Context, opts *Options) error {
	progress := render.New(opts.IO, time.Now)
	defer progress.Close()
	r, err := opts.Factory.Runner(progress)
	if err != nil {
		return err
	}
	state, err := r.Resume(ctx, opts.RunID)
	progress.Close()
	store, _ := opts.Factory.Store()
	return run.Report(opts.IO, opts.Output, store, state, err)
}
