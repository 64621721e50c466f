package process

// [sandbox] The parent's side of the sandbox: a request with a policy is compiled into a spec
// that travels to the helper (Request.Sandbox), and the helper is started with the clone flags
// and credentials sandbox.Prepare chose. The helper's side is SandboxConfig (helper.go).

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox"
)

// sandboxLaunch is the sandbox of one Run; nil when the request has no policy.
type sandboxLaunch struct {
	*sandbox.Launch
	files []*os.File // passed to the helper from fd statusFD+1
}

// compile compiles req.Policy narrowed by req.Restrictions into a spec and filters the
// environment the script starts from (sandbox.Spec.BaseEnv: the policy's env.allow and
// env.set), to which git's sandbox settings are added (GitEnv). Without a policy it returns
// nil.
func (r *Runner) compile(req ports.ProcessRequest, wreq *Request) (*sandbox.Spec, error) {
	if req.Policy == nil {
		return nil, nil
	}
	dir := req.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fault.Wrap(fault.System, fmt.Errorf("sandbox: working directory: %w", err))
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fault.Wrap(fault.System, fmt.Errorf("sandbox: working directory: %w", err))
	}
	home, _ := os.UserHomeDir()
	spec, err := sandbox.Compile(req.Policy, req.Restrictions, sandbox.Context{Dir: dir, Home: home})
	if err != nil {
		return nil, err
	}
	if n := &spec.Network; n.Mode == sandbox.NetworkAllowlist && len(n.Hosts) > 0 && r.cfg.Proxy != nil {
		// The allowed hosts are reached through the awf-side filtering proxy only.
		if n.ProxyPort, err = r.cfg.Proxy(n.Hosts); err != nil {
			return nil, fault.Wrap(fault.System, fmt.Errorf("sandbox: filtering proxy: %w", err))
		}
	}
	base := req.BaseEnv
	if base == nil {
		base = r.cfg.BaseEnv
	}
	if wreq.Env, err = mergeEnv(spec.BaseEnv(base), req.Env); err != nil {
		return nil, err
	}
	wreq.Env = GitEnv(wreq.Env, dir, req.Policy.GitHooks)
	return spec, nil
}

// launch prepares the sandbox of one helper for spec and puts the spec on the wire.
func (r *Runner) launch(spec *sandbox.Spec, wreq *Request) (*sandboxLaunch, error) {
	l, err := sandbox.PrepareIndexed(spec, r.cfg.SandboxReport(), &r.protect)
	if err != nil {
		return nil, err
	}
	files := l.ExtraFiles(statusFD + 1) // numbers them in the spec: before Encode
	if wreq.Sandbox, err = l.Spec.Encode(); err != nil {
		l.Close()
		return nil, fault.Wrap(fault.System, err)
	}
	return &sandboxLaunch{Launch: l, files: files}, nil
}

// Close removes the sandbox's temporary directory and cgroup, once the helper is gone.
func (l *sandboxLaunch) Close() {
	if l != nil {
		l.Launch.Close()
	}
}

// limits are the resource limits the helper runs under; none without a sandbox.
func (l *sandboxLaunch) limits() sandbox.Limits {
	if l == nil {
		return sandbox.Limits{}
	}
	return l.Spec.Limits
}

// limitReached names the resource whose cgroup limit stopped a process of the helper, if any
// (sandbox.Launch.LimitReached); call it once the helper has exited, before Close.
func (l *sandboxLaunch) limitReached() string {
	if l == nil {
		return ""
	}
	return l.LimitReached()
}

// enroll moves a helper started ahead into the sandbox's cgroup, if it has one.
func (l *sandboxLaunch) enroll(pid int) error {
	if l == nil {
		return nil
	}
	return l.Enroll(pid)
}

// extraFiles are the descriptors the helper inherits after the request and status pipes.
func (l *sandboxLaunch) extraFiles() []*os.File {
	if l == nil {
		return nil
	}
	return l.files
}

// sysProcAttr is what the helper is started with: the sandbox's clone flags, user namespace
// mappings, credentials and cgroup, or nothing special.
func (l *sandboxLaunch) sysProcAttr() *syscall.SysProcAttr {
	if l == nil {
		return &syscall.SysProcAttr{}
	}
	return l.SysProcAttr
}

// wrapped reports whether the helper starts through a wrapper program (sandbox-exec on macOS).
func (l *sandboxLaunch) wrapped() bool {
	return l != nil && l.Wrapper() != nil
}

// wrap is the command that starts the helper path with args through the wrapper.
func (l *sandboxLaunch) wrap(path string, args []string) *exec.Cmd {
	argv := l.Wrapper()(path, args)
	return exec.Command(argv[0], argv[1:]...)
}
