// Package tools implements `awf tools`: list, show, search, run and check the tools a
// workflow can reach, install tools from a registry, write a registry's index, and parse tool
// calls out of model text. Every verb builds the same governed tool set `awf run` builds, so
// what it shows and runs is what a run would see; `awf tools run` goes through approval and
// the audit log like any other call.
package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/cmd/awf/internal/render"
	"github.com/awf-dev/awf/internal/application/compile"
	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// RunFunc replaces a verb's run function in flag tests: it receives the verb's options
// (*ListOptions, *RunOptions, ...).
type RunFunc func(ctx context.Context, opts any) error

// NewCmdTools returns `awf tools` and its verbs. A non-nil runF is called with each verb's
// options instead of the verb's run function.
func NewCmdTools(f *cmdutil.Factory, runF RunFunc) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tools",
		Short: "List, show, run, check and install tools",
		Long: `Work with the tools workflows and agents call: built-ins, a workflow's tools: list,
project and user manifests and .tool files, and installed owner/name tools. Names resolve as in
a run: the workflow's tools, then project, user, built-in, then installed tools.

Exit codes: 0 success, 1 usage, 2 unknown tool or invalid definitions (also: tools check
found something missing), 3 a tool or a registry failed, 4 system error, 5 denied (approval,
policy, or a package whose checksum does not match the registry's index).`,
		Args: cmdutil.MaxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(
		newCmdList(f, runF),
		newCmdShow(f, runF),
		newCmdSearch(f, runF),
		newCmdRun(f, runF),
		newCmdCheck(f, runF),
		newCmdInstall(f, runF),
		newCmdIndex(f, runF),
		newCmdParse(f, runF),
		newCmdLock(f, runF),
	)
	for _, sub := range cmd.Commands() {
		if sub.Flags().Lookup("workflow") != nil {
			_ = sub.RegisterFlagCompletionFunc("workflow", cmdutil.CompleteYAMLFiles)
		}
	}
	return cmd
}

// dispatch calls runF with opts when set, else run.
func dispatch[O any](ctx context.Context, runF RunFunc, opts *O, run func(context.Context, *O) error) error {
	if runF != nil {
		return runF(ctx, opts)
	}
	return run(ctx, opts)
}

// toolSet builds the tool set a run of the workflow file (none: an empty workflow) would
// have in the current directory, and prints load warnings. Definitions that fail to load
// (a cycle, a duplicate name) are a fault.Invalid error naming each.
func toolSet(f *cmdutil.Factory, ios *iostreams.IOStreams, file string) (*cmdutil.Tools, *workflow.Workflow, error) {
	wf := &workflow.Workflow{}
	if file != "" {
		res, err := compile.File(f.Loader(), f.Templater(), file)
		if err != nil {
			return nil, nil, err
		}
		printWarnings(ios, res.Warnings)
		wf = res.Workflow
	}
	workDir, err := os.Getwd()
	if err != nil {
		return nil, nil, fault.Wrap(fault.System, err)
	}
	set, err := f.Tools(wf, workDir)
	if err != nil {
		return nil, nil, err
	}
	printWarnings(ios, set.Warnings)
	return set, wf, nil
}

// loadWorkflow compiles the workflow file, prints its warnings, and returns it with the
// working directory a run of it would have.
func loadWorkflow(f *cmdutil.Factory, ios *iostreams.IOStreams, file string) (*workflow.Workflow, string, error) {
	res, err := compile.File(f.Loader(), f.Templater(), file)
	if err != nil {
		return nil, "", err
	}
	printWarnings(ios, res.Warnings)
	workDir, err := os.Getwd()
	if err != nil {
		return nil, "", fault.Wrap(fault.System, fmt.Errorf("working directory: %w", err))
	}
	return res.Workflow, workDir, nil
}

func printWarnings(ios *iostreams.IOStreams, ps workflow.Problems) {
	for _, p := range ps {
		fmt.Fprintln(ios.ErrOut, p.String())
	}
}

// Info is a tool as `awf tools list`, `search` and `show` print it with --output json.
type Info struct {
	Name        string        `json:"name"` // how to call it: a bare name, or owner/name
	Ref         string        `json:"ref"`  // exactly: the name, or owner/name@version
	Kind        registry.Kind `json:"kind"`
	Level       tool.Level    `json:"level"`
	Source      string        `json:"source,omitempty"`
	Line        int           `json:"line,omitempty"`
	Version     string        `json:"version,omitempty"`
	Category    string        `json:"category,omitempty"`
	Tags        []string      `json:"tags,omitempty"`
	Description string        `json:"description"`
	Target      string        `json:"target,omitempty"`
	Shadows     []string      `json:"shadows,omitempty"`
	// Show only.
	Parameters   json.RawMessage `json:"parameters,omitempty"`
	Dependencies []string        `json:"dependencies,omitempty"`
	Versions     []string        `json:"versions,omitempty"`
}

// infoOf describes a registry entry; full adds what only `show` prints.
func infoOf(e registry.Entry, full bool) Info {
	in := Info{Name: e.ListName(), Ref: e.Ref, Kind: e.Kind, Level: e.Level, Source: e.Source,
		Version: e.Version, Category: e.Category, Tags: e.Tags, Description: e.Description,
		Target: e.Target, Shadows: e.Shadows}
	if e.Pos.File != "" {
		in.Source, in.Line = e.Pos.File, e.Pos.Line
	}
	if full {
		in.Parameters = e.Parameters
		if e.Manifest != nil {
			for _, d := range e.Manifest.Dependencies {
				in.Dependencies = append(in.Dependencies, d.String())
			}
		}
	}
	return in
}

// where is "file:line", "file" or the source word.
func (in Info) where() string {
	if in.Line > 0 {
		return fmt.Sprintf("%s:%d", in.Source, in.Line)
	}
	return in.Source
}

// ListResult is the JSON object of `awf tools list` and `awf tools search`.
type ListResult struct {
	Tools []Info `json:"tools"`
}

// writeList prints tools as a table (or JSON).
func writeList(ios *iostreams.IOStreams, format cmdutil.Format, entries []registry.Entry) error {
	res := ListResult{Tools: make([]Info, 0, len(entries))}
	for _, e := range entries {
		res.Tools = append(res.Tools, infoOf(e, false))
	}
	if format.JSON() {
		return cmdutil.WriteJSON(ios.Out, res)
	}
	if len(res.Tools) == 0 {
		fmt.Fprintln(ios.ErrOut, "no matching tools")
		return nil
	}
	return writeTable(ios.Out, res.Tools)
}

func writeTable(w io.Writer, tools []Info) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tLEVEL\tDESCRIPTION")
	for _, t := range tools {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", render.Line(t.Name), t.Kind, t.Level, summary(t.Description, 72))
	}
	return tw.Flush()
}

// summary is the first line of a description, escaped for a terminal and cut to n runes.
func summary(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	s = render.Line(s)
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
