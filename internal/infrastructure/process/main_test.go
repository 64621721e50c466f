package process

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/awf-dev/awf/internal/domain/fault"
	"mvdan.cc/sh/v3/interp"
)

// TestMain lets the test binary act as the helper: Run re-executes it with HelperArg, and a
// further argument picks a HelperConfig with test hooks (testHelpers).
func TestMain(m *testing.M) {
	if IsHelper(os.Args) {
		if len(os.Args) == 2 {
			os.Exit(HelperMain())
		}
		os.Exit(testHelpers[os.Args[2]].Main())
	}
	// A -race helper would otherwise sleep 1s at exit, waiting for race reports to flush.
	if _, ok := os.LookupEnv("GORACE"); !ok {
		os.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	os.Exit(m.Run())
}

// testHelpers are helper configurations selected by the helper's second argument, standing in
// for the sandbox hooks to come.
var testHelpers = map[string]HelperConfig{
	"setup-denied": {Setup: []func(*Request) error{
		func(*Request) error { return fault.New(fault.Denied, "landlock: not supported by this kernel") },
	}},
	"setup-plain-error": {Setup: []func(*Request) error{
		func(*Request) error { return fmt.Errorf("rlimit: operation not permitted") },
	}},
	"setup-rewrite": {Setup: []func(*Request) error{
		func(req *Request) error { req.Vars["AWF_SETUP"] = "from setup"; return nil },
	}},
	"exec-guard": {ExecMiddlewares: []func(interp.ExecHandlerFunc) interp.ExecHandlerFunc{
		func(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
			return func(ctx context.Context, args []string) error {
				switch args[0] {
				case "curl":
					return fault.New(fault.Denied, "command %q is not allowed", args[0])
				case "nope":
					return interp.ExitStatus(42)
				}
				return next(ctx, args)
			}
		},
	}},
}

// helperRunner returns a Runner whose helper uses testHelpers[name].
func helperRunner(name string) *Runner {
	return New(Config{HelperArgs: []string{HelperArg, name}})
}
