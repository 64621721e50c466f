// Package resume implements `awf resume RUN_ID`: continue an interrupted or failed run without
// re-running the steps that completed.
package resume

import (
	"context"
	"os"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmd/run"
	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/application/compile"
	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/domain/state"
)

// Options are everything `awf resume` needs.
type Options struct {
	IO      *iostreams.IOStreams
	Factory *cmdutil.Factory
	RunID   string
	Output  cmdutil.Format
	Model   run.ModelFlags
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
	run.AddModelFlags(cmd, &opts.Model)
	return cmd
}

func runResume(ctx context.Context, opts *Options) error {
	f := opts.Factory
	store, err := f.Store()
	if err != nil {
		return err
	}
	if opts.RunID, err = cmdutil.RunID(ctx, store, opts.RunID); err != nil {
		return err
	}
	tools, workDir, err := toolsFor(ctx, f, opts.RunID)
	if err != nil {
		return err
	}
	return run.Execute(opts.IO, f, opts.Model.Options(tools, workDir), opts.Output, func(r *runner.Runner) (*state.RunState, error) {
		return r.Resume(ctx, opts.RunID)
	})
}

// toolsFor builds the tool set of the run's workflow, as it is now on disk, in the run's
// working directory. A run the store does not know is left to Resume to report.
func toolsFor(ctx context.Context, f *cmdutil.Factory, id string) (*cmdutil.Tools, string, error) {
	store, err := f.Store()
	if err != nil {
		return nil, "", err
	}
	st, err := store.Load(ctx, id)
	if err != nil {
		return nil, "", err
	}
	res, err := compile.File(f.Loader(), f.Templater(), st.WorkflowFile)
	if err != nil {
		return nil, "", err
	}
	workDir := st.WorkDir
	if workDir == "" {
		if workDir, err = os.Getwd(); err != nil {
			return nil, "", err
		}
	}
	if !res.CallsTools {
		return nil, workDir, nil // shell steps only: no tools to build
	}
	tools, err := run.Tools(f, res.Workflow, st.Inputs, st.ID, workDir)
	if err != nil {
		return nil, "", err
	}
	return tools, workDir, nil
}
