package cli

import (
	"slices"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// Every flag that takes one of a few words, a run id, a tool, a workflow or a directory
// completes it, on every command that has it, those added later included; and every command
// that takes arguments says how to complete them (cobra's default offers any file).
func TestFlagsAndArgumentsComplete(t *testing.T) {
	completed := []string{"output", "approve", "non-interactive", "log-format", "log-level", "state-dir", "awf-dir",
		"run", "tool", "tools", "workflow", "decision", "outcome", "status", "provider", "input-file", "engine"}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			if !slices.Contains(completed, fl.Name) {
				return
			}
			if _, ok := c.GetFlagCompletionFunc(fl.Name); !ok {
				t.Errorf("%s --%s: no completion", c.CommandPath(), fl.Name)
			}
		})
		// The temporal engine's approve and deny name runs of a Temporal server, which no local
		// completion knows.
		if c.Runnable() && !c.HasSubCommands() && c.ValidArgsFunction == nil && len(c.ValidArgs) == 0 &&
			!slices.Contains([]string{"help", "approve", "deny"}, c.Name()) {
			t.Errorf("%s: its arguments do not complete (set ValidArgsFunction: cmdutil.CompleteRunIDs, CompleteWorkflows, ...)", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewCmdRoot(testFactory()))
}
