// Package run implements `awf run`: compile a workflow, resolve its inputs, run it (or print
// its plan with --dry-run) and report the result.
package run

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/cmd/awf/internal/render"
	"github.com/awf-dev/awf/internal/application/compile"
	"github.com/awf-dev/awf/internal/application/plan"
	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// Options are everything `awf run` needs.
type Options struct {
	IO        *iostreams.IOStreams
	Factory   *cmdutil.Factory
	File      string
	Inputs    []string
	InputFile string
	DryRun    bool
	Output    cmdutil.Format
	Model     ModelFlags
	// Engine is --engine: local, temporal, or "" for the configured one (engine:, AWF_ENGINE).
	Engine string
	// Server, SharedWorkspace and Detach are the temporal engine's flags.
	Server          cmdutil.Server
	SharedWorkspace bool
	Detach          bool
}

// ModelFlags choose the model of agent steps from the command line.
type ModelFlags struct {
	Provider string
	Model    string
	Replay   string
	Record   string
}

// AddModelFlags adds --provider, --model, --replay and --record.
func AddModelFlags(f *cmdutil.Factory, cmd *cobra.Command, m *ModelFlags) {
	cmd.Flags().StringVar(&m.Provider, "provider", "", "use provider `NAME` for every agent step (a workflow or config provider, or openai, anthropic, claude, ollama, cli)")
	cmd.Flags().StringVar(&m.Model, "model", "", "use `MODEL` for every agent step")
	cmd.Flags().StringVar(&m.Replay, "replay", "", "play the model turns of cassette `FILE` instead of calling any model (tools run for real)")
	cmd.Flags().StringVar(&m.Record, "record", "", "record every model turn into cassette `FILE`")
	cmd.MarkFlagsMutuallyExclusive("replay", "record")
	_ = cmd.RegisterFlagCompletionFunc("provider", completeProviders(f))
}

// Options turns the flags into runner options.
func (m ModelFlags) Options(tools *cmdutil.Tools, workDir string) cmdutil.RunnerOptions {
	return cmdutil.RunnerOptions{Tools: tools, WorkDir: workDir, Provider: m.Provider, Model: m.Model, Replay: m.Replay, Record: m.Record}
}

// NewCmdRun returns `awf run`. runF replaces the run function in flag tests.
func NewCmdRun(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "run WORKFLOW",
		Short: "Run a workflow",
		Long: `Run a workflow file, or a workflow by the name ` + "`awf list`" + ` shows for it (found in
./workflows and ./.awf/workflows, by file name, then by the name: it declares). Inputs come from --input NAME=VALUE (repeatable) and
--input-file FILE.yaml; missing required inputs are asked for on a terminal and are an error
elsewhere. Progress goes to stderr; the workflow's output (or, with --output json, one JSON
object with run_id, status, state_file and output) goes to stdout.`,
		Example: `  awf run workflows/hello.yaml --input name=world
  awf run hello --input name=world --output json
  awf run autonomous-coding --input feature="add a --verbose flag" --dry-run`,
		Args:              cmdutil.ExactArgs(1, "need a workflow file: awf run WORKFLOW"),
		ValidArgsFunction: cmdutil.FirstArgs(1, cmdutil.CompleteWorkflows(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.File = cmdutil.ResolveWorkflow(f, args[0])
			if runF == nil {
				runF = runRun
			}
			return runF(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringArrayVarP(&opts.Inputs, "input", "i", nil, "workflow input `NAME=VALUE` (repeatable)")
	cmd.Flags().StringVar(&opts.InputFile, "input-file", "", "YAML `FILE` mapping input names to values")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "print the plan with every template that can be resolved; run nothing")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	AddModelFlags(f, cmd, &opts.Model)
	_ = cmd.RegisterFlagCompletionFunc("input", completeInputs(f))
	_ = cmd.RegisterFlagCompletionFunc("input-file", cmdutil.CompleteYAMLFiles)
	cmd.Flags().StringVar(&opts.Engine, "engine", "", "run on `ENGINE`: local (this process) or temporal (workers of a Temporal server, see docs/distributed.md); default engine: in config, AWF_ENGINE, else local")
	cmdutil.AddServerFlags(cmd, &opts.Server)
	cmd.Flags().BoolVar(&opts.SharedWorkspace, "shared-workspace", false, "temporal engine: every worker sees the working directory (a shared file system), so another worker finishes a run whose worker was lost")
	cmd.Flags().BoolVar(&opts.Detach, "detach", false, "temporal engine: print the run's id once it is submitted and return (awf status --engine temporal RUN_ID --wait waits for it)")
	return cmd
}

func runRun(ctx context.Context, opts *Options) error {
	f := opts.Factory
	engine, err := cmdutil.EngineName(f, opts.Engine)
	if err != nil {
		return err
	}
	remote := f.Engines[engine]
	if engine != cmdutil.EngineLocal && remote == nil && !opts.DryRun {
		return cmdutil.Handoff(opts.IO, cmdutil.EngineProgram(engine), f.Args)
	}
	res, err := compile.File(f.Loader(), f.Templater(), opts.File)
	if err != nil {
		return err
	}
	PrintWarnings(opts.IO, res.Warnings)
	wf := res.Workflow
	given, err := GivenInputs(opts.Inputs, opts.InputFile)
	if err != nil {
		return err
	}
	if opts.DryRun {
		values, missing, err := wf.ResolveInputs(given)
		if err != nil {
			return fault.Wrap(fault.Usage, err)
		}
		for _, name := range missing {
			values[name] = "<missing input " + name + ">"
		}
		return dryRun(ctx, opts, wf, values, missing)
	}
	values, err := ResolveInputs(opts.IO, wf, given)
	if err != nil {
		return err
	}
	workDir, err := os.Getwd()
	if err != nil {
		return fault.Wrap(fault.System, err)
	}
	if remote != nil {
		return remote(ctx, cmdutil.EngineRun{Workflow: wf, Files: res.Files, Inputs: values, WorkDir: workDir,
			Output: opts.Output, Runner: opts.Model.Options(nil, workDir),
			Server: opts.Server, SharedWorkspace: opts.SharedWorkspace, Detach: opts.Detach})
	}
	var tools *cmdutil.Tools // a workflow of shell steps needs none: no registry, no audit log
	if res.CallsTools {
		if tools, err = Tools(f, wf, values, "", workDir); err != nil {
			return err
		}
		if err := compile.Tools(ctx, wf, tools.Registry, tools.Validator).Err(); err != nil {
			return err // as awf validate reports them: at the step, with the nearest name
		}
		if err := tools.Registry.Preflight(registry.WorkflowTools(wf)...); err != nil {
			return err
		}
	}
	return Execute(opts.IO, f, opts.Model.Options(tools, workDir), opts.Output, func(r *runner.Runner) (*state.RunState, error) {
		return r.Run(ctx, runner.Request{Workflow: wf, Inputs: values, WorkDir: workDir,
			Sources: cmdutil.Sources(res.Files, tools, nil)})
	})
}

// Tools builds the governed tools of a run of wf in workDir, under the policies resolved (once,
// now) from the run's inputs and id ("" for a run not started yet), and prints their warnings.
// awf resume builds the tools of the run it continues with it.
func Tools(f *cmdutil.Factory, wf *workflow.Workflow, inputs map[string]any, runID, workDir string) (*cmdutil.Tools, error) {
	governed, err := compile.ResolvePolicies(f.Templater(), wf, plan.BaseScope(wf, inputs, runID, workDir, f.Environ))
	if err != nil {
		return nil, err
	}
	tools, err := f.Tools(governed, workDir)
	if err != nil {
		return nil, err
	}
	PrintWarnings(f.IO, tools.Warnings)
	return tools, nil
}

// Execute runs a workflow with live progress on ios, then reports it (Report, in format):
// start runs it (r.Run, or r.Resume for awf resume) on a runner built by the Factory with
// runnerOpts. Progress stops before the report, and a failure to finish the model settings
// (a --record cassette not written) fails a run that succeeded.
func Execute(ios *iostreams.IOStreams, f *cmdutil.Factory, runnerOpts cmdutil.RunnerOptions, format cmdutil.Format,
	start func(*runner.Runner) (*state.RunState, error)) error {
	progress := render.New(ios, time.Now)
	defer progress.Close()
	f.Pause = progress.Pause
	r, done, err := f.Runner(progress, runnerOpts)
	if err != nil {
		return err
	}
	run, err := start(r)
	progress.Close()
	if derr := done(); derr != nil && err == nil {
		err = derr
	}
	store, _ := f.Store()
	return Report(ios, format, store, run, err)
}

// dryRun prints the plan: every template resolved that can be, and for agent steps the
// provider and model they resolve to and their tools' schemas. Nothing runs.
// dryRun prints what the run would do; missing names the required inputs it was not given,
// shown as placeholders rather than asked for.
func dryRun(ctx context.Context, opts *Options, wf *workflow.Workflow, values map[string]any, missing []string) error {
	f := opts.Factory
	var agents plan.Agents
	if f.Describe != nil && plan.HasAgents(wf) {
		workDir, err := os.Getwd()
		if err != nil {
			return fault.Wrap(fault.System, err)
		}
		// The tools are described under the policy the run would have, resolved from the inputs.
		governed, err := compile.ResolvePolicies(f.Templater(), wf, plan.BaseScope(wf, values, "", workDir, f.Environ))
		if err != nil {
			return err
		}
		catalog, providers, err := f.Describe(governed, workDir, opts.Model.Options(nil, workDir))
		if err != nil {
			return err
		}
		agents = plan.Agents{Providers: providers, Tools: catalog, WorkDir: workDir}
	}
	p := plan.BuildWith(ctx, f.Templater(), wf, values, f.Environ, agents)
	p.MissingInputs = missing
	if opts.Output.JSON() {
		return cmdutil.WriteJSON(opts.IO.Out, p)
	}
	return plan.Write(opts.IO.Out, p)
}

// Result is the JSON object `awf run` and `awf resume` print. Error is set when the command
// fails (by the cli package, which knows the exit code).
type Result struct {
	RunID      string                  `json:"run_id"`
	Workflow   string                  `json:"workflow"`
	Status     state.Status            `json:"status"`
	StateFile  string                  `json:"state_file"`
	Output     string                  `json:"output"`
	Error      *cmdutil.ErrorJSON      `json:"error,omitempty"`
	DurationMs int64                   `json:"duration_ms"`
	Steps      map[string]state.Status `json:"steps"`
}

// SetError implements cmdutil.WithError.
func (r *Result) SetError(e *cmdutil.ErrorJSON) { r.Error = e }

// Report prints a finished (or failed) run: the output on stdout and a summary on stderr, or
// the JSON result. It returns runErr so the exit code reflects the run; with JSON output a
// failure is a cmdutil.ResultError, whose result the cli package prints with the error in it.
func Report(ios *iostreams.IOStreams, format cmdutil.Format, store ports.StateStore, run *state.RunState, runErr error) error {
	if run == nil {
		return runErr
	}
	res := Result{RunID: run.ID, Workflow: run.Workflow, Status: run.Status, Output: run.Output,
		Steps: map[string]state.Status{}, DurationMs: run.Duration().Milliseconds()}
	if runErr != nil && !run.Status.Ended() {
		// The run could not go on (its state could not be saved): it has not finished, but it
		// is not running either.
		res.Status = state.Failed
	}
	if store != nil {
		res.StateFile = store.Path(run.ID)
	}
	for name, s := range run.States {
		res.Steps[name] = s.Status
	}
	if format.JSON() {
		if runErr != nil {
			return cmdutil.FailWith(format, &res, runErr)
		}
		return cmdutil.WriteJSON(ios.Out, res)
	}
	if run.Output != "" {
		fmt.Fprintln(ios.Out, render.OutText(trimNewline(run.Output), ios.IsStdoutTTY()))
	}
	if !ios.Quiet() || runErr != nil {
		fmt.Fprintf(ios.ErrOut, "run %s %s in %s; state: %s\n", run.ID, res.Status,
			time.Duration(res.DurationMs)*time.Millisecond, res.StateFile)
	}
	return runErr
}

// PrintWarnings writes load and compile warnings to stderr.
func PrintWarnings(ios *iostreams.IOStreams, warnings workflow.Problems) {
	for _, w := range warnings {
		fmt.Fprintln(ios.ErrOut, render.Text(w.String()))
	}
}

func trimNewline(s string) string {
	if n := len(s); n > 0 && s[n-1] == '\n' {
		return s[:n-1]
	}
	return s
}
