package sandbox

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/awf-dev/awf/internal/infrastructure/sandbox/cmdcheck"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox/landlock"
	"mvdan.cc/sh/v3/interp"
)

// Helper is the sandbox inside the process helper: Setup applies the spec before the script
// is parsed, Middleware guards every command the interpreter executes. One per helper
// process; the zero value is ready. Not safe for concurrent Setup calls.
type Helper struct {
	// Applied is what Setup applied; nil before.
	Applied *Applied
	guard   *cmdcheck.Guard
}

// Setup decodes the spec the parent sent (Launch.Spec, encoded), applies it to this process
// (Enter) and returns the script's environment adjusted (Spec.Environ). It must run before
// any script code. Its error is fault.Denied for a missing required layer, fault.System
// otherwise; the helper must then not run the script.
func (h *Helper) Setup(encoded []byte, env []string) ([]string, error) {
	spec, err := DecodeSpec(encoded)
	if err != nil {
		return nil, err
	}
	if spec.ExecAllowlist {
		set := ResolveExec(spec, envValue(env, "PATH"))
		spec.Executable = &set
	}
	if h.Applied, err = Enter(spec); err != nil {
		return nil, err
	}
	env = spec.Environ(env)
	if spec.RestrictCommands {
		untrusted := slices.Clone(spec.Write)
		if spec.Plan.TempDir != "" {
			untrusted = append(untrusted, spec.Plan.TempDir)
		}
		h.guard = cmdcheck.NewGuard(cmdcheck.New(spec.Commands), env, untrusted)
	}
	return env, nil
}

// Middleware is an exec middleware for the mvdan interpreter (interp.ExecHandlers): with a
// command allowlist, every command is re-checked after expansion and a refused one exits 126
// with the rule on stderr. Without one, or before Setup, it passes commands through.
func (h *Helper) Middleware(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	guarded := func() interp.ExecHandlerFunc {
		if h.guard == nil {
			return next
		}
		return h.guard.Middleware(next)
	}
	return func(ctx context.Context, args []string) error {
		return guarded()(ctx, args)
	}
}

// envValue returns the value of name in a K=V environment, the last one winning.
func envValue(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// programs is the thread the helper starts its programs on, once Enter applied Landlock with
// IPC scopes (landlock.Programs); nil before, or without them.
var programs atomic.Pointer[landlock.Programs]

// StartProgram runs start, which starts one of the script's programs (exec.Cmd.Start), where
// the sandbox wants programs started: on the thread whose Landlock domain confines signals and
// abstract unix sockets, so that all of them share one domain and the helper can still signal
// them (landlock's package doc says why). Outside a sandboxed helper it just calls start.
func StartProgram(start func() error) error { return programs.Load().Start(start) }
