// Command awf runs declarative YAML workflows in which AI agents call tools under the engine's
// control. main only exits with what the program returns; everything else is in internal/cli.
//
// updatemaxprocs=0: the runtime would start, at every start, a goroutine (and with it a
// thread) that follows later changes of the container's CPU limit; every command and every
// sandboxed call's helper would pay for it, while awf's own CPU use is small
// (docs/architecture.md, Start-up). GOMAXPROCS still follows the limit found at start.
//
//go:debug updatemaxprocs=0
package main

import (
	"os"

	"github.com/awf-dev/awf/cmd/awf/internal/cli"
)

func main() {
	os.Exit(cli.Program(nil))
}
