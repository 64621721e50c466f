// Package process runs the shell scripts of awf (shell steps; later shell and custom command
// tools). Run re-executes awf itself as a helper in a process group of its own; the helper
// interprets the script with mvdan.cc/sh and exits with the script's status (helper.go). The
// parent side (runner.go) feeds it, captures its output under caps, and kills the whole group
// on timeout, cancellation, output overflow and when the script ends. With Config.Serve a
// sandboxed script goes instead to a helper that stays up for the run and serves the calls of
// its sandbox one after the other (serve_linux.go). It implements
// ports.ProcessRunner and does not enforce a sandbox policy yet.
//
// What is per OS sits in files named for it: the process group (group_*.go: a process group
// on Unix, a job object on Windows), how the helper inherits its pipes (fd_*.go: descriptors 3
// and 4 on Unix, listed inheritable handles on Windows), signals (signal_*.go: Windows has
// none but termination). macOS has no parent-death signal and no PID namespaces: a program
// still running when awf is killed with SIGKILL outlives it there.
package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox"
)

// Defaults of Config.
const (
	DefaultOutputLimit  = 64 << 20
	DefaultStderrLimit  = 1 << 20
	DefaultDrainTimeout = time.Second
)

// Config sets up a Runner. The zero value is usable: every field has a default.
type Config struct {
	// HelperPath is the executable re-run as the helper; "" means os.Executable(), which is
	// awf itself (or the test binary in tests).
	HelperPath string
	// HelperArgs are the helper's arguments after argv[0]; nil means {HelperArg}.
	HelperArgs []string
	// OutputLimit caps the stdout kept per run when the request sets none; 0 means
	// DefaultOutputLimit (64 MiB).
	OutputLimit int64
	// StderrLimit caps the stderr kept per run; 0 means DefaultStderrLimit (1 MiB). Its first
	// and last halves are kept, with a line counting what was left out between them.
	StderrLimit int64
	// BaseEnv is the environment of requests whose BaseEnv is nil; nil means MinimalEnv().
	BaseEnv []string
	// DrainTimeout bounds how long Run keeps reading output once the script has ended and its
	// process group has been killed. Only a process that left the group (setsid) can still
	// hold the pipes then; 0 means DefaultDrainTimeout (1s).
	DrainTimeout time.Duration
	// SandboxReport says what this machine enforces, for requests with a policy; nil means
	// sandbox.Probe. Tests pass a weakened report (sandbox.Report.Without). [sandbox]
	SandboxReport func() sandbox.Report
	// Proxy returns the loopback port of the filtering proxy for a host allowlist (started on
	// first use); nil leaves an allowlist without network. See internal/infrastructure/netproxy.
	Proxy func(hosts []string) (port int, err error)
	// Warm starts helpers for the next Runs as soon as a Run ends, so that the next Run
	// finds one past its start-up, waiting for its request (warm.go). The owner of such a
	// Runner calls Close when done; helpers no Run takes are stopped after WarmIdle.
	Warm bool
	// Serve runs sandboxed calls in helpers that stay up for the run, one per distinct
	// sandbox, set up once and cleaned between calls (serve_linux.go; Linux only): a call
	// then costs no process start and no sandbox set-up. The owner of such a Runner calls
	// Close, which stops them.
	Serve bool
}

// Runner runs scripts through the helper process. It is safe for concurrent use: each Run has
// its own process, pipes and buffers.
type Runner struct {
	cfg    Config
	exeErr error // from os.Executable, reported by Run
	warm   warm  // the helpers started ahead for the next Runs
	// servers are the persistent helpers of sandboxed calls (serve_linux.go).
	servers servers
	// protect finds the protected paths of each sandboxed run, re-reading only the
	// directories that changed since the last one. [sandbox]
	protect sandbox.ProtectIndex

	onStart func(pid int) // tests: the helper's pid, which is its process group id
}

var _ ports.ProcessRunner = (*Runner)(nil)

// New returns a Runner with cfg's defaults filled in. It does not fail: when awf cannot find
// its own executable, every Run returns that error (kind fault.System).
func New(cfg Config) *Runner {
	r := &Runner{cfg: cfg}
	if r.cfg.HelperPath == "" {
		r.cfg.HelperPath, r.exeErr = os.Executable()
	}
	if r.cfg.HelperArgs == nil {
		r.cfg.HelperArgs = []string{HelperArg}
	}
	if r.cfg.OutputLimit <= 0 {
		r.cfg.OutputLimit = DefaultOutputLimit
	}
	if r.cfg.StderrLimit <= 0 {
		r.cfg.StderrLimit = DefaultStderrLimit
	}
	if r.cfg.BaseEnv == nil {
		r.cfg.BaseEnv = MinimalEnv()
	}
	if r.cfg.DrainTimeout <= 0 {
		r.cfg.DrainTimeout = DefaultDrainTimeout
	}
	if r.cfg.SandboxReport == nil {
		r.cfg.SandboxReport = sandbox.Probe
	}
	return r
}

// Run runs req.Script in the helper and waits for it and for everything it started.
//
// A non-zero exit is a result, not an error; a script that does not parse exits 2 with the
// parse error on stderr. When the script ends, whatever it left running in its process group
// (background jobs, nohup) is killed. Output beyond the output limit (stdout and stderr
// counted together) kills the group too: the result then has Truncated set, the kept head of
// stdout, an ExitCode of 137 (a signal n gives 128+n, as in a shell) and no error.
//
// A sandbox resource limit that stops the script is an error of kind fault.Execution naming
// it ("killed: memory limit 1 GiB reached", "killed: process limit 256 reached"), also when it
// is the helper's own Go runtime that ran out (limits.go).
//
// A timeout or a cancelled ctx kills the group and returns the partial result with an error of
// kind fault.Execution ("timed out after 1s", "interrupted") that wraps the context's error.
// A missing Dir is fault.Execution, a bad Env or Vars name fault.Invalid, a helper failure
// fault.System or the kind the helper's Setup hook gave.
//
// With req.Policy, narrowed by req.Restrictions, the helper runs sandboxed (see sandbox.go): a
// sandbox layer the policy requires that this machine lacks is fault.Denied, before or inside
// the helper, and nothing of the script runs.
func (r *Runner) Run(ctx context.Context, req ports.ProcessRequest) (ports.ProcessResult, error) {
	start := time.Now()
	wreq, err := r.prepare(req)
	if err != nil {
		return ports.ProcessResult{}, err
	}
	spec, err := r.compile(req, wreq) // [sandbox] nil without a policy
	if err != nil {
		return ports.ProcessResult{}, err
	}
	if spec != nil && r.cfg.Serve {
		// A helper that stays up for the run serves the call, when the spec allows one.
		if res, err, served := r.runServed(ctx, req, wreq, spec, start); served {
			return res, err
		}
	}
	var launch *sandboxLaunch
	if spec != nil {
		if launch, err = r.launch(spec, wreq); err != nil {
			return ports.ProcessResult{}, err
		}
	}
	defer launch.Close()
	if ctx.Err() != nil {
		return ports.ProcessResult{ExitCode: -1}, StopError(ctx, 0)
	}
	runCtx, cancel := WithTimeout(ctx, req.Timeout)
	defer cancel()

	limit := req.OutputLimit
	if limit <= 0 {
		limit = r.cfg.OutputLimit
	}
	p, err := r.start(req.Stdin, wreq, limit, launch)
	if err != nil {
		return ports.ProcessResult{}, err
	}
	if r.onStart != nil {
		r.onStart(p.pid)
	}
	stop := context.AfterFunc(runCtx, p.kill)
	defer stop()

	state, waitErr := p.wait()
	status := p.finish(r.cfg.DrainTimeout)
	// The helper of the next run starts now, in the time between runs, when no pipe of
	// this one is open (a fork while they are would hold them until its exec, and delay
	// their end of file).
	if r.cfg.Warm && !launch.wrapped() {
		r.warm.refill(r, launch.sysProcAttr(), launch.extraFiles())
	}
	return r.outcome(p.result(state, start), runCtx, req, waitErr, status, launch)
}

// outcome is Run's result and error once the helper is done with the script: a stopped run,
// a helper that could not be waited for, or what its status records say.
func (r *Runner) outcome(res ports.ProcessResult, runCtx context.Context, req ports.ProcessRequest, waitErr error,
	status []byte, launch *sandboxLaunch) (ports.ProcessResult, error) {
	stopped := runCtx.Err() != nil
	switch {
	case stopped:
		return res, StopError(runCtx, req.Timeout)
	case waitErr != nil:
		return res, fault.Wrap(fault.System, fmt.Errorf("wait for process helper: %w", waitErr))
	}
	return res, r.helperError(status, res, launch)
}

// prepare checks the request and builds what goes on the wire.
func (r *Runner) prepare(req ports.ProcessRequest) (*Request, error) {
	if r.exeErr != nil {
		return nil, fault.Wrap(fault.System, fmt.Errorf("find the awf executable to run scripts: %w", r.exeErr))
	}
	if err := checkVars(req.Vars); err != nil {
		return nil, err
	}
	base := req.BaseEnv
	if base == nil {
		base = r.cfg.BaseEnv
	}
	env, err := mergeEnv(base, req.Env)
	if err != nil {
		return nil, err
	}
	dir, err := workDir(req.Dir)
	if err != nil {
		return nil, err
	}
	return &Request{Script: req.Script, Env: env, Vars: req.Vars, Dir: dir}, nil
}

// workDir checks the working directory of a request and makes it absolute; "" is awf's own
// (or "" when awf's own cannot be found: the helper's error says so).
func workDir(dir string) (string, error) {
	if dir == "" {
		wd, _ := os.Getwd()
		return wd, nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fault.New(fault.Execution, "working directory: %w", err)
	}
	if !fi.IsDir() {
		return "", fault.New(fault.Execution, "working directory %s: not a directory", dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fault.New(fault.Execution, "working directory: %w", err)
	}
	return abs, nil
}

// helperError turns the status records into Run's error: the resource limit that stopped the
// script (the helper's report, or its cgroup's for a script that failed), a crash of the
// helper, a failure the helper reported, none at all, which means the executable did not act
// as a helper, or, for a script that failed saying an allocation or a fork failed under a
// sandbox limit, that limit.
func (r *Runner) helperError(data []byte, res ports.ProcessResult, sb *sandboxLaunch) error {
	st, err := parseStatus(data)
	if err != nil {
		return fault.Wrap(fault.System, fmt.Errorf("process helper status: %w", err))
	}
	// The Go runtime exits 2 on a fatal error or panic; text on the pipe from a helper that
	// exited otherwise is not a crash report.
	if st.crash != "" && res.ExitCode != 2 {
		st.crash = ""
	}
	if st.limit == "" && st.crash != "" {
		st.limit = crashLimit(st.crash)
	}
	if st.limit == "" && res.ExitCode != 0 {
		st.limit = sb.limitReached()
	}
	switch {
	case st.limit != "":
		lim := sb.limits()
		return limitError(st.limit, lim.Memory, lim.PIDs)
	case st.crash != "":
		return crashError(st.crash)
	case st.err != nil:
		return st.err
	case !st.ready:
		msg := fmt.Sprintf("process helper %s %s did not run the script (does main call process.HelperMain first?): exit status %d",
			r.cfg.HelperPath, strings.Join(r.cfg.HelperArgs, " "), res.ExitCode)
		if first, _, _ := strings.Cut(res.Stderr, "\n"); first != "" {
			msg += ": " + first
		}
		return fault.New(fault.System, "%s", msg)
	case res.ExitCode != 0 && !res.Truncated && sb != nil:
		if resource := reportedLimit(res.Stderr, sb.limits()); resource != "" {
			return reachedError(resource, sb.limits(), res.ExitCode)
		}
	}
	return nil
}

// proc is one running helper with the parent's ends of its pipes.
type proc struct {
	cmd *exec.Cmd
	pid int       // also the process group id (Setpgid) on Unix
	grp procGroup // the helper and everything it starts

	mu     sync.Mutex
	reaped bool // the helper's pid may be reused: never signal its group again

	// killer, when set, kills in place of grp: the helper is a persistent one (serve_linux.go),
	// whose process and group outlive this call.
	killer func()

	reqW, inW, outR, errR, statusR *os.File
	io                             sync.WaitGroup // request and stdin writers, output readers
	out                            headBuffer
	errOut                         headTail
	budget                         outputBudget  // stdout and stderr together
	status                         headBuffer    // records, then the head of a crash report
	statusDone                     chan struct{} // closed when the status pipe is drained
}

// start gives the request to a helper, the one started ahead for a run like this one
// (warm.go) or a new one, and starts the goroutines that feed and drain it.
func (r *Runner) start(stdin string, wreq *Request, limit int64, sb *sandboxLaunch) (*proc, error) {
	attr, extra := sb.sysProcAttr(), sb.extraFiles()
	if sb.wrapped() {
		// [sandbox] sandbox-exec applies a profile made for this run: never a helper started
		// ahead, which has none.
		p, err := r.spawnCmd(sb.wrap(r.cfg.HelperPath, r.cfg.HelperArgs), attr, extra)
		if err != nil {
			return nil, err
		}
		p.begin(wreq, stdin, limit, r.cfg.StderrLimit)
		return p, nil
	}
	p := r.warm.take(attr, extra)
	if p != nil && sb.enroll(p.pid) != nil {
		p.discard() // the cold start below reports what is wrong with the cgroup
		p = nil
	}
	if p == nil {
		var err error
		if p, err = r.spawn(attr, extra); err != nil {
			return nil, err
		}
	}
	p.begin(wreq, stdin, limit, r.cfg.StderrLimit)
	return p, nil
}

// spawn creates the pipes and starts a helper in its own process group with attr (the
// sandbox's clone flags, credentials and cgroup, or none) and the sandbox's descriptors from
// fd 5. The helper then waits for its request.
func (r *Runner) spawn(attr *syscall.SysProcAttr, extra []*os.File) (*proc, error) {
	return r.spawnCmd(exec.Command(r.cfg.HelperPath, r.cfg.HelperArgs...), attr, extra)
}

// spawnCmd is spawn with the command that starts the helper.
func (r *Runner) spawnCmd(cmd *exec.Cmd, attr *syscall.SysProcAttr, extra []*os.File) (*proc, error) {
	var (
		opened []*os.File
		err    error
	)
	pipe := func() (rd, wr *os.File) {
		if err == nil {
			if rd, wr, err = os.Pipe(); err == nil {
				opened = append(opened, rd, wr)
			}
		}
		return rd, wr
	}
	reqR, reqW := pipe()
	statusR, statusW := pipe()
	outR, outW := pipe()
	errR, errW := pipe()
	inR, inW := pipe()
	if err != nil {
		closeAll(opened)
		return nil, fault.Wrap(fault.System, fmt.Errorf("create pipes for the process helper: %w", err))
	}

	cmd.Env = helperEnv()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	a := *attr // [sandbox] the sandbox's clone flags and credentials, if any
	detach(&a) // its own process group (group_*.go)
	cmd.SysProcAttr = &a
	// fds 3 and 4, then the sandbox's descriptors from fd 5
	passFiles(cmd, append([]*os.File{reqR, statusW}, extra...))
	err = cmd.Start()
	closeAll([]*os.File{reqR, statusW, outW, errW, inR}) // the helper has its copies
	var grp procGroup
	if err == nil {
		if grp, err = newProcGroup(cmd.Process); err != nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	}
	if err != nil {
		closeAll([]*os.File{reqW, statusR, outR, errR, inW})
		return nil, fault.Wrap(fault.System, fmt.Errorf("start process helper: %w", err))
	}
	return &proc{cmd: cmd, pid: cmd.Process.Pid, grp: grp, reqW: reqW, inW: inW, outR: outR, errR: errR, statusR: statusR,
		statusDone: make(chan struct{})}, nil
}

// begin sends the request and stdin (closing both pipes once written: the helper reads the
// request to EOF, and the script sees the end of its input) and drains the output and
// status pipes. A write error shows as a helper failure (request) or is a script that did
// not read all its input (stdin).
func (p *proc) begin(wreq *Request, stdin string, limit, stderrLimit int64) {
	p.out = headBuffer{limit: limit}
	p.errOut = headTail{limit: stderrLimit}
	p.budget = outputBudget{limit: limit, onOverflow: p.kill}
	p.status = headBuffer{limit: 2*maxStatusMsg + maxCrashReport}
	// A small request fits the pipe and the helper reads it first thing, and no stdin is
	// just an end of file: both are done here rather than by goroutines, which on an idle
	// machine cost a thread's wake-up each.
	if wreq.size() < smallRequest {
		writeRequest(p.reqW, wreq)
		p.reqW.Close()
	} else {
		p.goIO(func() { writeRequest(p.reqW, wreq); p.reqW.Close() })
	}
	if stdin == "" {
		p.inW.Close()
	} else {
		p.goIO(func() { io.WriteString(p.inW, stdin); p.inW.Close() })
	}
	p.goIO(func() { drain(p.outR, p.budget.counting(&p.out)) })
	p.goIO(func() { drain(p.errR, p.budget.counting(&p.errOut)) })
	// Drained while the helper runs: a crash report of the helper's runtime can be larger than
	// the pipe, and the helper would block writing it.
	go func() { drain(p.statusR, &p.status); close(p.statusDone) }()
}

func (p *proc) goIO(f func()) {
	p.io.Add(1)
	go func() {
		defer p.io.Done()
		f()
	}()
}

// kill kills the helper's whole process group (its job object on Windows), unless the helper
// has been reaped.
func (p *proc) kill() {
	if p.killer != nil {
		p.killer()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.reaped {
		p.grp.kill()
	}
}

// wait waits for the helper to exit, kills what is left of its group while the helper's
// unreaped pid still pins the group id, then reaps it.
func (p *proc) wait() (*os.ProcessState, error) {
	waitExited(p.pid)
	p.mu.Lock()
	p.grp.kill()
	p.reaped = true
	p.mu.Unlock()

	err := p.cmd.Wait()
	p.grp.release()
	if _, ok := errors.AsType[*exec.ExitError](err); ok {
		err = nil
	}
	return p.cmd.ProcessState, err
}

// finish waits for the feeding and draining goroutines, at most drainTimeout for a pipe still
// held open by a process outside the group, then reads the status records and closes every
// pipe.
func (p *proc) finish(drainTimeout time.Duration) []byte {
	deadline := time.Now().Add(drainTimeout)
	for _, f := range []*os.File{p.reqW, p.inW} {
		if f != nil {
			f.SetWriteDeadline(deadline) // an error if the writer has closed it: nothing to do
		}
	}
	for _, f := range []*os.File{p.outR, p.errR, p.statusR} {
		f.SetReadDeadline(deadline)
	}
	// Only the helper, now dead, held the status pipe: its drain ends before the deadline
	// that may be waited out on the output pipes.
	<-p.statusDone
	status := []byte(p.status.String())
	p.io.Wait()
	closeAll([]*os.File{p.outR, p.errR, p.statusR})
	return status
}

// result collects what the run produced; the output buffers become strings here, once.
func (p *proc) result(state *os.ProcessState, start time.Time) ports.ProcessResult {
	return ports.ProcessResult{
		Stdout:    p.out.String(),
		Stderr:    p.errOut.String(),
		ExitCode:  exitCode(state),
		Truncated: p.out.Truncated() || p.budget.exceeded(),
		Duration:  time.Since(start),
	}
}

// exitCode is the helper's exit status, or 128+n when signal n killed it.
func exitCode(state *os.ProcessState) int {
	if state == nil {
		return -1
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return state.ExitCode()
}

func closeAll(files []*os.File) {
	for _, f := range files {
		if f != nil {
			f.Close()
		}
	}
}
