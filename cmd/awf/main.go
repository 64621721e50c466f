// Command awf runs declarative YAML workflows in which AI agents call tools under the engine's
// control. main only exits with what the program returns; everything else is in internal/cli.
package main

import (
	"os"

	"github.com/awf-dev/awf/cmd/awf/internal/cli"
)

func main() {
	os.Exit(cli.Program(nil))
}
