// Package cmdcheck is the command allowlist of shell tools (SECURITY-NOTES L1): it finds
// every program a shell command line would run — through `;`, `&&`, pipes, `$()`, backticks,
// `<()`, functions, nested `sh -c`, and wrappers such as env, xargs, find -exec, timeout,
// nice, git -c — and checks each against the allowlist. Check does it statically before a
// command runs; Guard does it again inside the process helper on every argv the interpreter
// is about to execute, after expansion, which catches what no parser can see ($x command
// names, eval, ${x@P}).
//
// It is policy, not containment: a program it allows can run others it never sees (make, a
// test runner, an interpreter). The OS layer (package sandbox) holds when it is bypassed.
package cmdcheck

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/infrastructure/shellsyntax"
	"mvdan.cc/sh/v3/syntax"
)

// Rule names why a command was refused; messages and audit records quote it.
type Rule string

// The rules.
const (
	RuleAllowlist   Rule = "sandbox.commands" // the program is not in the allowlist
	RuleDynamic     Rule = "dynamic-command"  // the program's name is only known at run time
	RuleEval        Rule = "eval"             // eval runs text as code
	RuleSource      Rule = "source"           // source and . run a file as code
	RuleExec        Rule = "exec"             // exec replaces the shell
	RuleAlias       Rule = "alias"            // an alias can rename any command
	RuleShellScript Rule = "shell-script"     // a shell reading a script file or stdin
	RuleOption      Rule = "wrapper-option"   // a wrapper's option hides which program runs
	RuleGitConfig   Rule = "git-config"       // git configuration that runs or loads code
	RuleReplace     Rule = "replace-in-shell" // xargs -I or find {} spliced into sh -c
	RuleAwk         Rule = "awk-command"      // awk's system(), pipes or program files
	RulePrivilege   Rule = "privilege"        // sudo and the like
	RuleNamespace   Rule = "namespace"        // tools that enter or make namespaces
	RuleEnv         Rule = "env-var"          // variables that load or run code
	RuleUntrusted   Rule = "untrusted-path"   // a name found outside the trusted PATH
	RuleParse       Rule = "parse"            // the command line does not parse
	RuleDepth       Rule = "depth"            // nesting too deep to follow
	RulePrompt      Rule = "prompt-expansion" // ${x@P} runs hidden command substitutions
	RuleBuiltinCode Rule = "builtin-code"     // mapfile -C, enable -f, hash -p
	RuleRunsOthers  Rule = "runs-programs"    // an option through which a program runs others
)

// Refusal is a command the allowlist refuses. It is fault.Denied.
type Refusal struct {
	Program string
	Rule    Rule
	Detail  string
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("command %q refused (rule %s): %s", r.Program, r.Rule, r.Detail)
}

// FaultKind classifies a refusal as fault.Denied.
func (r *Refusal) FaultKind() fault.Kind { return fault.Denied }

func refuse(program string, rule Rule, format string, args ...any) *Refusal {
	return &Refusal{Program: program, Rule: rule, Detail: fmt.Sprintf(format, args...)}
}

// Allowlist is the set of programs a tool may run: bare names (found in a trusted PATH
// directory) and absolute paths. Safe for concurrent use; the zero value allows nothing.
type Allowlist struct {
	names map[string]bool
	paths map[string]bool
}

// New returns the allowlist of entries: names such as "git", or absolute paths (sandbox
// Compile makes relative ones absolute).
func New(entries []string) *Allowlist {
	a := &Allowlist{names: map[string]bool{}, paths: map[string]bool{}}
	for _, e := range entries {
		if strings.Contains(e, "/") {
			a.paths[filepath.Clean(e)] = true
		} else {
			a.names[e] = true
		}
	}
	return a
}

// allows reports whether the allowlist names program: its path, or its base name (whose
// resolution Guard checks at run time).
func (a *Allowlist) allows(program string) bool {
	if a == nil {
		return false
	}
	if strings.Contains(program, "/") {
		return a.paths[filepath.Clean(program)] || a.names[filepath.Base(program)]
	}
	return a.names[program]
}

// Program is one program a command line would run.
type Program struct {
	// Name as written (or expanded, at run time); "" when only known at run time.
	Name string
	// Args are the literal arguments; an argument known only at run time is "$?".
	Args []string
	// Via lists the wrappers it runs under, outermost first ("env", "sh -c", "find -exec").
	Via []string
}

// Check parses a bash command line and checks every program it would run against the
// allowlist; dir makes relative program paths absolute. A nil allowlist allows any program
// but still refuses nothing: use Programs to list them. The error is a *Refusal.
func (a *Allowlist) Check(script, dir string) error {
	if a == nil {
		return nil
	}
	z := &analyzer{list: a, dir: dir}
	return z.script(script, 0)
}

// CheckBound is Check for a script whose variables vars are set before it starts (a command
// template's bound values): a reference to one of them is checked as the value it holds, so
// that a value given as an argument (rg "${AWF_T1}" given "--pre=sh") is checked as written.
// The templater refuses templates that use the names of these variables, so the script
// cannot change them before they are read.
func (a *Allowlist) CheckBound(script, dir string, vars map[string]string) error {
	if a == nil {
		return nil
	}
	z := &analyzer{list: a, dir: dir, vars: vars}
	return z.script(script, 0)
}

// CheckArgv checks one argument vector that runs as given, without a shell (a wrapped
// tool's): its program, and what that program runs in turn. The error is a *Refusal.
func (a *Allowlist) CheckArgv(argv []string, dir string) error {
	if a == nil {
		return nil
	}
	z := &analyzer{list: a, dir: dir}
	return z.argv(lits(argv...), callCtx{})
}

// Programs lists the programs a command line would run, as far as they can be known before
// it runs. It fails only when the line does not parse.
func Programs(script string) ([]Program, error) {
	z := &analyzer{}
	if err := z.script(script, 0); err != nil {
		return nil, err
	}
	return z.progs, nil
}

// maxDepth bounds nested shells (sh -c 'sh -c ...').
const maxDepth = 16

// analyzer walks command lines. Statically, list may be nil (collect only); at run time
// (Guard), resolve checks where a name leads.
type analyzer struct {
	list  *Allowlist
	dir   string
	funcs map[string]bool
	progs []Program
	// guard is set at run time: names resolve through PATH and must land in a trusted
	// directory.
	guard *Guard
	// getenv reads the environment of the command at run time.
	getenv func(string) (string, bool)
	// viaPrefix is the chain of wrappers of the script being walked (sh -c, git -c ...).
	viaPrefix []string
	// vars are the variables bound before the script starts (CheckBound), by name.
	vars map[string]string
}

// arg is one word: its value when known before run time.
type arg struct {
	s  string
	ok bool
}

func (x arg) String() string {
	if !x.ok {
		return "$?"
	}
	return x.s
}

func lits(ss ...string) []arg {
	out := make([]arg, len(ss))
	for i, s := range ss {
		out[i] = arg{s, true}
	}
	return out
}

// callCtx is where an argv is run from.
type callCtx struct {
	via   []string
	depth int
	// shell says the argv is a simple command of a shell script: functions and builtins
	// apply. Through a wrapper, only programs do.
	shell bool
	// env holds variables a wrapper changed (env NAME=V, env -i); nil value: unset.
	env      map[string]*string
	clearEnv bool
}

func (c callCtx) through(wrapper string) callCtx {
	c.via = append(slices.Clone(c.via), wrapper)
	c.shell = false
	return c
}

// script parses src as bash and checks every command in it.
func (z *analyzer) script(src string, depth int) error {
	if depth > maxDepth {
		return refuse("sh", RuleDepth, "shells nested more than %d deep", maxDepth)
	}
	f, err := shellsyntax.Parse(src, "")
	if err != nil {
		if z.list == nil {
			return fmt.Errorf("parse command: %w", err)
		}
		return refuse("sh", RuleParse, "%v", err)
	}
	return z.file(f, depth)
}

func (z *analyzer) file(f *syntax.File, depth int) error {
	saved := z.funcs
	z.funcs = map[string]bool{}
	defer func() { z.funcs = saved }()
	// One walk collects the functions (a call may precede its definition) and the nodes to
	// check, in source order.
	var nodes []syntax.Node
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.FuncDecl:
			if n.Name != nil { // nil for an anonymous function: "() cmd"
				z.funcs[n.Name.Value] = true
			}
		case *syntax.CallExpr, *syntax.DeclClause, *syntax.ParamExp:
			nodes = append(nodes, n)
		}
		return true
	})
	for _, n := range nodes {
		if err := z.node(n, depth); err != nil {
			return err
		}
	}
	return nil
}

func (z *analyzer) node(n syntax.Node, depth int) error {
	switch n := n.(type) {
	case *syntax.CallExpr:
		return z.call(n, depth)
	case *syntax.DeclClause:
		for _, as := range n.Args {
			if err := z.assign(as, depth); err != nil {
				return err
			}
		}
	case *syntax.ParamExp:
		if z.list != nil && n.Exp != nil && n.Exp.Op == syntax.OtherParamOps && n.Exp.Word != nil && strings.Contains(n.Exp.Word.Lit(), "P") {
			return refuse("${"+paramName(n)+"@P}", RulePrompt, "prompt expansion runs command substitutions hidden in the variable's value")
		}
	}
	return nil
}

func paramName(p *syntax.ParamExp) string {
	if p.Param != nil {
		return p.Param.Value
	}
	return "?"
}

func (z *analyzer) call(cx *syntax.CallExpr, depth int) error {
	for _, as := range cx.Assigns {
		if err := z.assign(as, depth); err != nil {
			return err
		}
	}
	if len(cx.Args) == 0 {
		return nil
	}
	args := make([]arg, len(cx.Args))
	for i, w := range cx.Args {
		args[i].s, args[i].ok = z.literal(w)
	}
	return z.argv(args, callCtx{depth: depth, shell: true, via: z.viaPrefix})
}

// assign checks NAME=VALUE in front of a command or in export/declare/local.
func (z *analyzer) assign(as *syntax.Assign, depth int) error {
	if as.Name == nil || z.list == nil {
		return nil
	}
	value := arg{ok: true}
	if as.Value != nil {
		value.s, value.ok = z.literal(as.Value)
	}
	return z.envVar(as.Name.Value, value, callCtx{depth: depth, via: z.viaPrefix})
}

// argv checks one command: its name, then what it runs in turn.
func (z *analyzer) argv(args []arg, c callCtx) error {
	if len(args) == 0 {
		return nil
	}
	if c.depth > maxDepth {
		return refuse(args[0].String(), RuleDepth, "commands nested more than %d deep", maxDepth)
	}
	if !args[0].ok {
		z.record(args, c)
		if z.list != nil {
			return refuse("$?", RuleDynamic, "the command name is only known at run time")
		}
		return nil
	}
	name := args[0].s
	if c.shell {
		if z.funcs[name] {
			return nil // its body is checked where it is defined
		}
		if handled, err := z.builtin(args, c); handled {
			return err
		}
	}
	z.record(args, c)
	h, known := lookupProgram(programKey(name))
	if err := z.permit(name, known && h.transparent, c); err != nil {
		return err
	}
	if known {
		return h.check(z, args, c)
	}
	return nil
}

func (z *analyzer) record(args []arg, c callCtx) {
	if z.list != nil {
		return // checking, not listing
	}
	p := Program{Via: c.via}
	if args[0].ok {
		p.Name = args[0].s
	}
	for _, a := range args[1:] {
		p.Args = append(p.Args, a.String())
	}
	z.progs = append(z.progs, p)
}

// permit checks the allowlist for name. Transparent wrappers (env, timeout...) need no entry
// of their own; at run time every name must still resolve to a trusted directory.
func (z *analyzer) permit(name string, transparent bool, c callCtx) error {
	if z.list == nil {
		return nil
	}
	if z.guard != nil {
		return z.guard.permit(z, name, transparent, c)
	}
	if transparent || z.list.allows(z.abs(name)) {
		return nil
	}
	return refuse(name, RuleAllowlist, "not in the commands allowlist")
}

func (z *analyzer) abs(name string) string {
	if strings.Contains(name, "/") && !filepath.IsAbs(name) && z.dir != "" {
		return filepath.Join(z.dir, name)
	}
	return name
}

// builtin handles the shell builtins that run code. It reports whether name is a builtin.
func (z *analyzer) builtin(args []arg, c callCtx) (bool, error) {
	name := args[0].s
	strict := z.list != nil
	switch name {
	case "eval":
		if strict {
			return true, refuse(name, RuleEval, "eval runs text as code, which cannot be checked before it runs")
		}
		return true, nil
	case "source", ".":
		if strict {
			return true, refuse(name, RuleSource, "%s runs a file as code, which cannot be checked before it runs", name)
		}
		return true, nil
	case "exec":
		if strict && len(args) > 1 {
			return true, refuse(name, RuleExec, "exec replaces the shell with another program")
		}
		return true, nil
	case "alias":
		for _, a := range args[1:] {
			if strict && (!a.ok || strings.Contains(a.s, "=")) {
				return true, refuse(name, RuleAlias, "an alias can make any name run any command")
			}
		}
		return true, nil
	case "mapfile", "readarray", "enable", "hash":
		// mapfile -C runs a callback, enable -f loads a builtin from a shared object, hash -p
		// makes a name run any file.
		if strict && slices.ContainsFunc(args[1:], func(a arg) bool { return !a.ok || codeOption(name, a.s) }) {
			return true, refuse(name, RuleBuiltinCode, "%s with this option runs or loads code that cannot be checked", name)
		}
		return true, nil
	case "unset":
		// Removing the git settings the sandbox sets turns hooks back on (sandboxGitVar).
		if strict && slices.ContainsFunc(args[1:], func(a arg) bool { return !a.ok || sandboxGitVar(a.s) }) {
			return true, refuse(name, RuleEnv, "unset of the git settings the sandbox sets (hooks and fsmonitor off), or of a name only known at run time")
		}
		return true, nil
	case "trap":
		return true, z.trap(args[1:], c)
	case "command":
		return true, z.command(args[1:], c)
	case "builtin":
		if len(args) > 1 {
			c2 := c
			if args[1].ok && !isBuiltin(args[1].s) {
				return true, nil // "builtin: not a shell builtin"
			}
			_, err := z.builtin(args[1:], c2)
			return true, err
		}
		return true, nil
	}
	return isBuiltin(name), nil
}

// codeOption reports whether a of builtin name makes it run or load code: an option
// cluster holding C (mapfile, readarray), f (enable) or p (hash).
func codeOption(name, a string) bool {
	if !strings.HasPrefix(a, "-") || a == "--" {
		return false
	}
	letter := map[string]string{"mapfile": "C", "readarray": "C", "enable": "f", "hash": "p"}[name]
	return strings.Contains(a[1:], letter)
}

// trap checks the action, which the shell runs later.
func (z *analyzer) trap(args []arg, c callCtx) error {
	if len(args) == 0 || args[0].ok && strings.HasPrefix(args[0].s, "-") {
		return nil // trap, trap -p, trap -l, trap - SIG
	}
	if len(args) == 1 {
		return nil // trap SIG: prints
	}
	if !args[0].ok {
		if z.list != nil {
			return refuse("trap", RuleDynamic, "the trap action is only known at run time")
		}
		return nil
	}
	return z.scriptVia(args[0].s, c, "trap")
}

// command runs a program or builtin, skipping functions; -v and -V only look it up.
func (z *analyzer) command(args []arg, c callCtx) error {
	for len(args) > 0 && args[0].ok && strings.HasPrefix(args[0].s, "-") && args[0].s != "-" {
		switch args[0].s {
		case "-v", "-V":
			return nil
		case "-p", "--":
		default:
			if z.list != nil {
				return refuse("command", RuleOption, "unknown option %q", args[0].s)
			}
		}
		args = args[1:]
	}
	if len(args) == 0 {
		return nil
	}
	c.via = append(slices.Clone(c.via), "command")
	if args[0].ok {
		if handled, err := z.builtin(args, c); handled {
			return err
		}
	}
	c.shell = false
	return z.argv(args, c)
}

// isBuiltin reports the builtins of the mvdan interpreter (interp.IsBuiltin), which never
// reach the exec handler.
func isBuiltin(name string) bool {
	switch name {
	case "alias", "bg", "cd", "command", "false", "fc", "fg", "getopts", "hash", "jobs", "kill",
		"newgrp", "pwd", "read", "true", "umask", "unalias", "wait", "break", ":", "continue",
		".", "eval", "exec", "exit", "export", "readonly", "return", "set", "shift", "times",
		"trap", "unset", "source", "bind", "builtin", "caller", "compgen", "complete", "compopt",
		"declare", "typeset", "dirs", "disown", "enable", "history", "help", "let", "local",
		"logout", "mapfile", "readarray", "popd", "pushd", "shopt", "suspend", "type", "ulimit",
		"echo", "printf", "test", "[":
		return true
	}
	return false
}
