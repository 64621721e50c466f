package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/cmd/awf/internal/render"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// ShowOptions are everything `awf tools show` needs.
type ShowOptions struct {
	IO       *iostreams.IOStreams
	Factory  *cmdutil.Factory
	Name     string
	Workflow string
	Output   cmdutil.Format
}

func newCmdShow(f *cmdutil.Factory, runF RunFunc) *cobra.Command {
	opts := &ShowOptions{IO: f.IO, Factory: f}
	cmd := &cobra.Command{
		Use:   "show NAME",
		Short: "Show a tool: description, parameters, where it is defined",
		Long: `Show the tool NAME resolves to: its description as a model reads it, the JSON Schema
of its parameters, the file and line that define it, its level and kind, what it wraps, its
dependencies, and the definitions of the same name it shadows. NAME may be owner/name or
owner/name@constraint for installed tools. An unknown name exits 2.`,
		Example: `  awf tools show grep
  awf tools show acme/greet@^1 --output json`,
		Args:              cmdutil.ExactArgs(1, "need a tool name: awf tools show NAME"),
		ValidArgsFunction: cmdutil.FirstArgs(1, cmdutil.CompleteTools(f)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Name = args[0]
			return dispatch(cmd.Context(), runF, opts, runShow)
		},
	}
	cmd.Flags().StringVar(&opts.Workflow, "workflow", "", "include the tools of the workflow `FILE`")
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

func runShow(_ context.Context, opts *ShowOptions) error {
	set, _, err := toolSet(opts.Factory, opts.IO, opts.Workflow)
	if err != nil {
		return err
	}
	e, err := set.Registry.Lookup(opts.Name)
	if err != nil {
		return err
	}
	info := infoOf(e, true)
	if e.Level == tool.LevelInstalled {
		for _, d := range set.Registry.Definitions(info.Name) {
			info.Versions = append(info.Versions, d.Version)
		}
	}
	if opts.Output.JSON() {
		return cmdutil.WriteJSON(opts.IO.Out, info)
	}
	return writeShow(opts.IO.Out, info)
}

func writeShow(w io.Writer, in Info) error {
	fmt.Fprintf(w, "%s (%s, %s)\n", render.Line(in.Name), in.Kind, in.Level)
	field := func(label, value string) {
		if value != "" {
			fmt.Fprintf(w, "  %-12s %s\n", label+":", render.Line(value))
		}
	}
	if in.Ref != in.Name {
		field("ref", in.Ref)
	}
	field("source", in.where())
	field("version", in.Version)
	field("versions", strings.Join(in.Versions, ", "))
	field("category", in.Category)
	field("tags", strings.Join(in.Tags, ", "))
	field("wraps", in.Target)
	field("depends on", strings.Join(in.Dependencies, ", "))
	for _, s := range in.Shadows {
		field("shadows", s)
	}
	fmt.Fprintf(w, "\n%s\n", indent(render.Text(strings.TrimSpace(in.Description))))
	if len(in.Parameters) > 0 {
		var buf bytes.Buffer
		if err := json.Indent(&buf, in.Parameters, "", "  "); err != nil {
			buf.Reset()
			buf.Write(in.Parameters)
		}
		fmt.Fprintf(w, "\nParameters (JSON Schema):\n%s\n", indent(render.Text(buf.String())))
	}
	return nil
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}
