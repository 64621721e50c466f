package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
)

// signalWatch makes Ctrl-C and SIGTERM cancel the command that runs (exit 130, the state
// saved as interrupted) and keeps it alive when the reader of its output goes away
// (iostreams.SurviveClosedPipes). Watching costs every process two threads: os/signal starts
// a goroutine locked to a thread of its own and a second one waiting for signals, about a
// tenth of the CPU of awf --version (perf). So watching starts in the root's
// PersistentPreRunE (hook), which cobra calls for a command that runs and not for --version,
// --help or a usage error, and only for a command that has something to save or to stop: one
// marked cmdutil.NoSignalWatch (awf validate, which reads files and starts nothing) dies of
// SIGINT or SIGPIPE as any Unix tool does.
type signalWatch struct {
	stop context.CancelFunc // nil until watching
}

// start watches from now on: the context returned is ctx cancelled by SIGINT or SIGTERM, with
// signal.NotifyContext's cause ("interrupt signal received").
func (w *signalWatch) start(ctx context.Context) context.Context {
	iostreams.SurviveClosedPipes()
	ctx, w.stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	return ctx
}

// hook makes the command that runs start watching, with its own context, when nothing has
// started it yet. A subcommand with a PersistentPreRunE of its own would hide the root's, and
// this with it.
func (w *signalWatch) hook(root *cobra.Command) {
	pre := root.PersistentPreRunE
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error {
		if w.stop == nil && !cmdutil.WatchesNoSignals(cmd) {
			cmd.SetContext(w.start(cmd.Context()))
		}
		if pre == nil {
			return nil
		}
		return pre(cmd, args)
	}
}

// close stops watching; it is called once the exit code is known (stopping cancels the
// context).
func (w *signalWatch) close() {
	if w.stop != nil {
		w.stop()
	}
}
