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
)

// TestWatchSignalsCancelsTheCommand checks that the command that runs is cancelled by SIGINT
// with the cause signal.NotifyContext gives, after the root's own PersistentPreRunE ran, and
// that the context mainWith reads the exit code from (the command's) is that one.
func TestWatchSignalsCancelsTheCommand(t *testing.T) {
	root := &cobra.Command{Use: "awf", SilenceUsage: true, SilenceErrors: true}
	preRan := false
	root.PersistentPreRunE = func(*cobra.Command, []string) error { preRan = true; return nil }
	root.AddCommand(&cobra.Command{Use: "wait", RunE: func(cmd *cobra.Command, _ []string) error {
		if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
			return err
		}
		select {
		case <-cmd.Context().Done():
			return cmd.Context().Err()
		case <-time.After(time.Minute):
			return errors.New("SIGINT did not cancel the command's context")
		}
	}})
	stop := watchSignals(root)
	defer stop()
	root.SetArgs([]string{"wait"})
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
}

// TestVersionWatchesNoSignals checks that awf --version does not start watching signals:
// no command runs, so the hook that would is never called.
func TestVersionWatchesNoSignals(t *testing.T) {
	f := testFactory()
	root := newCmdRoot(f, []string{"--version"})
	watched := false
	pre := root.PersistentPreRunE
	root.PersistentPreRunE = func(cmd *cobra.Command, args []string) error { watched = true; return pre(cmd, args) }
	stop := watchSignals(root)
	defer stop()
	root.SetArgs([]string{"--version"})
	root.SetOut(f.IO.Out)
	if _, err := root.ExecuteC(); err != nil {
		t.Fatal(err)
	}
	if watched {
		t.Error("--version ran the root's PersistentPreRunE, which starts watching signals")
	}
}
