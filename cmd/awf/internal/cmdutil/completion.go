package cmdutil

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// Shell completion (cobra's hidden __complete command, which `awf completion SHELL` scripts
// call). Completion functions run without the root command's PersistentPreRunE, print nothing
// but their candidates, and never fail: a store or a registry that cannot be read completes
// nothing. Commands added later complete their arguments with these, e.g. a run id argument:
//
//	cmd.ValidArgsFunction = cmdutil.FirstArgs(1, cmdutil.CompleteRunIDs(f))
//	cmd.RegisterFlagCompletionFunc("run", cmdutil.CompleteRunIDs(f))

// FirstArgs completes the first n positional arguments with complete and nothing (no file
// names) after them.
func FirstArgs(n int, complete cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) >= n {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return complete(cmd, args, toComplete)
	}
}

// CompleteValues completes a flag or an argument that takes one of a fixed set of words.
func CompleteValues(values ...string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for _, v := range values {
			if strings.HasPrefix(v, toComplete) {
				out = append(out, v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// CompleteDirs completes a directory.
func CompleteDirs(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return nil, cobra.ShellCompDirectiveFilterDirs
}

// CompleteYAMLFiles completes a workflow file: YAML files and directories.
func CompleteYAMLFiles(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return []cobra.Completion{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
}

// CommaList completes the last item of a comma-separated list (--tools a,b,c) with complete,
// keeping the items before it.
func CommaList(complete cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		i := strings.LastIndexByte(toComplete, ',')
		done := toComplete[:i+1]
		out, directive := complete(cmd, args, toComplete[i+1:])
		for j := range out {
			out[j] = done + out[j]
		}
		return out, directive | cobra.ShellCompDirectiveNoSpace
	}
}

// ChangedIn reports which flags of cmd (its own and its parents' persistent flags) were given,
// for GlobalFlags.Changed.
func ChangedIn(cmd *cobra.Command) func(name string) bool {
	return func(name string) bool {
		fl := cmd.Flags().Lookup(name)
		return fl != nil && fl.Changed
	}
}

// completing makes the global flags given on the command line being completed (such as
// --state-dir) count, as PersistentPreRunE does for a command that runs.
func (f *Factory) completing(cmd *cobra.Command) {
	if f.Flags.Changed == nil {
		f.Flags.Changed = ChangedIn(cmd)
	}
}

// CompleteRunIDs completes a run id with the ids of the runs in the state store, each
// described by its workflow, status and start time; they are offered newest first.
func CompleteRunIDs(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		runs := storedRuns(f, cmd)
		slices.SortStableFunc(runs, func(a, b ports.RunSummary) int { return b.StartedAt.Compare(a.StartedAt) })
		var out []cobra.Completion
		for _, r := range runs {
			if strings.HasPrefix(r.ID, toComplete) {
				out = append(out, cobra.CompletionWithDesc(r.ID, runDescription(r)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

// CompleteRunWorkflows completes the name of a workflow that has runs in the state store (awf
// history --workflow), with how many.
func CompleteRunWorkflows(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		runs := storedRuns(f, cmd)
		count := map[string]int{}
		for _, r := range runs {
			if r.Workflow != "" && strings.HasPrefix(r.Workflow, toComplete) {
				count[r.Workflow]++
			}
		}
		var out []cobra.Completion
		for _, name := range slices.Sorted(maps.Keys(count)) {
			out = append(out, cobra.CompletionWithDesc(name, fmt.Sprintf("%d runs", count[name])))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// storedRuns lists the runs of the state store the command line names; none when it cannot
// be read.
func storedRuns(f *Factory, cmd *cobra.Command) []ports.RunSummary {
	f.completing(cmd)
	store, err := f.Store()
	if err != nil {
		return nil
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	runs, _ := store.List(ctx)
	return runs
}

// runDescription is what a run id's completion says of the run.
func runDescription(r ports.RunSummary) string {
	if r.Unreadable != "" {
		return "unreadable state file"
	}
	return r.Workflow + " " + string(r.Status) + " " + r.StartedAt.Local().Format("2006-01-02 15:04")
}

// CompleteWorkflowNames completes a workflow name: the names `awf list` shows, described by
// the workflow's description.
func CompleteWorkflowNames(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		var out []cobra.Completion
		for _, w := range workflowNames(f) {
			if strings.HasPrefix(w.name, toComplete) && !slices.Contains(args, w.name) {
				out = append(out, cobra.CompletionWithDesc(w.name, w.description))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// CompleteWorkflows completes a workflow argument: the names `awf list` shows (which `awf
// run` and `awf validate` resolve, see ResolveWorkflow) or, when no name starts with what was
// typed, the YAML files and directories the shell finds.
func CompleteWorkflows(f *Factory) cobra.CompletionFunc {
	names := CompleteWorkflowNames(f)
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		out, directive := names(cmd, args, toComplete)
		if len(out) == 0 {
			return CompleteYAMLFiles(cmd, args, toComplete)
		}
		return out, directive
	}
}

type workflowName struct{ name, description string }

// workflowNames lists the workflows of SearchDirs by the name they declare (their file name
// when they do not load), each once.
func workflowNames(f *Factory) []workflowName {
	var out []workflowName
	seen := map[string]bool{}
	for _, dir := range SearchDirs(f) {
		files, err := WorkflowFiles(dir)
		if err != nil {
			continue
		}
		for _, file := range files {
			w := workflowName{name: strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))}
			if wf, _ := f.Loader().Load(file); wf != nil && wf.Name != "" {
				w = workflowName{name: wf.Name, description: CompletionDescription(wf.Description)}
			}
			if !seen[w.name] {
				seen[w.name] = true
				out = append(out, w)
			}
		}
	}
	return out
}

// CompleteTools completes a tool name with the tools a run in the current directory reaches
// (built-in, project, user and installed tools, and the workflow's own tools when the command
// has a --workflow flag naming one), each described by the first line of its description.
// No MCP server is started.
func CompleteTools(f *Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		f.completing(cmd)
		if f.ToolRegistry == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		wf := &workflow.Workflow{}
		if fl := cmd.Flags().Lookup("workflow"); fl != nil && fl.Value.String() != "" {
			if loaded, _ := f.Loader().Load(fl.Value.String()); loaded != nil {
				wf = loaded
				wf.MCPServers = nil // listing must not start servers
			}
		}
		workDir, err := os.Getwd()
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		reg, err := f.ToolRegistry(wf, workDir)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, e := range reg.List() {
			if name := e.ListName(); strings.HasPrefix(name, toComplete) {
				out = append(out, cobra.CompletionWithDesc(name, CompletionDescription(e.Description)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// CompletionDescription is what a completion says of a workflow, a tool or an input: the
// first sentence of its description, at most 80 characters (shells show it beside the word,
// on one line), control characters (a tab would end the description early, an escape act on
// the terminal) as spaces.
func CompletionDescription(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return strings.TrimSpace(s)
}
