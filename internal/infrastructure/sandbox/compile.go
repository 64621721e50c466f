package sandbox

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// SystemRead are the directories every process may read and execute from: programs,
// libraries and /etc. Missing ones are skipped when the helper applies the rules. Secrets of
// /etc (shadow files, ssh host keys) are masked in the mount namespace and unreadable by the
// dropped uid anyway.
var SystemRead = []string{"/bin", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/sbin", "/usr"}

// Devices are the device files every process may read and write.
var Devices = []string{"/dev/full", "/dev/null", "/dev/random", "/dev/urandom", "/dev/zero"}

// DefaultProtect are the patterns, relative to the working directory, that a process can
// neither read nor write whatever the policy says: code that runs on the next git command or
// awf run (hooks, git config, awf's state and tool manifests), and secrets (.env files at any
// depth, as the file tools protect them; the hooks and config of nested repositories and
// submodules). A policy's paths.protect adds to them.
var DefaultProtect = []string{
	".git/hooks", ".git/config", ".git/config.worktree", ".git/modules/**/hooks", ".git/modules/**/config",
	"**/.git/hooks", "**/.git/config", ".awf", ".envrc", "**/.env", "**/.env.*",
}

// Defaults of the limits when a policy sets none.
const (
	DefaultPIDs   = 1024
	DefaultNoFile = 4096
)

// Context is what Compile needs besides the policy.
type Context struct {
	// Dir is the absolute working directory; relative patterns are relative to it.
	Dir string
	// Home expands a leading "~/" in patterns; empty makes such a pattern an error.
	Home string
}

// Compile builds the Spec of a tool's processes from the workflow policy p (nil: the
// defaults) narrowed by the tool's restrictions r (nil: none). Restrictions only narrow:
// their paths intersect the policy's read and write paths (system directories stay
// readable), their commands and hosts intersect the policy's lists.
//
// Path patterns become their static prefix: "src/**/*.go" allows the directory src. The OS
// layer works on directory trees; the file tools check the full pattern. Errors are
// fault.Invalid and name the policy field.
//
// With no policy, processes read and write the working directory, read the system
// directories, have no network and no command allowlist, and the protected paths are
// read-only.
func Compile(p *workflow.Policy, r *workflow.Restrictions, ctx Context) (*Spec, error) {
	if !filepath.IsAbs(ctx.Dir) {
		return nil, fault.New(fault.System, "sandbox: working directory %q is not absolute", ctx.Dir)
	}
	if p == nil {
		p = &workflow.Policy{}
	}
	if r == nil {
		r = &workflow.Restrictions{}
	}
	ctx.Dir = filepath.Clean(ctx.Dir)
	s := &Spec{Version: SpecVersion, Dir: ctx.Dir, Env: Env{Allow: p.Env.Allow, Set: p.Env.Set}}
	var err error
	if s.Read, s.Write, s.Protect, err = compilePaths(p.Paths, r.Paths, ctx); err != nil {
		return nil, err
	}
	if s.Commands, s.RestrictCommands, err = compileCommands(p.Commands, r.Commands, ctx); err != nil {
		return nil, err
	}
	if s.Network, err = compileNetwork(p.Network, p.Hosts, r.Hosts); err != nil {
		return nil, err
	}
	s.Limits = Limits{Memory: p.Limits.Memory, PIDs: p.Limits.PIDs, FileSize: p.Limits.FileSize, CPU: p.Limits.CPU, NoFile: DefaultNoFile}
	if s.Limits.PIDs == 0 {
		s.Limits.PIDs = DefaultPIDs
	}
	if p.GitHooks {
		s.Visible = []string{filepath.Join(ctx.Dir, ".git", "hooks")}
	}
	if s.ExecAllowlist, err = compileExec(p.Exec, r.Exec, s.RestrictCommands); err != nil {
		return nil, err
	}
	for _, c := range s.Commands {
		overlaps := func(w string) bool { return within(c, w) || within(w, c) }
		if s.ExecAllowlist && filepath.IsAbs(c) && slices.ContainsFunc(s.Write, overlaps) {
			return nil, fault.New(fault.Invalid, "sandbox.commands: %s is or holds a writable path: under exec: allowlist nothing a process can write may be executed", c)
		}
	}
	if s.Strict, err = compileEnforce(p.Enforce); err != nil {
		return nil, err
	}
	for _, name := range p.Require {
		l, err := ParseLayer(name)
		if err != nil {
			return nil, err
		}
		s.Require = append(s.Require, l)
	}
	return s, s.Validate()
}

func compilePaths(pp workflow.PathPolicy, narrow []string, ctx Context) (read, write, protect []string, err error) {
	prefixes := func(field string, patterns []string, def []string) ([]string, error) {
		if patterns == nil {
			return def, nil
		}
		out := []string{}
		for _, pat := range patterns {
			abs, err := absPattern(field, pat, ctx)
			if err != nil {
				return nil, err
			}
			out = append(out, staticPrefix(abs))
		}
		return out, nil
	}
	userRead, err := prefixes("sandbox.paths.read", pp.Read, []string{ctx.Dir})
	if err != nil {
		return nil, nil, nil, err
	}
	write, err = prefixes("sandbox.paths.write", pp.Write, []string{ctx.Dir})
	if err != nil {
		return nil, nil, nil, err
	}
	if narrow != nil {
		r, err := prefixes("restrictions.paths", narrow, nil)
		if err != nil {
			return nil, nil, nil, err
		}
		userRead, write = intersectPaths(userRead, r), intersectPaths(write, r)
	}
	write = minimalRoots(write)
	read = minimalRoots(append(slices.Clone(SystemRead), userRead...))
	writable := rootsOf(write)
	read = slices.DeleteFunc(read, writable.covers)
	for _, pat := range append(slices.Clone(DefaultProtect), pp.Protect...) {
		abs, err := absPattern("sandbox.paths.protect", pat, ctx)
		if err != nil {
			return nil, nil, nil, err
		}
		protect = append(protect, abs)
	}
	slices.Sort(protect)
	return read, write, slices.Compact(protect), nil
}

// absPattern makes a pattern absolute: "~/" from ctx.Home, relative ones from ctx.Dir.
func absPattern(field, pat string, ctx Context) (string, error) {
	switch {
	case pat == "":
		return "", fault.New(fault.Invalid, "%s: empty path", field)
	case strings.ContainsRune(pat, 0):
		return "", fault.New(fault.Invalid, "%s: path %q contains NUL", field, pat)
	case pat == "~" || strings.HasPrefix(pat, "~/"):
		if ctx.Home == "" {
			return "", fault.New(fault.Invalid, "%s: %q: home directory unknown", field, pat)
		}
		pat = filepath.Join(ctx.Home, strings.TrimPrefix(pat, "~"))
	case !filepath.IsAbs(pat):
		pat = filepath.Join(ctx.Dir, pat)
	}
	return filepath.Clean(pat), nil
}

// staticPrefix is the directory part of a pattern before its first component with a glob or
// template character.
func staticPrefix(abs string) string {
	parts := strings.Split(abs, "/")
	for i, part := range parts {
		if strings.ContainsAny(part, "*?[{") {
			parts = parts[:i]
			break
		}
	}
	if p := strings.Join(parts, "/"); p != "" {
		return p
	}
	return "/"
}

// within reports whether p is root or beneath it.
func within(p, root string) bool {
	return p == root || root == "/" || strings.HasPrefix(p, root+"/")
}

// rootSet is a set of roots, to tell whether a path is within one of them by looking up the
// path and each of its ancestors rather than comparing it with every root: a policy of
// thousands of paths compared each with all the others.
type rootSet map[string]bool

func rootsOf(roots []string) rootSet {
	s := rootSet{}
	for _, r := range roots {
		s[r] = true
	}
	return s
}

// covers reports whether p is within one of the roots (see within): is one, or starts with
// one followed by "/", or "/" is one.
func (s rootSet) covers(p string) bool {
	if s[p] || s["/"] {
		return true
	}
	for i := range len(p) {
		if p[i] == '/' && s[p[:i]] {
			return true
		}
	}
	return false
}

// intersectPaths returns the trees both lists allow: the deeper of each related pair.
func intersectPaths(a, b []string) []string {
	return minimalRoots(intersect(a, b, func(root, p string) bool { return within(p, root) }))
}

// intersect returns, for each pair of an item of a and an item of b of which one covers the
// other, the narrower of the two (y when they are equal), in the order of a then b.
func intersect(a, b []string, covers func(wide, narrow string) bool) []string {
	out := []string{}
	for _, x := range a {
		for _, y := range b {
			switch {
			case covers(x, y):
				out = append(out, y)
			case covers(y, x):
				out = append(out, x)
			}
		}
	}
	return out
}

// minimalRoots sorts paths and drops those beneath another.
func minimalRoots(paths []string) []string {
	paths = slices.Clone(paths)
	slices.Sort(paths)
	paths = slices.Compact(paths)
	out := paths[:0]
	kept := rootSet{}
	for _, p := range paths {
		if !kept.covers(p) {
			out = append(out, p)
			kept[p] = true
		}
	}
	return out
}

// Commands returns the command allowlist of a tool's processes: the policy's commands
// narrowed by the tool's restrictions (nil: none), relative paths made absolute from
// ctx.Dir, as Compile puts it in the Spec. restricted is false when neither sets one: any
// command may run.
func Commands(p *workflow.Policy, r *workflow.Restrictions, ctx Context) (list []string, restricted bool, err error) {
	var policy, narrow []string
	if p != nil {
		policy = p.Commands
	}
	if r != nil {
		narrow = r.Commands
	}
	return compileCommands(policy, narrow, ctx)
}

func compileCommands(policy, narrow []string, ctx Context) ([]string, bool, error) {
	norm := func(field string, list []string) ([]string, error) {
		out := []string{}
		for _, c := range list {
			switch {
			case strings.TrimSpace(c) == "" || strings.ContainsAny(c, "\x00\n"):
				return nil, fault.New(fault.Invalid, "%s: bad command name %q", field, c)
			case strings.Contains(c, "/"):
				abs, err := absPattern(field, c, ctx)
				if err != nil {
					return nil, err
				}
				out = append(out, abs)
			default:
				out = append(out, c)
			}
		}
		slices.Sort(out)
		return slices.Compact(out), nil
	}
	p, err := norm("sandbox.commands", policy)
	if err != nil {
		return nil, false, err
	}
	n, err := norm("restrictions.commands", narrow)
	if err != nil {
		return nil, false, err
	}
	switch {
	case policy != nil && narrow != nil:
		return slices.DeleteFunc(p, func(c string) bool { return !slices.Contains(n, c) }), true, nil
	case narrow != nil:
		return n, true, nil
	case policy != nil:
		return p, true, nil
	}
	return nil, false, nil
}

func compileNetwork(mode string, hosts, narrow []string) (Network, error) {
	n := Network{Mode: NetworkMode(mode), Hosts: normHosts(hosts)}
	switch n.Mode {
	case "":
		n.Mode = NetworkNone
		if len(n.Hosts) > 0 {
			n.Mode = NetworkAllowlist
		}
	case NetworkNone, NetworkAllowlist, NetworkHost:
	default:
		msg := "sandbox.network: unknown mode " + mode + " (want none, allowlist or host)"
		if hint := workflow.DidYouMean(mode, []string{"none", "allowlist", "host"}); hint != "" {
			msg += ": " + hint
		}
		return Network{}, fault.New(fault.Invalid, "%s", msg)
	}
	if narrow != nil {
		switch n.Mode {
		case NetworkHost:
			n.Mode, n.Hosts = NetworkAllowlist, normHosts(narrow)
		case NetworkAllowlist:
			n.Hosts = intersectHosts(n.Hosts, normHosts(narrow))
		}
	}
	if n.Mode == NetworkNone || (n.Mode == NetworkAllowlist && len(n.Hosts) == 0) {
		return Network{Mode: NetworkNone}, nil
	}
	if n.Mode == NetworkHost {
		n.Hosts = nil
	}
	return n, nil
}

func normHosts(hosts []string) []string {
	out := make([]string, 0, len(hosts))
	for _, h := range hosts {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			out = append(out, h)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// hostCovers reports whether pattern allows every host that h allows. Patterns are exact
// names, "*.example.com" (any subdomain) or "*".
func hostCovers(pattern, h string) bool {
	if pattern == "*" || pattern == h {
		return true
	}
	suffix, ok := strings.CutPrefix(pattern, "*")
	return ok && strings.HasPrefix(suffix, ".") && strings.HasSuffix(strings.TrimPrefix(h, "*"), suffix)
}

// intersectHosts returns the hosts both lists allow: the narrower of each related pair.
func intersectHosts(a, b []string) []string {
	out := intersect(a, b, hostCovers)
	slices.Sort(out)
	return slices.Compact(out)
}

func compileEnforce(enforce string) (bool, error) {
	switch enforce {
	case "", "best_effort":
		return false, nil
	case "strict":
		return true, nil
	}
	msg := "sandbox.enforce: unknown value " + enforce + " (want best_effort or strict)"
	if hint := workflow.DidYouMean(enforce, []string{"best_effort", "strict"}); hint != "" {
		msg += ": " + hint
	}
	return false, fault.New(fault.Invalid, "%s", msg)
}

// compileExec says whether the kernel enforces the command allowlist: the policy or the
// tool's restrictions ask for it (a restriction can only narrow: it can turn it on, not off).
func compileExec(policy, narrow string, restricted bool) (bool, error) {
	on := false
	for _, f := range []struct{ field, value string }{{"sandbox.exec", policy}, {"restrictions.exec", narrow}} {
		switch f.value {
		case "", ExecAny:
		case ExecAllowlist:
			on = true
		default:
			msg := f.field + ": unknown value " + f.value + " (want any or allowlist)"
			if hint := workflow.DidYouMean(f.value, []string{ExecAny, ExecAllowlist}); hint != "" {
				msg += ": " + hint
			}
			return false, fault.New(fault.Invalid, "%s", msg)
		}
	}
	if on && !restricted {
		return false, fault.New(fault.Invalid, "sandbox.exec: allowlist needs a command allowlist (sandbox.commands or the tool's restrictions.commands)")
	}
	return on, nil
}
