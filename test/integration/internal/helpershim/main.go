// Command helpershim is the process helper alone, both entries, built static for the container
// backend's tests while awf's own main does not dispatch process.FileHelperMain yet.
package main

import (
	"fmt"
	"os"

	"github.com/awf-dev/awf/internal/infrastructure/process"
)

func main() {
	switch {
	case process.IsHelper(os.Args):
		os.Exit(process.HelperMain())
	case process.IsFileHelper(os.Args):
		os.Exit(process.FileHelperMain(os.Args))
	}
	fmt.Fprintln(os.Stderr, "helpershim: run as", process.HelperArg, "or", process.FileHelperArg)
	os.Exit(2)
}
