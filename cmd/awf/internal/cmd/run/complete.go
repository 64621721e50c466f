package run

import (
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/internal/infrastructure/providers/factory"
)

// completeInputs completes --input with NAME= for each input the workflow argument declares
// (described by the input's description), leaving the value to the user.
func completeInputs(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) == 0 || strings.Contains(toComplete, "=") {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		wf, _ := f.Loader().Load(cmdutil.ResolveWorkflow(f, args[0]))
		if wf == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, in := range wf.Inputs {
			if strings.HasPrefix(in.Name, toComplete) {
				out = append(out, cobra.CompletionWithDesc(in.Name+"=", cmdutil.CompletionDescription(in.Description)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
	}
}

// completeProviders completes --provider with the built-in provider types and the providers
// of the configuration files.
func completeProviders(f *cmdutil.Factory) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		names := []string{factory.TypeOpenAI, factory.TypeAnthropic, factory.TypeClaude, factory.TypeOllama, factory.TypeCLI}
		if cfg, err := f.Config(); err == nil {
			names = append(names, slices.Sorted(maps.Keys(cfg.Providers))...)
		}
		slices.Sort(names)
		return cmdutil.CompleteValues(slices.Compact(names)...)(cmd, args, toComplete)
	}
}
