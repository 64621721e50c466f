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
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// Options are everything `awf resume` needs.
type Options struct {
	IO      *iostreams.IOStreams
	Factory *cmdutil.Factory
	RunID   string
	Output  cmdutil.Format
	Model   run.ModelFlags
	// Force resumes a run whose workflow files changed since it started.
	Force bool
	// FromLastValid resumes a run whose journal is damaged from its last valid line.
	FromLastValid bool
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
failing step is picked up.

A run is owned by one process at a time: resuming a run that is still running, or that
another resume has taken, fails with the pid and host of its owner. A run whose workflow
files (the workflow, the workflows it calls, the tool definitions it can reach) changed since
it started is refused with the list of changed files; --force resumes it anyway, and the run
records that it was forced. A run whose journal is damaged does not load; --from-last-valid
resumes it from the last journal line that can be read, and records what was left out.`,
		Args:              cmdutil.ExactArgs(1, "need a run id: awf resume RUN_ID (see awf history)"),
		ValidArgsFunction: cmdutil.FirstArgs(1, cmdutil.CompleteRunIDs(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunID = args[0]
			if runF == nil {
				runF = runResume
			}
			return runF(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "resume even though the workflow's files changed since the run started (recorded in the run)")
	cmd.Flags().BoolVar(&opts.FromLastValid, "from-last-valid", false, "resume a run whose journal is damaged from its last valid line (recorded in the run)")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	run.AddModelFlags(f, cmd, &opts.Model)
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
	prep, err := prepare(ctx, f, opts)
	if err != nil {
		return err
	}
	ro := runner.ResumeOptions{Sources: prep.sources, Force: opts.Force, FromLastValid: opts.FromLastValid}
	return run.Execute(opts.IO, f, opts.Model.Options(prep.tools, prep.workDir), opts.Output, func(r *runner.Runner) (*state.RunState, error) {
		return r.ResumeWith(ctx, opts.RunID, ro)
	})
}

// prepared is what a resume needs before the runner takes the run: the tools of its workflow
// as it is now on disk, its working directory, and the digests of its files now.
type prepared struct {
	tools   *cmdutil.Tools
	workDir string
	sources map[string]string
}

// prepare reads the run (without owning it: the runner reads it again once it does) and
// builds what prepared holds.
func prepare(ctx context.Context, f *cmdutil.Factory, opts *Options) (prepared, error) {
	var p prepared
	st, err := peek(ctx, f, opts)
	if err != nil {
		return p, err
	}
	res, err := compile.File(f.Loader(), f.Templater(), st.WorkflowFile)
	if err != nil {
		return p, err
	}
	if p.workDir = st.WorkDir; p.workDir == "" {
		if p.workDir, err = os.Getwd(); err != nil {
			return p, err
		}
	}
	if res.CallsTools { // shell steps only: no tools to build
		if p.tools, err = run.Tools(f, res.Workflow, st.Inputs, st.ID, p.workDir); err != nil {
			return p, err
		}
	}
	p.sources = cmdutil.Sources(res.Files, p.tools, st.Sources)
	return p, nil
}

// peek reads the run to resume, from the last valid line of its journal if asked.
func peek(ctx context.Context, f *cmdutil.Factory, opts *Options) (*state.RunState, error) {
	store, err := f.Store()
	if err != nil {
		return nil, err
	}
	st, _, err := ports.LoadRun(ctx, store, opts.RunID, opts.FromLastValid)
	return st, err
}
