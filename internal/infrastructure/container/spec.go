package container

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/container/engine"
	"github.com/awf-dev/awf/internal/infrastructure/process"
	"github.com/awf-dev/awf/internal/infrastructure/sandbox"
)

// Network modes of workflow.Policy.Network.
const (
	networkNone      = "none"
	networkAllowlist = "allowlist"
	networkHost      = "host"
)

// spec is one run's container, worked out from the request, the policy and the Config before
// anything reaches the engine.
type spec struct {
	image     string
	dir       string
	layout    *layout
	network   string // "none" or the Docker network to join
	resources engine.Resources
	timeout   time.Duration
	output    int64
	wire      *process.Request
	stdin     string
	applied   map[string]string
}

// plan checks req and builds its spec. With create unset nothing on disk changes (Describe).
func (r *Runner) plan(req ports.ProcessRequest, create bool) (*spec, error) {
	pol := req.Policy
	if pol == nil {
		pol = &workflow.Policy{}
	}
	s := &spec{image: pol.Image, stdin: req.Stdin}
	if s.image == "" {
		s.image = r.cfg.Image
	}
	if s.image == "" {
		return nil, fault.New(fault.Invalid, "sandbox backend container: no image (set sandbox.image)")
	}
	narrow := req.Restrictions
	if narrow == nil {
		narrow = &workflow.Restrictions{}
	}
	if err := commandsEnforceable(pol, narrow); err != nil {
		return nil, err
	}
	workspace := cmp.Or(r.cfg.WorkDir, req.Dir, r.cwd)
	l, err := planLayout(workspace, pol, narrow.Paths, create)
	if err != nil {
		return nil, err
	}
	s.layout = l
	if s.dir, err = r.workingDir(req.Dir, l); err != nil {
		return nil, err
	}
	if s.network, err = r.network(pol, narrow.Hosts); err != nil {
		return nil, err
	}
	limits := r.limits(pol.Limits)
	s.resources = resources(limits)
	s.timeout = cmp.Or(req.Timeout, limits.Timeout)
	s.output = cmp.Or(req.OutputLimit, limits.Output, DefaultOutputLimit)
	if s.wire, err = r.wireRequest(req, pol); err != nil {
		return nil, err
	}
	s.wire.Env = process.GitEnv(s.wire.Env, s.dir, pol.GitHooks) // as in the process backend
	s.applied = r.describe(s, limits)
	return s, nil
}

// commandsEnforceable refuses a command allowlist: the process backend enforces one with an
// exec guard inside its sandboxed helper, whose set-up needs privileges a container does not
// have, and an allowlist nobody enforces must not pass for one. The refusal is fault.Denied,
// so the tool does not run.
func commandsEnforceable(p *workflow.Policy, r *workflow.Restrictions) error {
	if p.Commands == nil && r.Commands == nil {
		return nil
	}
	return fault.New(fault.Denied, "sandbox backend container cannot enforce a command allowlist (sandbox.commands or a tool's "+
		"restrictions.commands) yet: remove it or use the process backend")
}

// workingDir checks that the script's directory exists and is inside what the container sees.
func (r *Runner) workingDir(dir string, l *layout) (string, error) {
	if dir == "" {
		return l.workspace, nil
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return "", fault.New(fault.Execution, "working directory: %w", err)
	}
	if !fi.IsDir() {
		return "", fault.New(fault.Execution, "working directory %s: not a directory", dir)
	}
	if !l.contains(dir) {
		return "", fault.New(fault.Execution, "working directory %s is outside the workspace %s mounted in the container", dir, l.workspace)
	}
	return dir, nil
}

// network maps the policy's network mode to a Docker network. Processes get no network unless
// the policy allows some. A host allowlist cannot be enforced by this backend (that takes the
// filtering proxy of the process sandbox): under enforce: strict it is refused, otherwise the
// container gets the configured network unfiltered and the audit record says so. A tool's
// restrictions.hosts can only narrow: an empty list gives no network; any other list cannot be
// enforced here and is refused whatever enforce says, since the tool's author asked for less
// than the policy gives.
func (r *Runner) network(p *workflow.Policy, narrow []string) (string, error) {
	switch {
	case narrow != nil && len(narrow) == 0:
		return networkNone, nil
	case narrow != nil:
		return "", fault.New(fault.Denied, "sandbox backend container cannot restrict a tool to hosts %s "+
			"(restrictions.hosts): use the process backend, or restrictions.hosts: [] for no network", strings.Join(narrow, ", "))
	}
	mode := p.Network
	if mode == "" && len(p.Hosts) > 0 {
		mode = networkAllowlist
	}
	switch mode {
	case "", networkNone:
		return networkNone, nil
	case networkHost:
		return r.cfg.Network, nil
	case networkAllowlist:
		if p.Enforce == "strict" {
			return "", fault.New(fault.Denied, "sandbox backend container cannot restrict a process to hosts %s "+
				"(enforce: strict): use network: none or host, or the process backend", strings.Join(p.Hosts, ", "))
		}
		return r.cfg.Network, nil
	}
	return "", fault.New(fault.Invalid, "sandbox.network %q: want none, allowlist or host", mode)
}

// limits fills the policy's zero limits from the Config's defaults.
func (r *Runner) limits(p workflow.Limits) workflow.Limits {
	d := r.cfg.Limits
	return workflow.Limits{
		Timeout:  cmp.Or(p.Timeout, d.Timeout),
		Output:   cmp.Or(p.Output, d.Output),
		Memory:   cmp.Or(p.Memory, d.Memory),
		PIDs:     cmp.Or(p.PIDs, d.PIDs, DefaultPIDs),
		FileSize: cmp.Or(p.FileSize, d.FileSize),
		CPU:      cmp.Or(p.CPU, d.CPU),
	}
}

// resources are the cgroup limits and rlimits of the container. Swap is off (MemorySwap equal
// to Memory), so the memory limit is a limit.
func resources(l workflow.Limits) engine.Resources {
	res := engine.Resources{Memory: l.Memory, NanoCPUs: int64(l.CPU * 1e9)}
	if l.Memory > 0 {
		res.MemorySwap = l.Memory
	}
	if l.PIDs > 0 {
		pids := int64(l.PIDs)
		res.PidsLimit = &pids
	}
	if l.FileSize > 0 {
		res.Ulimits = []engine.Ulimit{{Name: "fsize", Soft: l.FileSize, Hard: l.FileSize}}
	}
	return res
}

// wireRequest is what the helper receives: the script, the exported environment and the
// variables, checked as the process backend checks them.
func (r *Runner) wireRequest(req ports.ProcessRequest, pol *workflow.Policy) (*process.Request, error) {
	for name := range req.Vars {
		if !syntax.ValidName(name) {
			return nil, fault.New(fault.Invalid, "shell variable name %q is not a valid identifier", name)
		}
	}
	env := r.environment(req.BaseEnv, pol)
	for _, name := range slices.Sorted(maps.Keys(req.Env)) {
		if name == "" || strings.ContainsAny(name, "=\x00") {
			return nil, fault.New(fault.Invalid, "environment variable name %q: must be non-empty, without '=' or NUL", name)
		}
		env = append(env, name+"="+req.Env[name]) // a later entry wins in the helper
	}
	return &process.Request{Script: req.Script, Env: env, Vars: req.Vars}, nil
}

// environment is what a script starts from, filtered as the process backend filters it
// (sandbox.Spec.BaseEnv: PATH, LANG, LC_*, TZ, TERM, the policy's env.allow, then env.set), so
// that awf's own variables (API keys) stay out of the container. PATH, HOME and TMPDIR are the
// container's (/tmp is its tmpfs) unless env.set names them: the host's mean nothing there.
func (r *Runner) environment(base []string, pol *workflow.Policy) []string {
	if base == nil {
		base = r.cfg.BaseEnv
	}
	filter := sandbox.Spec{Env: sandbox.Env{Allow: pol.Env.Allow, Set: pol.Env.Set}}
	env := filter.BaseEnv(base)
	for _, kv := range []string{"PATH=" + process.DefaultPath, "HOME=/tmp", "TMPDIR=/tmp"} {
		name, _, _ := strings.Cut(kv, "=")
		if _, set := pol.Env.Set[name]; set {
			continue
		}
		env = slices.DeleteFunc(env, func(e string) bool { return strings.HasPrefix(e, name+"=") })
		env = append(env, kv)
	}
	return env
}

// describe says what the container enforces, for the audit record's sandbox.applied.
func (r *Runner) describe(s *spec, l workflow.Limits) map[string]string {
	a := map[string]string{
		"backend":      "container",
		"image":        s.image,
		"network":      s.network,
		"user":         r.user,
		"capabilities": "none",
		"no_new_privs": "true",
		"root_fs":      "read-only",
		"tmp":          "tmpfs " + strconv.FormatInt(r.cfg.TmpSize, 10) + " bytes",
		"workspace":    s.layout.workspace,
		"writable":     strings.Join(s.layout.writable, ","),
		"memory":       limitText(l.Memory),
		"pids":         limitText(int64(l.PIDs)),
		"cpus":         "unlimited",
		"file_size":    limitText(l.FileSize),
	}
	if l.CPU > 0 {
		a["cpus"] = strconv.FormatFloat(l.CPU, 'g', -1, 64)
	}
	if len(s.layout.readOnly) > 0 {
		a["readable"] = strings.Join(s.layout.readOnly, ",")
	}
	if len(s.layout.protected) > 0 {
		a["protected"] = strings.Join(s.layout.protected, ",")
	}
	notes := slices.Clone(s.layout.notes)
	if s.network != networkNone && s.network != "" {
		notes = append(notes, "network not filtered by host")
	}
	if len(notes) > 0 {
		a["notes"] = strings.Join(notes, "; ")
	}
	return a
}

func limitText(n int64) string {
	if n <= 0 {
		return "unlimited"
	}
	return strconv.FormatInt(n, 10)
}

// userOf is the container's user: the uid and gid awf runs as, so that what a script writes in
// the workspace belongs to the user who ran awf.
func userOf() string {
	return fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid())
}
