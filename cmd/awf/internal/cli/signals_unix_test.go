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

// TestSignalWatchCancelsTheCommand checks both ways a command that runs comes to be watched:
// started before (a command line that is not printsOnly) and started by the root's
// PersistentPreRunE (a command that runs although its command line looked print-only: a
// flag's value that reads --help). Either
// way SIGINT cancels the command's context, the one mainWith takes the exit code from, with
// signal.NotifyContext's cause, and the root's own PersistentPreRunE still runs.
func TestSignalWatchCancelsTheCommand(t *testing.T) {
	for _, tc := range []struct {
		name  string
		args  []string
		early bool
	}{
		{"started at once", []string{"wait"}, true},
		{"started by the hook", []string{"wait", "--input", "--help"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := &cobra.Command{Use: "awf", SilenceUsage: true, SilenceErrors: true}
			preRan := false
			root.PersistentPreRunE = func(*cobra.Command, []string) error { preRan = true; return nil }
			root.AddCommand(waitForSIGINT())
			var w signalWatch
			defer w.close()
			ctx := context.Background()
			if printsOnly(tc.args) != !tc.early {
				t.Fatalf("printsOnly(%q) = %v", tc.args, tc.early)
			}
			if tc.early {
				ctx = w.start(ctx)
			}
			w.hook(root)
			root.SetArgs(tc.args)
			cmd, err := root.ExecuteContextC(ctx)
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

// TestPrintsOnly checks which command lines start no signal watching up front.
func TestPrintsOnly(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, true},
		{[]string{"--version"}, true},
		{[]string{"-v", "--state-dir", "x"}, true},
		{[]string{"run", "wf.yaml", "--help"}, true},
		{[]string{"-h"}, true},
		{[]string{"validate", "wf.yaml"}, false},
		{[]string{"run", "wf.yaml", "--", "--help"}, false},
		{[]string{"help", "run"}, false},
	} {
		if got := printsOnly(tc.args); got != tc.want {
			t.Errorf("printsOnly(%q) = %v, want %v", tc.args, got, tc.want)
		}
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
