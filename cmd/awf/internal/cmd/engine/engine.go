// Package engine holds the commands of the temporal engine as plain awf has them: awf worker,
// awf approve and awf deny hand their command line to awf-temporal (beside awf or on PATH),
// which links the Temporal SDK; awf itself starts without it (docs/distributed.md).
package engine

import (
	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
)

// NewCmdWorker returns awf worker.
func NewCmdWorker(f *cmdutil.Factory) *cobra.Command {
	return handoff(f, "worker", "Run a worker of the temporal engine",
		"Run a worker that executes awf runs submitted with awf run --engine temporal:\n  awf worker --temporal HOST:PORT [--namespace N] [--task-queue Q] [--host NAME]")
}

// NewCmdApprove returns awf approve.
func NewCmdApprove(f *cmdutil.Factory) *cobra.Command {
	return handoff(f, "approve RUN_ID CALL_ID", "Approve a tool call that waits for a person (temporal engine)",
		"Approve a waiting tool call of a run on the temporal engine (awf status --engine temporal RUN_ID lists them).")
}

// NewCmdDeny returns awf deny.
func NewCmdDeny(f *cmdutil.Factory) *cobra.Command {
	return handoff(f, "deny RUN_ID CALL_ID", "Deny a tool call that waits for a person (temporal engine)",
		"Deny a waiting tool call of a run on the temporal engine: awf deny RUN_ID CALL_ID [--reason TEXT].")
}

// handoff is a command whose command line goes to awf-temporal as it is.
func handoff(f *cmdutil.Factory, use, short, long string) *cobra.Command {
	program := cmdutil.EngineProgram(cmdutil.EngineTemporal)
	return &cobra.Command{
		Use: use, Short: short,
		Long:               long + "\n\nRun by " + program + " (beside awf or on PATH), which lists its flags with --help.",
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return cmdutil.Handoff(f.IO, program, f.Args)
		},
	}
}
