//go:build unix

package cli

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
)

// waitForSIGINT is a command that sends SIGINT to its own process and returns its context's
// error once that cancels it.
func waitForSIGINT() *cobra.Command {
	c := &cobra.Command{Use: "wait", Args: cobra.ArbitraryArgs, RunE: func(cmd *cobra.Command, _ []string) error {
		if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
			return err
		}
		select {
		case <-cmd.Context().Done():
			return cmd.Context().Err()
		case <-time.After(time.Minute):
			return errors.New("SIGINT did not cancel the command's context")
		}
	}}
	c.Flags().String("input", "", "a flag whose value may look like --help")
	return c
}

// TestSignalWatchCancelsTheCommand checks that a command that runs is watched, from the root's
// PersistentPreRunE, also when its command line looked print-only (a flag's value that reads
// --help): SIGINT cancels the command's context, the one mainWith takes the exit code from,
// with signal.NotifyContext's cause, and the root's own PersistentPreRunE still runs.
func TestSignalWatchCancelsTheCommand(t *testing.T) {
	for _, args := range [][]string{{"wait"}, {"wait", "--input", "--help"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			root := &cobra.Command{Use: "awf", SilenceUsage: true, SilenceErrors: true}
			preRan := false
			root.PersistentPreRunE = func(*cobra.Command, []string) error { preRan = true; return nil }
			root.AddCommand(waitForSIGINT())
			var w signalWatch
			defer w.close()
			w.hook(root)
			root.SetArgs(args)
			cmd, err := root.ExecuteContextC(context.Background())
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("wait: %v, want the context cancelled", err)
			}
			if !preRan {
				t.Error("the root's own PersistentPreRunE did not run")
			}
			if cause := context.Cause(cmd.Context()); cause == nil || !strings.Contains(cause.Error(), "interrupt") {
				t.Errorf("cause = %v, want the interrupt named", cause)
			}
		})
	}
}

// TestMarkedCommandWatchesNoSignals checks that a command marked cmdutil.NoSignalWatch runs
// without the watch (no os/signal threads), and that awf validate is marked.
func TestMarkedCommandWatchesNoSignals(t *testing.T) {
	root := &cobra.Command{Use: "awf", SilenceUsage: true, SilenceErrors: true}
	quiet := &cobra.Command{Use: "quiet", RunE: func(*cobra.Command, []string) error { return nil }}
	cmdutil.NoSignalWatch(quiet)
	root.AddCommand(quiet)
	var w signalWatch
	defer w.close()
	w.hook(root)
	root.SetArgs([]string{"quiet"})
	if _, err := root.ExecuteC(); err != nil {
		t.Fatal(err)
	}
	if w.stop != nil {
		t.Error("a command marked NoSignalWatch started watching signals")
	}
	validate, _, err := newCmdRoot(testFactory(), []string{"validate", "x.yaml"}).Find([]string{"validate"})
	if err != nil || !cmdutil.WatchesNoSignals(validate) {
		t.Errorf("awf validate is not marked NoSignalWatch (%v)", err)
	}
}

// TestVersionWatchesNoSignals checks that awf --version does not start watching signals: no
// command runs, so the hook that would is never called.
func TestVersionWatchesNoSignals(t *testing.T) {
	f := testFactory()
	root := newCmdRoot(f, []string{"--version"})
	var w signalWatch
	defer w.close()
	w.hook(root)
	root.SetArgs([]string{"--version"})
	root.SetOut(f.IO.Out)
	if _, err := root.ExecuteC(); err != nil {
		t.Fatal(err)
	}
	if w.stop != nil {
		t.Error("--version started watching signals")
	}
}
