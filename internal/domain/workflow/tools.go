package workflow

import (
	"slices"
	"strings"
	"time"
)

// Approval decisions and modes.
const (
	ApprovalAuto   = "auto"
	ApprovalPrompt = "prompt"
	ApprovalDeny   = "deny"
)

// ToolSpec is an entry of a workflow's tools: list: a (restricted) built-in, a custom command
// template, or a tool from a library (use:).
type ToolSpec struct {
	Name        string
	Builtin     bool
	Description string
	Command     string // custom command template; {{args.x}} binds parameter x
	// Verify is a command template, bound like Command, that tells whether a call a crash
	// cut off took effect: exit 0 yes, exit 1 no, anything else cannot tell.
	Verify       string
	Parameters   []Param
	Approval     string // auto | prompt | deny; empty means the workflow default
	Restrictions *Restrictions
	Use          string // owner/name@constraint
	MaxCalls     int
	Idempotent   bool
	ReadOnly     bool
	Cache        bool
	Timeout      time.Duration
	Pos          Pos
}

// Param is a typed parameter of a custom tool; it becomes a JSON Schema property.
type Param struct {
	Name        string
	Type        InputType
	Description string
	Required    bool
	Default     any
	Enum        []any
	Pos         Pos
}

// Restrictions narrow the workflow policy for one tool. They can only narrow it.
type Restrictions struct {
	Paths    []string
	Commands []string
	Hosts    []string
	// Exec "allowlist" makes the kernel enforce Commands for this tool's processes (see
	// Policy.Exec); "" leaves the workflow's choice.
	Exec string
}

// And returns restrictions no wider than either r or o (nil: none), for a tool restricted
// twice (a restricted shell wrapped by a .tool file that a `use:` entry restricts again). Lists
// set on both sides keep what both name: the same entry, or for paths an entry of one side
// inside a whole tree ("dir/**") of the other. The result may allow less than the exact
// intersection, never more. Exec "allowlist" on either side wins.
func (r *Restrictions) And(o *Restrictions) *Restrictions {
	switch {
	case r == nil:
		return o
	case o == nil:
		return r
	}
	exec := r.Exec
	if exec == "" || o.Exec == "allowlist" {
		exec = o.Exec
	}
	return &Restrictions{
		Paths:    andList(r.Paths, o.Paths, pathWithin),
		Commands: andList(r.Commands, o.Commands, func(a, b string) bool { return a == b }),
		Hosts:    andList(r.Hosts, o.Hosts, func(a, b string) bool { return a == b }),
		Exec:     exec,
	}
}

// andList keeps the entries of a inside an entry of b and those of b inside an entry of a;
// a nil list is no limit.
func andList(a, b []string, inside func(x, of string) bool) []string {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	out := []string{}
	keep := func(xs, of []string) {
		for _, x := range xs {
			if slices.ContainsFunc(of, func(y string) bool { return inside(x, y) }) && !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
	}
	keep(a, b)
	keep(b, a)
	return out
}

// pathWithin reports whether every path glob x matches lies inside glob of: x equals it, or
// of is a whole tree "dir/**" (dir with no metacharacter) holding x.
func pathWithin(x, of string) bool {
	if x == of {
		return true
	}
	tree, ok := strings.CutSuffix(of, "/**")
	return ok && !strings.ContainsAny(tree, "*?[{") && strings.HasPrefix(x, tree+"/")
}

// Policy is the workflow-wide sandbox policy (DESIGN section 5).
type Policy struct {
	Paths    PathPolicy
	Commands []string
	Hosts    []string
	Network  string // none | allowlist | host
	Limits   Limits
	Env      EnvPolicy
	Require  []string
	Enforce  string // best_effort | strict
	Backend  string // process | container
	Image    string
	// GitHooks lets git run hooks and core.fsmonitor in tool processes; off by default, so
	// that an allowed git cannot run programs the allowlist does not name.
	GitHooks bool
	Pos      Pos

	// Exec is "any" (the default: the command allowlist is checked on the shell line and by
	// the interpreter, L1) or "allowlist": the kernel lets every process of a tool execute
	// only the allowed programs (Landlock's execute right, noexec mounts).
	Exec string
}

// PathPolicy lists path globs by access.
type PathPolicy struct {
	Read    []string
	Write   []string
	Protect []string
}

// Limits are resource limits for tool execution.
type Limits struct {
	Timeout  time.Duration
	Output   int64 // bytes
	Memory   int64 // bytes
	PIDs     int
	FileSize int64
	CPU      float64
}

// EnvPolicy says which environment variables tools see.
type EnvPolicy struct {
	Allow  []string
	Set    map[string]string
	Secret []string
}

// ApprovalPolicy is the workflow-wide approval default and its rules.
type ApprovalPolicy struct {
	Default string
	Rules   []ApprovalRule
	Timeout time.Duration
	Pos     Pos
}

// ApprovalRule decides a call when its expr condition holds.
type ApprovalRule struct {
	Tool     string // tool name or glob; empty matches all
	When     string // bare expr over args, tool
	Decision string
	Pos      Pos
}
