package cmdutil

import (
	"context"
	"fmt"
	"math"
	"os"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/statestore"
)

// FormatYAML is --output yaml of commands that print a run's state: the state file's shape.
const FormatYAML Format = "yaml"

// yamlFormat is a Format that also accepts yaml.
type yamlFormat Format

func (y *yamlFormat) String() string { return (*Format)(y).String() }
func (y *yamlFormat) Type() string   { return "format" }

func (y *yamlFormat) Set(v string) error {
	if Format(v) == FormatYAML {
		*y = yamlFormat(v)
		return nil
	}
	if err := (*Format)(y).Set(v); err != nil {
		return fmt.Errorf("unknown output format %q (want text, json or yaml)", v)
	}
	return nil
}

// AddStateOutputFlag adds --output/-o text|json|yaml.
func AddStateOutputFlag(cmd *cobra.Command, f *Format) {
	cmd.Flags().VarP((*yamlFormat)(f), "output", "o", "output format: text, json or yaml (the run's state file, every output inline)")
	_ = cmd.RegisterFlagCompletionFunc("output", CompleteValues(string(FormatText), string(FormatJSON), string(FormatYAML)))
}

// ExportYAML is run's state as a state file holds it, with every output inline: what
// `awf status --output yaml` prints for a local run and for a run of another engine alike.
func ExportYAML(ctx context.Context, run *state.RunState) ([]byte, error) {
	dir, err := os.MkdirTemp("", "awf-export-")
	if err != nil {
		return nil, fmt.Errorf("export run %s: %w", run.ID, err)
	}
	defer os.RemoveAll(dir)
	store, err := statestore.New(dir, statestore.WithOutputThreshold(math.MaxInt))
	if err != nil {
		return nil, err
	}
	if err := store.Save(ctx, run); err != nil {
		return nil, fmt.Errorf("export run %s: %w", run.ID, err)
	}
	return os.ReadFile(store.Path(run.ID))
}
