// Package engine holds the commands of the temporal engine as plain awf has them: awf worker,
// awf approve and awf deny hand their command line to awf-temporal (beside awf or on PATH),
// which links the Temporal SDK; awf itself starts without it (docs/distributed.md).
package engine

import (
	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
)

// NewCmdHandoffs returns awf worker, awf approve and awf deny.
func NewCmdHandoffs(f *cmdutil.Factory) []*cobra.Command {
	program := cmdutil.EngineProgram(cmdutil.EngineTemporal)
	handoff := func(use, short, long string) *cobra.Command {
		return &cobra.Command{
			Use: use, Short: short, Long: long + "\n\nRun by " + program + " (beside awf or on PATH); `" + program + " " + use[:len(use)-len(trimVerb(use))] + " --help` lists its flags.",
			DisableFlagParsing: true,
			RunE: func(cmd *cobra.Command, args []string) error {
				return cmdutil.Handoff(f.IO, program, f.Args)
			},
		}
	}
	return []*cobra.Command{
		handoff("worker", "Run a worker of the temporal engine",
			"Run a worker that executes awf runs submitted with awf run --engine temporal:\n  awf worker --temporal HOST:PORT [--namespace N] [--task-queue Q]"),
		handoff("approve RUN_ID CALL_ID", "Approve a tool call that waits for a person (temporal engine)",
			"Approve a waiting tool call of a run on the temporal engine (awf status --engine temporal RUN_ID lists them)."),
		handoff("deny RUN_ID CALL_ID", "Deny a tool call that waits for a person (temporal engine)",
			"Deny a waiting tool call of a run on the temporal engine: awf deny RUN_ID CALL_ID [--reason TEXT]."),
	}
}

// trimVerb is what follows the command's name in its use line.
func trimVerb(use string) string {
	for i := range use {
		if use[i] == ' ' {
			return use[i:]
		}
	}
	return ""
}
