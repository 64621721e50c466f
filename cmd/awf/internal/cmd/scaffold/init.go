// Package scaffold implements `awf init`: a starting .awf/ directory with a config file and an
// example workflow that runs offline. (A package named init cannot be imported.)
package scaffold

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/domain/fault"
)

// Options are everything `awf init` needs.
type Options struct {
	IO    *iostreams.IOStreams
	Dir   string
	Force bool
}

// NewCmdInit returns `awf init`.
func NewCmdInit(f *cmdutil.Factory, runF func(context.Context, *Options) error) *cobra.Command {
	opts := &Options{IO: f.IO}
	cmd := &cobra.Command{
		Use:               "init [DIR]",
		Short:             "Create .awf/ with a config file and an example workflow",
		Args:              cmdutil.MaxArgs(1),
		ValidArgsFunction: cmdutil.FirstArgs(1, cmdutil.CompleteDirs),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = "."
			if len(args) == 1 {
				opts.Dir = args[0]
			}
			if runF == nil {
				runF = runInit
			}
			return runF(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "overwrite existing files")
	return cmd
}

// Files are what init writes, relative to the target directory.
var Files = map[string]string{
	filepath.Join(".awf", "config.yaml"): `# awf project configuration. Precedence: flags > AWF_* environment variables >
# this file > $XDG_CONFIG_HOME/awf/config.yaml > defaults.
state_dir: .awf/runs
# audit_log: .awf/audit.jsonl
# log_level: warn        # debug | info | warn | error
# providers:
#   local:
#     type: openai
#     base_url: http://localhost:11434/v1
#     model: qwen2.5-coder
#   claude:
#     type: anthropic
#     api_key_env: ANTHROPIC_API_KEY   # keys come from the environment, never from files
`,
	filepath.Join(".awf", "workflows", "hello.yaml"): `name: hello
description: A first workflow; run it with awf run .awf/workflows/hello.yaml --input name=you
inputs:
  - name: name
    type: string
    default: world
steps:
  - name: greet
    type: shell
    command: echo "Hello, {{inputs.name}}!"
  - name: count
    type: shell
    command: printf '%s' "{{states.greet.output}}" | wc -c
output: "{{states.greet.output}} ({{states.count.output}} characters)"
`,
}

func runInit(ctx context.Context, opts *Options) error {
	for rel := range Files {
		path := filepath.Join(opts.Dir, rel)
		if _, err := os.Stat(path); err == nil && !opts.Force {
			return fault.New(fault.Usage, "%s exists (use --force to overwrite)", path)
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fault.Wrap(fault.Usage, err)
		}
	}
	for rel, content := range Files {
		path := filepath.Join(opts.Dir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fault.Wrap(fault.Usage, fmt.Errorf("init: %w", err))
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			return fault.Wrap(fault.Usage, fmt.Errorf("init: %w", err))
		}
		fmt.Fprintf(opts.IO.ErrOut, "created %s\n", path)
	}
	fmt.Fprintln(opts.IO.ErrOut, "next: awf run .awf/workflows/hello.yaml")
	return nil
}
