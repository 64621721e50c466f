package tools

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/infrastructure/toolrepo"
)

// IndexOptions are everything `awf tools index` needs.
type IndexOptions struct {
	IO     *iostreams.IOStreams
	Dir    string
	Output cmdutil.Format
}

func newCmdIndex(f *cmdutil.Factory, runF RunFunc) *cobra.Command {
	opts := &IndexOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "index REGISTRY_DIR",
		Short: "Write the index.json of a registry directory",
		Long: `Scan a registry directory laid out as <owner>/<name>/<version>/ (each version a
package with a config.yaml manifest and any files it ships) and write its index.json with the
size and SHA-256 checksum of every file. Serve the directory as it is, or over HTTP(S).`,
		Example:           `  awf tools index ./registry`,
		Args:              cmdutil.ExactArgs(1, "need a registry directory: awf tools index REGISTRY_DIR"),
		ValidArgsFunction: cmdutil.FirstArgs(1, cmdutil.CompleteDirs),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			return dispatch(cmd.Context(), runF, opts, runIndex)
		},
	}
	cmdutil.AddOutputFlag(cmd, &opts.Output)
	return cmd
}

func runIndex(_ context.Context, opts *IndexOptions) error {
	idx, err := toolrepo.BuildIndex(opts.Dir)
	if err != nil {
		return err
	}
	if err := toolrepo.WriteIndex(opts.Dir, idx); err != nil {
		return err
	}
	if opts.Output.JSON() {
		return cmdutil.WriteJSON(opts.IO.Out, idx)
	}
	n := 0
	for _, t := range idx.Tools {
		n += len(t.Versions)
	}
	fmt.Fprintf(opts.IO.Out, "wrote %s: %d tools, %d versions\n", filepath.Join(opts.Dir, toolrepo.IndexFile), len(idx.Tools), n)
	return nil
}
