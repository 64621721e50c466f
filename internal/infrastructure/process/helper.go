package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox"
	"github.com/awf-dev/awf/internal/infrastructure/shellsyntax"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
)

// HelperArg is argv[1] of the helper process: the awf executable re-run to interpret one script.
const HelperArg = "__awf-exec"

const (
	requestFD = 3
	statusFD  = 4

	// helperFailedExit is the helper's exit status when it fails before the script runs. The
	// parent does not rely on it: the status pipe says what happened.
	helperFailedExit = 125
	// parseErrorExit is the status of a script that does not parse, as sh gives.
	parseErrorExit = 2
)

// IsHelper reports whether args (os.Args) start the helper process. main calls it first thing,
// before any flag parsing or configuration:
//
//	if process.IsHelper(os.Args) {
//		os.Exit(process.HelperMain())
//	}
func IsHelper(args []string) bool {
	return len(args) > 1 && args[1] == HelperArg
}

// HelperMain runs the helper with the sandbox hooks (SandboxConfig) and returns its exit
// status: the script's, or 125 when the helper itself failed (and told the parent why on
// fd 4).
func HelperMain() int {
	return SandboxConfig().Main()
}

// SandboxConfig is the helper configuration that enforces a request's sandbox spec: Setup
// applies it (sandbox.Helper.Setup: namespaces' mounts, rlimits, no_new_privs, uid drop,
// Landlock, seccomp) before the script is parsed, and the exec middleware re-checks every
// command against its allowlist. A request without a spec runs unsandboxed. [sandbox]
func SandboxConfig() HelperConfig {
	sb := &sandbox.Helper{}
	return HelperConfig{
		Setup: []func(*Request) error{func(req *Request) error {
			if len(req.Sandbox) == 0 {
				return nil
			}
			env, err := sb.Setup(req.Sandbox, req.Env)
			if err != nil {
				return err
			}
			req.Env = env
			return nil
		}},
		ExecMiddlewares: []func(interp.ExecHandlerFunc) interp.ExecHandlerFunc{sb.Middleware},
	}
}

// HelperConfig holds the hooks of the helper process, which is where the sandbox lives: Setup
// for what must happen in the process before any script code runs (namespaces, no_new_privs,
// Landlock, seccomp, rlimits, dropping to another uid), ExecMiddlewares for what must check
// every command the interpreter is about to execute (the exec guard). The zero value runs the
// script with no hooks.
type HelperConfig struct {
	// Setup runs in order after the request is read and before the script is parsed. An
	// error stops the helper: nothing of the script runs, and the parent's Run returns the
	// error with its fault kind (System when unclassified), so a missing sandbox layer fails
	// closed with the hook's own message.
	Setup []func(req *Request) error
	// ExecMiddlewares wrap the interpreter's handler for external commands, the first
	// outermost (see interp.ExecHandlers); the innermost is interp.DefaultExecHandler. An
	// error that carries a fault kind (such as a fault.Denied refusal) stops the script and
	// is returned by the parent's Run with that kind; an interp.ExitStatus is the command's
	// status, as usual.
	ExecMiddlewares []func(next interp.ExecHandlerFunc) interp.ExecHandlerFunc
}

// Main runs the helper: it reads the request from fd 3, applies Setup, tells the parent it is
// ready on fd 4, then interprets the script with stdin, stdout and stderr as given, and returns
// the script's exit status. It must run in a fresh process started by Runner.Run.
func (c HelperConfig) Main() int {
	// Commands the script runs must not inherit the wire (the parent reads fd 4 to EOF), nor
	// any descriptor awf itself inherited without close-on-exec.
	closeOnExecFrom(requestFD)
	separateRuntimeOutput() // [sandbox] a crash under a limit reaches the parent, not the script
	status, request := inheritedFile(statusFD, "awf-status"), inheritedFile(requestFD, "awf-request")
	if status == nil || request == nil {
		fmt.Fprintln(os.Stderr, "awf: process helper: started without its request and status descriptors")
		return helperFailedExit
	}

	req, err := readRequest(request)
	if err != nil {
		return c.fail(status, fmt.Errorf("process helper: read request: %w", err))
	}
	if req.Dir != "" {
		if err := os.Chdir(req.Dir); err != nil {
			return c.fail(status, fault.New(fault.Execution, "working directory: %w", err))
		}
	}
	if req.Dir, err = os.Getwd(); err != nil {
		return c.fail(status, fmt.Errorf("process helper: working directory: %w", err))
	}
	for _, setup := range c.Setup {
		if err := setup(req); err != nil {
			return c.fail(status, err)
		}
	}
	if req.Serve > 0 {
		return c.serve(req, request, status) // [sandbox] a persistent helper: serve_linux.go
	}
	if _, err := status.Write(appendStatus(nil, statusReady, nil)); err != nil {
		fmt.Fprintf(os.Stderr, "awf: process helper: report ready: %v\n", err)
		return helperFailedExit
	}
	code, _ := c.run(context.Background(), req, status, callIO{os.Stdin, os.Stdout, os.Stderr}, startReaper())
	return code
}

// callIO is the standard input, output and error of one script.
type callIO struct{ in, out, err *os.File }

// fail reports err to the parent and returns the helper's failure status.
func (c HelperConfig) fail(status *os.File, err error) int {
	if _, werr := status.Write(failureRecord(err)); werr != nil {
		fmt.Fprintf(os.Stderr, "awf: %v\n", err)
	}
	return helperFailedExit
}

// run parses and interprets the script with stdio, reaping orphans with reaper (nil: none),
// and returns its exit status and its job control (nil when it did not parse), whose starts
// are still open: ending ctx stops the programs still running.
func (c HelperConfig) run(ctx context.Context, req *Request, status *os.File, stdio callIO, reaper *orphanReaper) (int, *jobControl) {
	file, err := shellsyntax.Parse(req.Script, "script")
	if err != nil {
		fmt.Fprintf(stdio.err, "%v\n", err)
		return parseErrorExit, nil
	}
	opts := []interp.RunnerOption{
		interp.Env(newEnviron(req.Env, req.Vars)),
		interp.Dir(req.Dir),
		interp.StdIO(stdio.in, stdio.out, stdio.err),
	}
	// printfExec first: the calls it serves are printf, a builtin, which the exec guard
	// among the middlewares must not see as a program. The orphan reaper last, around the
	// start and wait of the program itself (reap.go), which programExec runs.
	// Job control's builtins (kill, wait, jobs) before the guard too: they run no program.
	jc := newJobControl(file, false)
	handlers := append([]func(interp.ExecHandlerFunc) interp.ExecHandlerFunc{printfExec, jc.serve}, c.ExecMiddlewares...)
	opts = append(opts, interp.ExecHandlers(append(handlers, reaper.middleware, programExec(jc, false))...))
	opts = append(opts, jc.options(printfHandler(file))...)
	runner, err := interp.New(opts...)
	if err != nil {
		return c.fail(status, fmt.Errorf("process helper: start interpreter: %w", err)), jc
	}
	return c.exitStatus(status, stdio.err, runner.Run(ctx, file)), jc
}

// exitStatus turns the interpreter's result into the helper's exit status. A fatal error with
// a fault kind goes to the parent on the status pipe; any other is printed like a shell would.
func (c HelperConfig) exitStatus(status *os.File, stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	if es, ok := errors.AsType[interp.ExitStatus](err); ok {
		return int(es)
	}
	if _, ok := errors.AsType[interface {
		error
		FaultKind() fault.Kind
	}](err); ok {
		return c.fail(status, err)
	}
	fmt.Fprintf(stderr, "awf: %v\n", err)
	if resource := limitOf(err); resource != "" { // a command could not start: fork failed
		status.Write(limitRecord(resource, err.Error()))
	}
	return 1
}

// environ is the interpreter's starting environment: the exported entries, and the request's
// variables, which are set but not exported. A variable shadows an entry of the same name.
type environ struct {
	names []string // exported names, first occurrence order
	env   map[string]string
	vars  map[string]string
}

func newEnviron(entries []string, vars map[string]string) *environ {
	e := &environ{env: make(map[string]string, len(entries)), vars: vars}
	for _, kv := range entries {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if _, seen := e.env[name]; !seen {
			e.names = append(e.names, name)
		}
		e.env[name] = value
	}
	return e
}

// Get implements expand.Environ.
func (e *environ) Get(name string) expand.Variable {
	if v, ok := e.vars[name]; ok {
		return expand.Variable{Set: true, Kind: expand.String, Str: v}
	}
	if v, ok := e.env[name]; ok {
		return expand.Variable{Set: true, Exported: true, Kind: expand.String, Str: v}
	}
	return expand.Variable{}
}

// Each implements expand.Environ.
func (e *environ) Each(f func(name string, vr expand.Variable) bool) {
	for _, name := range e.names {
		if _, shadowed := e.vars[name]; shadowed {
			continue
		}
		if !f(name, expand.Variable{Set: true, Exported: true, Kind: expand.String, Str: e.env[name]}) {
			return
		}
	}
	for name, v := range e.vars {
		if !f(name, expand.Variable{Set: true, Kind: expand.String, Str: v}) {
			return
		}
	}
}
