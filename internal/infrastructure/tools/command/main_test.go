package command_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/awf-dev/awf/internal/infrastructure/process"
)

// argvFlag makes the test binary print its arguments as a JSON list and exit: the program
// the hostile-value tests run, to see exactly what argument vector it received.
const argvFlag = "__print-argv-json"

// TestMain lets the test binary act as the process runner's helper and as the argv printer.
func TestMain(m *testing.M) {
	if process.IsHelper(os.Args) {
		os.Exit(process.HelperMain())
	}
	if len(os.Args) > 1 && os.Args[1] == argvFlag {
		if err := json.NewEncoder(os.Stdout).Encode(os.Args[2:]); err != nil {
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}
