// Package cli builds awf's command tree, wires the adapters into the Factory, runs a command
// and maps its error to an exit code. It is the only place that knows exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/cmd/awf/internal/render"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/infrastructure/process"
)

// Version is set at build time with -ldflags "-X .../cli.Version=v1.2.3" (the release's tag,
// by make build and goreleaser).
var Version = "dev"

// Commit is the git commit the binary was built from, set at build time with -ldflags
// "-X .../cli.Commit=..."; "" when unknown (go build, go install), which --version then omits.
var Commit = ""

var codes = map[fault.Kind]int{
	fault.Usage:     1,
	fault.Invalid:   2,
	fault.Execution: 3,
	fault.Denied:    5,
}

// ExitInterrupted is the exit code after Ctrl-C or SIGTERM.
const ExitInterrupted = cmdutil.ExitInterrupted

// exitCode maps an error to the exit code of DESIGN section 7.
func exitCode(ctx context.Context, err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := errors.AsType[*cmdutil.ExitError](err); ok {
		return ee.Code
	}
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	if code, ok := codes[fault.KindOf(err)]; ok {
		return code
	}
	return 4 // fault.System, or unclassified (our bug): never blame the user
}

// Main runs awf with args and returns the exit code. It prints the error once, to stderr, and
// with --output json also as the error member of the command's one JSON object on stdout.
func Main(ctx context.Context, args []string, ios *iostreams.IOStreams, getenv func(string) string, environ []string) int {
	return MainWith(ctx, args, ios, getenv, environ, nil)
}

// MainWith is Main for a program that extends awf's command tree: extend (nil: none) may set
// Factory hooks (Engines, Approver) and add or replace commands before the command runs.
// awf-temporal is awf extended with the Temporal engine.
func MainWith(ctx context.Context, args []string, ios *iostreams.IOStreams, getenv func(string) string, environ []string,
	extend func(f *cmdutil.Factory, root *cobra.Command)) int {
	return mainWith(ctx, args, ios, getenv, environ, extend, false)
}

// mainWith is MainWith; with signals, a command that runs is cancelled by Ctrl-C and SIGTERM
// and survives closed pipes (see signalWatch).
func mainWith(ctx context.Context, args []string, ios *iostreams.IOStreams, getenv func(string) string, environ []string,
	extend func(f *cmdutil.Factory, root *cobra.Command), signals bool) int {
	var watch signalWatch
	defer watch.close()
	out := &watchedWriter{w: ios.Out}
	ios.Out = out
	f := newFactory(ios, getenv, environ)
	f.Args = args
	root := newCmdRoot(f, args)
	if extend != nil {
		extend(f, root)
	}
	if signals {
		watch.hook(root)
	}
	root.SetArgs(args)
	root.SetIn(ios.In)
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	cmd, err := root.ExecuteContextC(ctx)
	for i := len(f.Cleanup) - 1; i >= 0; i-- {
		f.Cleanup[i]()
	}
	if cmd != nil && cmd.Context() != nil {
		ctx = cmd.Context() // the command's own: cancelled by a signal when watched
	}
	code := exitCode(ctx, err)
	if _, handed := errors.AsType[*cmdutil.ExitError](err); err != nil && !handed {
		msg := err.Error()
		if ctx.Err() != nil && !strings.Contains(msg, "interrupt") {
			msg = "interrupted: " + msg
		}
		fmt.Fprintln(ios.ErrOut, "error: "+render.Text(msg)) // errors can quote tool output
		if wantsJSON(cmd, args) {
			writeJSONError(ios, out.wrote.Load(), err, code)
		}
	}
	if werr := ios.WriteErrors(); werr != nil {
		f.Log().Info("output dropped: the reader of a stream went away", "error", werr)
	}
	return code
}

// writeJSONError prints the one JSON object of a failed command run with --output json: the
// command's result with the error in it when the command left it to print (a ResultError),
// else {"error": ...} unless the command already wrote its object (wrote).
func writeJSONError(ios *iostreams.IOStreams, wrote bool, err error, code int) {
	info := cmdutil.NewErrorJSON(err, code)
	if re, ok := errors.AsType[*cmdutil.ResultError](err); ok {
		re.Result.SetError(info)
		_ = cmdutil.WriteJSON(ios.Out, re.Result)
		return
	}
	if wrote {
		return
	}
	_ = cmdutil.WriteJSON(ios.Out, struct {
		Error *cmdutil.ErrorJSON `json:"error"`
	}{info})
}

// wantsJSON reports whether cmd was asked for --output json. When flag parsing stopped before
// the --output flag (an unknown flag came first), the arguments are read for it.
func wantsJSON(cmd *cobra.Command, args []string) bool {
	if cmd == nil {
		return false
	}
	fl := cmd.Flags().Lookup("output")
	if fl == nil {
		return false
	}
	if fl.Changed {
		return fl.Value.String() == string(cmdutil.FormatJSON)
	}
	for i, a := range args {
		switch {
		case a == "--":
			return false
		case a == "--output=json", a == "-o=json", a == "-ojson":
			return true
		case (a == "--output" || a == "-o") && i+1 < len(args) && args[i+1] == "json":
			return true
		}
	}
	return false
}

// watchedWriter records whether anything was written to stdout, so that a failed command that
// printed its own JSON object gets no second one.
type watchedWriter struct {
	w     io.Writer
	wrote atomic.Bool
}

func (w *watchedWriter) Write(p []byte) (int, error) {
	if len(p) > 0 {
		w.wrote.Store(true)
	}
	return w.w.Write(p)
}

// Program is a whole awf program (awf, awf-temporal) from main: the sandboxed helper when the
// process was started as one (the binary re-executed; it must not touch the CLI), else the
// command line with Ctrl-C and SIGTERM cancelling it, extended by extend (see MainWith). It
// returns the exit code.
func Program(extend func(f *cmdutil.Factory, root *cobra.Command)) int {
	if process.IsHelper(os.Args) {
		return process.HelperMain()
	}
	// The same helper inside a container, with its request in files (the container backend).
	if process.IsFileHelper(os.Args) {
		return process.FileHelperMain(os.Args)
	}
	return mainWith(context.Background(), os.Args[1:], iostreams.System(), os.Getenv, os.Environ(), extend, true)
}

// versionLine is what --version prints: "awf v1.2.3 (commit abc1234)", or "awf dev" when no
// commit was stamped.
func versionLine() string {
	if Commit == "" {
		return "awf {{.Version}}\n"
	}
	return "awf {{.Version}} (commit " + Commit + ")\n"
}
