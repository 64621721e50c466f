package mcp

import (
	"fmt"
	"os"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// givenInputs merges --input-file (typed YAML values) and --input NAME=VALUE flags (strings,
// coerced by each input's type); flags win. It reads as `awf run` does.
func givenInputs(flags []string, file string) (map[string]any, error) {
	given := map[string]any{}
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fault.Wrap(fault.Usage, fmt.Errorf("input file: %w", err))
		}
		if err := yaml.Unmarshal(data, &given); err != nil {
			return nil, fault.New(fault.Usage, "input file %s: %s (want a map of input names to values)", file, yaml.FormatError(err, false, false))
		}
		if given == nil {
			given = map[string]any{}
		}
	}
	for _, kv := range flags {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fault.New(fault.Usage, "--input %q: want NAME=VALUE", kv)
		}
		given[strings.TrimSpace(name)] = value
	}
	return given, nil
}

// printWarnings writes problems that do not stop the server to stderr.
func printWarnings(ios *iostreams.IOStreams, warnings workflow.Problems) {
	for _, w := range warnings {
		fmt.Fprintln(ios.ErrOut, w.String())
	}
}
