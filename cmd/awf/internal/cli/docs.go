package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
)

// WriteReference writes the command reference (docs/cli-reference.md) from the command tree,
// so the documentation cannot drift from the flags. A test fails when the file is stale.
func WriteReference(w io.Writer, root *cobra.Command) {
	fmt.Fprintln(w, "# awf command reference")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Generated from the command tree by `UPDATE_GOLDEN=1 go test ./cmd/awf/internal/cli`; do not edit.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Global flags (every command):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "```")
	fmt.Fprint(w, root.PersistentFlags().FlagUsages())
	fmt.Fprintln(w, "```")
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Hidden || sub.Name() == "help" {
				continue
			}
			writeCommand(w, sub)
			walk(sub)
		}
	}
	walk(root)
}

func writeCommand(w io.Writer, c *cobra.Command) {
	fmt.Fprintf(w, "\n## %s\n\n%s\n\n", c.CommandPath(), c.Short)
	fmt.Fprintf(w, "```\n%s\n```\n", c.UseLine())
	if c.Long != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.Long))
	}
	if c.Example != "" {
		fmt.Fprintf(w, "\nExamples:\n\n```\n%s\n```\n", strings.TrimRight(c.Example, "\n"))
	}
	if flags := c.NonInheritedFlags().FlagUsages(); flags != "" {
		fmt.Fprintf(w, "\nFlags:\n\n```\n%s```\n", flags)
	}
}
