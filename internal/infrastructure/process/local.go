package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/infrastructure/shellsyntax"
)

// Local runs scripts with the interpreter inside awf's own process, spawning only the external
// programs a script calls, each as the leader of a new process group that is killed when the
// script is stopped. It serves the workflow's own shell steps, which the workflow's author
// wrote and which run with awf's rights: they skip the helper's start-up cost (about 3 ms a
// step). Scripts that a model can influence beyond bound values — tools — go through Runner,
// whose helper process is where the sandbox applies. Safe for concurrent use.
type Local struct {
	cfg Config
}

var _ ports.ProcessRunner = (*Local)(nil)

// NewLocal returns a Local with cfg's limits and base environment (helper fields are unused).
func NewLocal(cfg Config) *Local {
	r := New(cfg) // fills the defaults
	return &Local{cfg: r.cfg}
}

// Run interprets req.Script and waits for it and for every program it started. Results and
// errors are as for Runner.Run; req.Policy must be nil, since nothing here can enforce it.
func (l *Local) Run(ctx context.Context, req ports.ProcessRequest) (ports.ProcessResult, error) {
	start := time.Now()
	if req.Policy != nil {
		return ports.ProcessResult{}, fault.New(fault.System, "process: a sandbox policy needs the helper runner, not the local one")
	}
	wreq, err := (&Runner{cfg: l.cfg}).prepare(req)
	if err != nil {
		return ports.ProcessResult{}, err
	}
	file, err := shellsyntax.Parse(req.Script, "script")
	if err != nil {
		return ports.ProcessResult{ExitCode: parseErrorExit, Stderr: err.Error() + "\n", Duration: time.Since(start)}, nil
	}
	runCtx, cancel := WithTimeout(ctx, req.Timeout)
	defer cancel()

	limit := req.OutputLimit
	if limit <= 0 {
		limit = l.cfg.OutputLimit
	}
	overflow, stopOverflow := context.WithCancel(runCtx)
	defer stopOverflow()
	budget := &outputBudget{limit: limit, onOverflow: stopOverflow}
	out, errOut := &headBuffer{limit: limit}, &headTail{limit: l.cfg.StderrLimit}
	stdout := &lockedWriter{w: budget.counting(out)}
	stderr := &lockedWriter{w: budget.counting(errOut)}
	dir := req.Dir
	if dir == "" {
		dir, _ = os.Getwd()
	}
	jc := newJobControl(file, true)
	opts := append([]interp.RunnerOption{
		interp.Env(newEnviron(wreq.Env, wreq.Vars)),
		interp.Dir(dir),
		interp.StdIO(strings.NewReader(req.Stdin), stdout, stderr),
		interp.ExecHandlers(printfExec, jc.serve, programExec(jc, true)),
	}, jc.options(printfHandler(file))...)
	runner, err := interp.New(opts...)
	if err != nil {
		return ports.ProcessResult{}, fault.Wrap(fault.System, fmt.Errorf("start interpreter: %w", err))
	}
	runErr := runner.Run(overflow, file)
	truncated := out.Truncated() || budget.exceeded()
	var code int
	switch {
	case runCtx.Err() != nil:
		code, err = -1, StopError(runCtx, req.Timeout)
	case truncated:
		code, err = 128+int(syscall.SIGKILL), nil
	default:
		code, err = localStatus(runErr, stderr) // may write to stderr: before it is read
	}
	return ports.ProcessResult{Stdout: out.String(), Stderr: errOut.String(), ExitCode: code, Truncated: truncated,
		Duration: time.Since(start)}, err
}

// localStatus turns the interpreter's result into an exit code, as the helper does.
func localStatus(err error, stderr io.Writer) (int, error) {
	if err == nil {
		return 0, nil
	}
	if es, ok := errors.AsType[interp.ExitStatus](err); ok {
		return int(es), nil
	}
	if _, ok := errors.AsType[interface {
		error
		FaultKind() fault.Kind
	}](err); ok {
		return -1, err
	}
	fmt.Fprintf(stderr, "awf: %v\n", err)
	return 1, nil
}

// programExec is the innermost exec handler: it runs an external program and registers it
// with its job (jc). detached (shell steps, Local): the program leads its own process group
// (startDetached; a job object on Windows), which is killed when the script's context ends,
// so that a timeout or Ctrl-C leaves nothing behind, and (but on macOS) the program dies with
// awf. Otherwise (the helper) it
// stays in the helper's group, which the parent kills when the script ends.
func programExec(jc *jobControl, detached bool) func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	return func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
		return func(ctx context.Context, args []string) error {
			hc := interp.HandlerCtx(ctx)
			path, err := interp.LookPathDir(hc.Dir, hc.Env, args[0])
			if err != nil {
				fmt.Fprintln(hc.Stderr, err)
				return interp.ExitStatus(127)
			}
			if jc.stopped(jc.current(hc)) {
				return errJobKilled
			}
			newCmd := func() *exec.Cmd {
				cmd := exec.Command(path, args[1:]...)
				cmd.Args[0] = args[0]
				cmd.Dir = hc.Dir
				cmd.Env = execEnv(hc)
				cmd.Stdin, cmd.Stdout, cmd.Stderr = hc.Stdin, hc.Stdout, hc.Stderr
				cmd.WaitDelay = time.Second
				return cmd
			}
			var cmd *exec.Cmd
			var grp procGroup
			if detached {
				cmd, grp, err = startDetached(newCmd)
			} else {
				cmd = newCmd()
				err = jc.start(cmd)
			}
			if err != nil {
				fmt.Fprintf(hc.Stderr, "%v\n", err)
				return interp.ExitStatus(126)
			}
			pid := cmd.Process.Pid
			exited := jc.started(hc, pid)
			stop := context.AfterFunc(ctx, func() { jc.signal(pid, syscall.SIGKILL) })
			err = cmd.Wait()
			stop()
			if detached {
				// Whatever the program left in its group (background children) goes with it,
				// as in the helper, where the group is killed when the script ends.
				grp.kill()
				grp.release()
			}
			exited()
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return programStatus(hc, err)
		}
	}
}

// programStatus turns what cmd.Wait returned into the command's status, 128+n for signal n.
func programStatus(hc interp.HandlerContext, err error) error {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return interp.ExitStatus(128 + int(ws.Signal()))
		}
		return interp.ExitStatus(exit.ExitCode())
	}
	if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		fmt.Fprintf(hc.Stderr, "%v\n", err)
		return interp.ExitStatus(1)
	}
	return nil
}

// execEnv is the exported environment of the interpreter at this command; a later entry of
// a name wins, as expand.Environ.Each promises.
func execEnv(hc interp.HandlerContext) []string {
	index := map[string]int{}
	var env []string
	hc.Env.Each(func(name string, vr expand.Variable) bool {
		if !vr.Exported || vr.Kind != expand.String {
			return true
		}
		if i, ok := index[name]; ok {
			env[i] = name + "=" + vr.Str
			return true
		}
		index[name] = len(env)
		env = append(env, name+"="+vr.Str)
		return true
	})
	return env
}

// lockedWriter serialises writes from the script's concurrent jobs.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
