// Package cli builds awf's command tree, wires the adapters into the Factory, runs a command
// and maps its error to an exit code. It is the only place that knows exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/cmd/awf/internal/render"
	"github.com/awf-dev/awf/internal/domain/fault"
)

// Version is set at build time with -ldflags "-X .../cli.Version=v1.2.3".
var Version = "dev"

var codes = map[fault.Kind]int{
	fault.Usage:     1,
	fault.Invalid:   2,
	fault.Execution: 3,
	fault.Denied:    5,
}

// ExitInterrupted is the exit code after Ctrl-C or SIGTERM.
const ExitInterrupted = 130

// exitCode maps an error to the exit code of DESIGN section 7.
func exitCode(ctx context.Context, err error) int {
	if err == nil {
		return 0
	}
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return ExitInterrupted
	}
	if code, ok := codes[fault.KindOf(err)]; ok {
		return code
	}
	return 4 // fault.System, or unclassified (our bug): never blame the user
}

// Main runs awf with args and returns the exit code. It prints the error once, to stderr.
func Main(ctx context.Context, args []string, ios *iostreams.IOStreams, getenv func(string) string, environ []string) int {
	f := newFactory(ios, getenv, environ)
	root := NewCmdRoot(f)
	root.SetArgs(args)
	root.SetIn(ios.In)
	root.SetOut(ios.Out)
	root.SetErr(ios.ErrOut)
	err := root.ExecuteContext(ctx)
	for i := len(f.Cleanup) - 1; i >= 0; i-- {
		f.Cleanup[i]()
	}
	if err != nil {
		msg := err.Error()
		if ctx.Err() != nil && !strings.Contains(msg, "interrupt") {
			msg = "interrupted: " + msg
		}
		fmt.Fprintln(ios.ErrOut, "error: "+render.Text(msg)) // errors can quote tool output
	}
	if werr := ios.WriteErrors(); werr != nil {
		f.Log().Info("output dropped: the reader of a stream went away", "error", werr)
	}
	return exitCode(ctx, err)
}
