// Command awf runs declarative YAML workflows in which AI agents call tools under the engine's
// control. main only sets up signals and exits; everything else is in internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/awf-dev/awf/cmd/awf/internal/cli"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/infrastructure/process"
)

func main() {
	// The sandboxed helper that runs shell scripts is this binary re-executed; it must not
	// touch the CLI.
	if process.IsHelper(os.Args) {
		os.Exit(process.HelperMain())
	}
	// The same helper inside a container, with its request in files (the container backend).
	if process.IsFileHelper(os.Args) {
		os.Exit(process.FileHelperMain(os.Args))
	}
	iostreams.SurviveClosedPipes()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], iostreams.System(), os.Getenv, os.Environ())
	stop()
	os.Exit(code)
}
