// Package validate implements `awf validate`: load, validate and compile workflow files and
// report every problem with its position, without running anything.
package validate

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/cmd/awf/internal/render"
	"github.com/awf-dev/awf/cmd/awf/internal/toolwire"
	"github.com/awf-dev/awf/internal/application/compile"
	"github.com/awf-dev/awf/internal/application/plan"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/toollock"
)

// Options are everything `awf validate` needs.
type Options struct {
	IO      *iostreams.IOStreams
	Factory *cmdutil.Factory
	Files   []string
	Output  cmdutil.Format
}

// NewCmdValidate returns `awf validate`.
func NewCmdValidate(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "validate WORKFLOW...",
		Short: "Check workflow files without running them",
		Long: `Load, validate and compile each workflow: unknown keys, bad types, duplicate step
names, references to steps that are not earlier, template syntax, conditions (when) that are
not boolean expressions. The workflows that workflow steps call are compiled too, the inputs
passed to them checked, and a workflow that calls itself (directly or through others) refused.
The tools steps name must exist (the tools a run in the current directory would reach), and a
tool step's args must fit the tool's parameters. Every problem is reported with
file:line:column; warnings (such as inputs used but not declared) do not fail. A WORKFLOW is a
file, or a name as awf run takes it (one awf list shows).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fault.New(fault.Usage, "need at least one workflow file: awf validate WORKFLOW...")
			}
			return nil
		},
		ValidArgsFunction: cmdutil.CompleteWorkflows(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, a := range args {
				opts.Files = append(opts.Files, cmdutil.ResolveWorkflow(f, a))
			}
			if runF == nil {
				runF = runValidate
			}
			return runF(cmd.Context(), opts)
		},
	}
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	cmdutil.NoSignalWatch(cmd) // it reads files and starts nothing
	return cmd
}

// FileResult is one file's outcome in JSON output.
type FileResult struct {
	File     string    `json:"file"`
	Valid    bool      `json:"valid"`
	Workflow string    `json:"workflow,omitempty"`
	Errors   []Finding `json:"errors"`
	Warnings []Finding `json:"warnings"`
}

// Finding is one problem in JSON output.
type Finding struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
	Hint    string `json:"hint,omitempty"`
}

func runValidate(ctx context.Context, opts *Options) error {
	f := opts.Factory
	var results []FileResult
	var firstErr error
	for _, file := range opts.Files {
		res, err := compile.File(f.Loader(), f.Templater(), file)
		if err == nil && res.CallsTools {
			err = checkTools(ctx, f, &res)
		}
		if err == nil {
			var pins workflow.Problems
			pins, err = lockProblems(f, res.Workflow)
			res.Warnings = append(res.Warnings, pins...)
		}
		fr := FileResult{File: file, Valid: err == nil, Errors: []Finding{}, Warnings: findings(res.Warnings)}
		if res.Workflow != nil {
			fr.Workflow = res.Workflow.Name
		}
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			if ps := compile.Problems(err); ps != nil {
				fr.Errors = findings(ps)
			} else {
				fr.Errors = []Finding{{File: file, Message: err.Error()}}
			}
		}
		results = append(results, fr)
		if !opts.Output.JSON() {
			printText(opts.IO, fr, res.Warnings, err)
		}
	}
	report := &Report{Files: results}
	if firstErr != nil {
		// Already printed in full; the exit code carries the kind.
		return cmdutil.FailWith(opts.Output, report, silent{firstErr, len(opts.Files)})
	}
	if opts.Output.JSON() {
		return cmdutil.WriteJSON(opts.IO.Out, report)
	}
	return nil
}

// Report is the JSON object of `awf validate`: every file's findings and, when a file is
// invalid, the error (its first problem's position and the exit code).
type Report struct {
	Files []FileResult       `json:"files"`
	Error *cmdutil.ErrorJSON `json:"error,omitempty"`
}

// SetError implements cmdutil.WithError.
func (r *Report) SetError(e *cmdutil.ErrorJSON) { r.Error = e }

// checkTools checks the tools the workflow's steps name, and a tool step's arguments, against
// the tools a run in the current directory could reach (compile.Tools). The workflow's policy
// is resolved with its inputs' defaults; when the tools cannot be described, a warning says
// they were not checked.
func checkTools(ctx context.Context, f *cmdutil.Factory, res *compile.Result) error {
	if f.Catalog == nil {
		return nil
	}
	wf := res.Workflow
	workDir, err := os.Getwd()
	if err != nil {
		return fault.Wrap(fault.System, err)
	}
	governed, err := compile.ResolvePolicies(f.Templater(), wf, plan.BaseScope(wf, nil, "", workDir, f.Environ))
	if err != nil {
		governed = wf // a policy templated on inputs: the tools are the same
	}
	catalog, validator, err := f.Catalog(governed, workDir)
	if err != nil {
		res.Warnings = append(res.Warnings, workflow.Problem{Pos: workflow.Pos{File: wf.Path},
			Msg: fmt.Sprintf("tools not checked: %v", err), Severity: workflow.SeverityWarning})
		return nil
	}
	return compile.Tools(ctx, wf, catalog, validator).Err()
}

func printText(ios *iostreams.IOStreams, fr FileResult, warnings workflow.Problems, err error) {
	for _, w := range warnings {
		fmt.Fprintln(ios.ErrOut, render.Text(w.String()))
	}
	if err != nil {
		fmt.Fprintln(ios.ErrOut, render.Text(err.Error()))
		return
	}
	fmt.Fprintf(ios.Out, "%s: ok (workflow %s)\n", fr.File, fr.Workflow)
}

func findings(ps workflow.Problems) []Finding {
	out := make([]Finding, 0, len(ps))
	for _, p := range ps {
		out = append(out, Finding{File: p.Pos.File, Line: p.Pos.Line, Column: p.Pos.Col, Field: p.Field, Message: p.Msg, Hint: p.Hint})
	}
	return out
}

// silent carries the first error's kind for the exit code with a short message, since the
// problems were already printed.
type silent struct {
	err   error
	files int
}

func (s silent) Error() string {
	switch {
	case fault.KindOf(s.err) != fault.Invalid && s.files == 1:
		return "nothing validated" // a missing file or a directory: the error said why
	case fault.KindOf(s.err) != fault.Invalid:
		return "some workflows were not validated"
	case s.files == 1:
		return "workflow is invalid"
	}
	return "some workflows are invalid"
}

func (s silent) Unwrap() error { return s.err }

// lockProblems checks the workflow's tools against its lock file (toolwire.CheckPins),
// starting the MCP servers its steps use to list their tools. Without a lock file nothing
// starts, and a workflow with MCP servers gets a warning that their tools are not pinned.
func lockProblems(f *cmdutil.Factory, wf *workflow.Workflow) (workflow.Problems, error) {
	if _, err := os.Stat(toollock.Path(wf.Path)); err != nil {
		if len(wf.MCPServers) == 0 {
			return nil, nil
		}
		return workflow.Problems{{Pos: workflow.Pos{File: wf.Path}, Severity: workflow.SeverityWarning,
			Msg:  "the tools of its MCP servers are not pinned: there is no lock file",
			Hint: "run awf tools lock --workflow " + wf.Path}}, nil
	}
	workDir, err := os.Getwd()
	if err != nil {
		return nil, fault.Wrap(fault.System, fmt.Errorf("working directory: %w", err))
	}
	pins, _, err := f.Pins(wf, workDir)
	if err != nil {
		return nil, err
	}
	return toolwire.CheckPins(wf.Path, pins)
}
