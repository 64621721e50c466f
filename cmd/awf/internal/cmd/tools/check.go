package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// CheckOptions are everything `awf tools check` needs.
type CheckOptions struct {
	IO       *iostreams.IOStreams
	Factory  *cmdutil.Factory
	Target   string // a workflow file, a tool name, or "" for every manifest
	Workflow string
	Output   cmdutil.Format
}

func newCmdCheck(f *cmdutil.Factory, runF RunFunc) *cobra.Command {
	opts := &CheckOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "check [WORKFLOW|TOOL]",
		Short: "List missing or out-of-range tool dependencies",
		Long: `Check that what a workflow or a tool needs is there: every tool the workflow's steps
and agents use resolves, and every dependency of the meta-tools and chains they reach (declared
or called by a step, followed through nested manifests) is installed in a version its
constraint accepts. Without an argument, every manifest is checked. Nothing is installed:
each problem comes with the command that installs what is missing.

Exit codes: 0 everything is there, 2 something is missing or unknown (as awf run's own check
before it starts), 1 usage.`,
		Example: `  awf tools check review.yaml
  awf tools check file-report
  awf tools check --output json`,
		Args:              cmdutil.MaxArgs(1),
		ValidArgsFunction: cmdutil.FirstArgs(1, completeCheckTarget(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Target = args[0]
			}
			return dispatch(cmd.Context(), runF, opts, runCheck)
		},
	}
	cmd.Flags().StringVar(&opts.Workflow, "workflow", "", "check TOOL among the tools of the workflow `FILE`")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

// CheckResult is the JSON object `awf tools check` prints.
type CheckResult struct {
	OK      bool       `json:"ok"`
	Checked []string   `json:"checked"`
	Missing []Shortage `json:"missing"`
}

// Shortage is one missing tool or dependency and the command that installs it.
type Shortage struct {
	Tool       string   `json:"tool"`
	Dependency string   `json:"dependency,omitempty"`
	Reason     string   `json:"reason"`
	Installed  []string `json:"installed,omitempty"`
	Install    string   `json:"install,omitempty"`
	// Define, for a bare name no registry provides, says where to define it.
	Define string `json:"define,omitempty"`
}

// define is Shortage.Define for a missing tool or dependency.
func define(name string) string {
	if registry.Installable(name) {
		return ""
	}
	return registry.DefineHint(name)
}

// isWorkflowFile reports whether a check target names a workflow file rather than a tool.
func isWorkflowFile(target string) bool {
	switch strings.ToLower(filepath.Ext(target)) {
	case ".yaml", ".yml":
		return true
	}
	info, err := os.Stat(target)
	return err == nil && info.Mode().IsRegular() && strings.ContainsRune(target, os.PathSeparator)
}

func runCheck(_ context.Context, opts *CheckOptions) error {
	wfFile := opts.Workflow
	asWorkflow := opts.Target != "" && isWorkflowFile(opts.Target)
	if asWorkflow {
		if wfFile != "" {
			return fault.New(fault.Usage, "--workflow is for checking a tool; %s is a workflow itself", opts.Target)
		}
		wfFile = opts.Target
	}
	set, wf, err := toolSet(opts.Factory, opts.IO, wfFile)
	if err != nil {
		return err
	}
	res := CheckResult{Checked: []string{}, Missing: []Shortage{}}
	names, err := checkTargets(set.Registry, wf, opts.Target, asWorkflow, &res)
	if err != nil {
		return err
	}
	var missing []registry.Missing
	if !asWorkflow || len(names) > 0 {
		if missing, err = set.Registry.CheckDependencies(names...); err != nil {
			return err
		}
	}
	for _, m := range missing {
		res.Missing = append(res.Missing, Shortage{Tool: m.Tool, Dependency: m.Dependency, Reason: m.Reason,
			Installed: m.Installed, Install: m.Install(), Define: define(m.Dependency)})
	}
	res.OK = len(res.Missing) == 0
	if err := writeCheck(opts, res); err != nil {
		return err
	}
	if !res.OK {
		return fault.New(fault.Invalid, "%d missing: nothing is installed automatically; install or define what is shown", len(res.Missing))
	}
	return nil
}

// checkTargets lists the tools to check dependencies of: the tools of the workflow (those
// that do not resolve go straight into res.Missing), the one tool named, or none for every
// manifest.
func checkTargets(reg *registry.Registry, wf *workflow.Workflow, target string, asWorkflow bool, res *CheckResult) ([]string, error) {
	switch {
	case asWorkflow:
		var names []string
		for _, n := range registry.WorkflowTools(wf) {
			res.Checked = append(res.Checked, n)
			if _, err := reg.Lookup(n); err != nil {
				res.Missing = append(res.Missing, Shortage{Tool: n, Reason: err.Error(), Install: installHint(n), Define: define(n)})
				continue
			}
			names = append(names, n)
		}
		return names, nil
	case target != "":
		if _, err := reg.Lookup(target); err != nil {
			return nil, err
		}
		res.Checked = []string{target}
		return []string{target}, nil
	}
	res.Checked = []string{"all manifests"}
	return nil, nil
}

// installHint is the command that installs an unknown owner/name tool; "" for bare names,
// which no registry provides.
func installHint(name string) string {
	if !registry.Installable(name) {
		return ""
	}
	return "awf tools install --deps " + name
}

func writeCheck(opts *CheckOptions, res CheckResult) error {
	if opts.Output.JSON() {
		return cmdutil.WriteJSON(opts.IO.Out, res)
	}
	w := opts.IO.Out
	if res.OK {
		if len(res.Checked) == 0 {
			fmt.Fprintln(w, "ok: the workflow uses no tools")
			return nil
		}
		fmt.Fprintf(w, "ok: %s: every tool and dependency is available\n", strings.Join(res.Checked, ", "))
		return nil
	}
	for _, s := range res.Missing {
		if s.Dependency != "" {
			fmt.Fprintf(w, "%s needs %s: %s\n", s.Tool, s.Dependency, s.Reason)
		} else {
			fmt.Fprintf(w, "%s: %s\n", s.Tool, s.Reason)
		}
		if s.Install != "" {
			fmt.Fprintf(w, "    install with: %s\n", s.Install)
		}
		if s.Define != "" {
			fmt.Fprintf(w, "    %s\n", s.Define)
		}
	}
	return nil
}

// completeCheckTarget completes the argument of `awf tools check`: a tool name or, when no tool
// name starts with what was typed, a workflow file.
func completeCheckTarget(f *cmdutil.Factory) cobra.CompletionFunc {
	tools := cmdutil.CompleteTools(f)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if out, directive := tools(cmd, args, toComplete); len(out) > 0 {
			return out, directive
		}
		return cmdutil.CompleteYAMLFiles(cmd, args, toComplete)
	}
}
