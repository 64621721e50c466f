// Package status implements `awf status RUN_ID`: one run's state, summarised for people or
// whole as JSON.
package status

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/cmd/awf/internal/render"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// Options are everything `awf status` needs.
type Options struct {
	IO      *iostreams.IOStreams
	Factory *cmdutil.Factory
	RunID   string
	Output  cmdutil.Format
	// Engine is --engine: a run of the temporal engine is shown by awf-temporal, with
	// Server and Wait (--wait: until the run ends).
	Engine string
	Server cmdutil.Server
	Wait   bool
}

// NewCmdStatus returns `awf status`.
func NewCmdStatus(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:               "status RUN_ID",
		Short:             "Show the state of a run",
		Args:              cmdutil.ExactArgs(1, "need a run id: awf status RUN_ID (see awf history)"),
		ValidArgsFunction: cmdutil.FirstArgs(1, cmdutil.CompleteRunIDs(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.RunID = args[0]
			if runF == nil {
				runF = runStatus
			}
			return runF(cmd.Context(), opts)
		},
	}
	cmdutil.AddStateOutputFlag(cmd, &opts.Output)
	cmd.Flags().StringVar(&opts.Engine, "engine", "", "the run's `ENGINE`: local, or temporal to ask the Temporal server (with the calls waiting for approval); default engine: in config, AWF_ENGINE")
	cmdutil.AddServerFlags(cmd, &opts.Server)
	cmd.Flags().BoolVar(&opts.Wait, "wait", false, "temporal engine: wait until the run ends")
	return cmd
}

func runStatus(ctx context.Context, opts *Options) error {
	engine, err := cmdutil.EngineName(opts.Factory, opts.Engine)
	if err != nil {
		return err
	}
	if engine != cmdutil.EngineLocal {
		return cmdutil.Handoff(opts.IO, cmdutil.EngineProgram(engine), opts.Factory.Args)
	}
	store, err := opts.Factory.Store()
	if err != nil {
		return err
	}
	id, err := cmdutil.RunID(ctx, store, opts.RunID)
	if err != nil {
		return err
	}
	run, err := store.Load(ctx, id)
	if err != nil {
		return err
	}
	if cmdutil.Gone(store, run.ID, run.Status) {
		run.Status, run.Error = state.Interrupted, cmdutil.ProcessGone
	}
	if opts.Output == cmdutil.FormatYAML {
		b, err := cmdutil.ExportYAML(ctx, run)
		if err != nil {
			return err
		}
		_, err = opts.IO.Out.Write(b)
		return err
	}
	v := View{RunState: run, StateFile: store.Path(run.ID)}
	v.Parent, v.Children = related(ctx, store, run)
	if opts.Output.JSON() {
		return cmdutil.WriteJSON(opts.IO.Out, v)
	}
	Write(opts.IO.Out, v)
	return nil
}

// View is what `awf status` shows of a run: its state, with the runs it is part of. As JSON it
// is the state file's content plus state_file, parent_run and child_runs.
type View struct {
	*state.RunState
	StateFile string `json:"state_file"`
	// Parent is the run that started this one as a sub-workflow (nil: none, or not found).
	Parent *ports.RunSummary `json:"parent_run,omitempty"`
	// Children are the runs this one started as sub-workflows, oldest first.
	Children []ports.RunSummary `json:"child_runs,omitempty"`
}

// related finds run's parent and children among the runs in store. A store that cannot be
// listed leaves them out: the run itself is what was asked for.
func related(ctx context.Context, store ports.StateStore, run *state.RunState) (*ports.RunSummary, []ports.RunSummary) {
	all, _ := store.List(ctx)
	var parent *ports.RunSummary
	var children []ports.RunSummary
	for i := len(all) - 1; i >= 0; i-- { // List is newest first
		switch {
		case all[i].ID == run.Parent && run.Parent != "":
			parent = &all[i]
		case all[i].Parent == run.ID:
			children = append(children, all[i])
		}
	}
	return parent, children
}

// outputLines is how many lines of each step's output Write shows.
const outputLines = 5

// Write prints a run for people: its header, each step with its status, duration, tool calls,
// calls in flight, sub-workflow run, error and the first lines of its output, then the run's
// output. Every text from the run is escaped (render.Line and render.Text), on a terminal or
// not: status is read by people, and a state file can hold anything a tool printed; --output
// json gives the exact text.
func Write(w io.Writer, v View) {
	run := v.RunState
	l := render.Line
	fmt.Fprintf(w, "run:      %s\nworkflow: %s (%s)\nstatus:   %s\n", l(run.ID), l(run.Workflow), l(run.WorkflowFile), l(string(run.Status)))
	if run.Parent != "" {
		fmt.Fprintf(w, "parent:   %s\n", describe(run.Parent, v.Parent))
	}
	fmt.Fprintf(w, "started:  %s\n", run.StartedAt.Format(time.RFC3339))
	if run.FinishedAt != nil {
		fmt.Fprintf(w, "finished: %s\n", run.FinishedAt.Format(time.RFC3339))
	}
	fmt.Fprintf(w, "duration: %s%s\n", run.Duration().Round(time.Millisecond), resumed(run))
	fmt.Fprintf(w, "state:    %s\n", l(v.StateFile))
	if run.Error != "" {
		fmt.Fprintf(w, "error:    %s\n", l(run.Error))
	}
	for _, o := range run.Overrides {
		fmt.Fprintf(w, "override: %s at %s%s\n", l(o.Flag), o.At.Format(time.RFC3339), overridden(o))
	}
	fmt.Fprintln(w, "steps:")
	linked := map[string]bool{}
	for _, name := range run.Order {
		if s := run.States[name]; s != nil {
			writeStep(w, name, s, v.Children, linked)
		}
	}
	var other []string
	for _, c := range v.Children {
		if !linked[c.ID] {
			other = append(other, describe(c.ID, &c))
		}
	}
	if len(other) > 0 {
		fmt.Fprintf(w, "child runs:\n  %s\n", strings.Join(other, "\n  "))
	}
	if run.Output != "" {
		fmt.Fprintf(w, "output:\n%s\n", indent(render.Text(strings.TrimRight(run.Output, "\n")), "  "))
	}
}

// writeStep prints one step; linked collects the child runs it names.
func writeStep(w io.Writer, name string, s *state.StepState, children []ports.RunSummary, linked map[string]bool) {
	l := render.Line
	line := fmt.Sprintf("  %-24s %-11s", l(name), l(string(s.Status)))
	if s.DurationMs > 0 {
		line += fmt.Sprintf(" %s", (time.Duration(s.DurationMs) * time.Millisecond).String())
	}
	if s.ToolStats != nil {
		line += fmt.Sprintf("  tools: %d calls, %d ok, %d failed, %d denied", s.ToolStats.TotalCalls, s.ToolStats.Successful, s.ToolStats.Failed, s.ToolStats.Denied)
	}
	fmt.Fprintln(w, strings.TrimRight(line, " "))
	const pad = "      "
	for _, c := range s.ToolCalls {
		if c.InFlight {
			fmt.Fprintf(w, "    in flight: %s %s (call %s)\n", l(c.Tool), l(arguments(c.Arguments)), l(c.ID))
		}
	}
	if id := s.Vars[state.SubRunVar]; id != "" {
		linked[id] = true
		var sum *ports.RunSummary
		for i := range children {
			if children[i].ID == id {
				sum = &children[i]
			}
		}
		fmt.Fprintf(w, "    sub-run:   %s\n", describe(id, sum))
	}
	if s.Error != "" {
		fmt.Fprintf(w, "    error:     %s\n", l(firstLine(s.Error)))
	}
	if out := strings.TrimRight(s.Output, "\n"); strings.Contains(out, "\n") {
		fmt.Fprintf(w, "    output:\n%s\n", indent(render.Text(head(out, outputLines)), pad))
	} else if out != "" {
		fmt.Fprintf(w, "    output:    %s\n", l(out))
	}
}

// describe names a related run: its id and, when found, its workflow and status.
func describe(id string, sum *ports.RunSummary) string {
	l := render.Line
	if sum == nil {
		return l(id) + " (not found)"
	}
	return fmt.Sprintf("%s (%s, %s)", l(id), l(sum.Workflow), l(string(sum.Status)))
}

// overridden says what a resume overlooked: the files that had changed, what of a damaged
// journal it dropped.
func overridden(o state.Override) string {
	var parts []string
	if len(o.Changed) > 0 {
		parts = append(parts, "changed: "+strings.Join(o.Changed, ", "))
	}
	if o.Dropped != "" {
		parts = append(parts, "dropped: "+o.Dropped)
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + render.Line(strings.Join(parts, "; ")) + ")"
}

// resumed says how often a run was resumed: its duration leaves out the waits between.
func resumed(run *state.RunState) string {
	switch run.Resumed {
	case 0:
		return ""
	case 1:
		return " active, resumed once"
	}
	return fmt.Sprintf(" active, resumed %d times", run.Resumed)
}

// arguments shows a call's arguments as compact JSON, as the model or the workflow gave them
// (no HTML escapes).
func arguments(args map[string]any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(args); err != nil {
		return fmt.Sprint(args)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// head keeps the first n lines of s, saying how many more there were.
func head(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) <= n {
		return s
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n… %d more lines", len(lines)-n)
}

func indent(s, pad string) string {
	return pad + strings.ReplaceAll(s, "\n", "\n"+pad)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
