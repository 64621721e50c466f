// Package doctor implements `awf doctor`: what this machine can enforce of the sandbox, layer
// by layer, so that a user knows before a run which protections are in force and what a
// `require:` or `enforce: strict` policy will refuse.
package doctor

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox"
)

// Options are everything `awf doctor` needs.
type Options struct {
	IO     *iostreams.IOStreams
	Probe  func() sandbox.Report
	Output cmdutil.Format
}

// NewCmdDoctor returns `awf doctor`.
func NewCmdDoctor(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO, Probe: sandbox.Probe}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Show which sandbox layers this machine enforces",
		Long: `Probe this machine for the layers awf's sandbox uses for tool processes (namespaces,
uid drop, Landlock, seccomp, resource limits, cgroups) and print what is available and what
is missing, with how to get it. A layer a workflow lists in sandbox.require, or any layer with
enforce: strict, makes awf refuse tools where that layer is missing.`,
		Args: cmdutil.MaxArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF == nil {
				runF = runDoctor
			}
			return runF(cmd.Context(), opts)
		},
	}
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

func runDoctor(ctx context.Context, opts *Options) error {
	rep := opts.Probe()
	if opts.Output.JSON() {
		return cmdutil.WriteJSON(opts.IO.Out, rep)
	}
	_, err := fmt.Fprint(opts.IO.Out, rep.String())
	return err
}
