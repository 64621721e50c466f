package run

import (
	"fmt"
	"os"
	"strings"

	"github.com/goccy/go-yaml"

	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/yamlnode"
)

// GivenInputs merges --input-file (typed YAML values) and --input NAME=VALUE flags (strings,
// coerced later by each input's type); flags win.
func GivenInputs(flags []string, file string) (map[string]any, error) {
	given := map[string]any{}
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fault.Wrap(fault.Usage, fmt.Errorf("input file: %w", err))
		}
		if data, err = yamlnode.CheckFile(file, data); err != nil {
			return nil, fault.New(fault.Usage, "input file %w", err)
		}
		if err := yaml.Unmarshal(data, &given); err != nil {
			return nil, fault.New(fault.Usage, "input file %s: %s (want a map of input names to values)", file, yaml.FormatError(err, false, false))
		}
		if given == nil {
			given = map[string]any{}
		}
	}
	seen := map[string]string{}
	for _, kv := range flags {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, fault.New(fault.Usage, "--input %q: want NAME=VALUE", kv)
		}
		if first, dup := seen[name]; dup {
			return nil, fault.New(fault.Usage, "--input %s is given twice (%q and %q): give it once", name, first, value)
		}
		seen[name] = value
		given[strings.TrimSpace(name)] = value
	}
	return given, nil
}

// ResolveInputs applies defaults and coercion, then asks for missing required inputs on a
// terminal. Without one, every missing input is named in one usage error.
func ResolveInputs(ios *iostreams.IOStreams, wf *workflow.Workflow, given map[string]any) (map[string]any, error) {
	values, missing, err := wf.ResolveInputs(given)
	if err != nil {
		return nil, fault.Wrap(fault.Usage, err)
	}
	if len(missing) == 0 {
		return values, nil
	}
	if !ios.CanPrompt() {
		flags := make([]string, len(missing))
		for i, m := range missing {
			flags[i] = "--input " + m + "=..."
		}
		return nil, fault.New(fault.Usage, "missing required input(s): %s (pass %s)",
			strings.Join(missing, ", "), strings.Join(flags, " "))
	}
	for _, name := range missing {
		v, err := ask(ios, inputSpec(wf, name))
		if err != nil {
			return nil, err
		}
		values[name] = v
	}
	return values, nil
}

// ask prompts for one input until its value coerces, three tries at most.
func ask(ios *iostreams.IOStreams, in workflow.Input) (any, error) {
	label := in.Name
	if in.Description != "" {
		label += " (" + in.Description + ")"
	}
	if in.Type != "" && in.Type != workflow.TypeString {
		label += " [" + string(in.Type) + "]"
	}
	var lastErr error
	for range 3 {
		answer, err := ios.Prompt(label + ": ")
		if err != nil {
			return nil, fault.Wrap(fault.Usage, fmt.Errorf("input %s: %w", in.Name, err))
		}
		v, err := in.Coerce(answer)
		if err == nil {
			return v, nil
		}
		lastErr = err
		fmt.Fprintf(ios.ErrOut, "  %v\n", err)
	}
	return nil, fault.Wrap(fault.Usage, lastErr)
}

func inputSpec(wf *workflow.Workflow, name string) workflow.Input {
	for _, in := range wf.Inputs {
		if in.Name == name {
			return in
		}
	}
	return workflow.Input{Name: name, Required: true}
}
