package workflow

import (
	"fmt"
	"path"
	"slices"
)

// What each kind of tool can be restricted by: a restriction that cannot narrow a tool is
// reported, never accepted in silence (docs/security.md, restrictions).
var (
	fileBuiltins    = []string{"read_file", "write_file", "list_dir", "glob", "grep"}
	processBuiltins = []string{"shell", "run_command"}
)

// interpreters run whatever program their code asks for: in a commands list they allow
// every program, which the command check cannot see (it sees `python3 x.py`, not what x.py
// runs).
var interpreters = []string{"python", "python2", "python3", "perl", "ruby", "node", "nodejs", "deno", "bun",
	"php", "lua", "luajit", "tclsh", "wish", "Rscript", "julia", "pwsh", "osascript", "irb", "gdb", "expect"}

// restrictions reports the restrictions of tool t (at path) that nothing would enforce.
func (v *validator) restrictions(field string, t ToolSpec) {
	r := t.Restrictions
	if r == nil {
		return
	}
	field += ".restrictions"
	noEffect := func(kind, why string) {
		v.warnf(field+"."+kind, t.Pos, "tool %q: restrictions.%s has no effect: %s %s", t.Name, kind, t.Name, why)
	}
	switch {
	case t.Builtin && slices.Contains(fileBuiltins, t.Name):
		if r.Commands != nil {
			noEffect("commands", "runs no program")
		}
		if r.Hosts != nil {
			noEffect("hosts", "opens no connection")
		}
	case t.Builtin && t.Name == "http_request":
		if r.Paths != nil {
			noEffect("paths", "reads and writes no file")
		}
		if r.Commands != nil {
			noEffect("commands", "runs no program")
		}
	case t.Builtin && !slices.Contains(processBuiltins, t.Name):
		v.errorf(field, t.Pos, "", "tool %q: awf has no built-in %q whose restrictions it could enforce", t.Name, t.Name)
	case t.Use != "":
		v.warnf(field, t.Pos, "tool %q: restrictions apply only if %s runs processes (a command or wrapped .tool); "+
			"a manifest or MCP tool cannot be restricted, and the run refuses it", t.Name, t.Use)
	}
	v.container(field, t)
	v.interpreters(field+".commands", t.Pos, r.Commands)
}

// container reports the restrictions the container backend cannot enforce: it refuses such
// a tool when it runs.
func (v *validator) container(field string, t ToolSpec) {
	p, r := v.w.Sandbox, t.Restrictions
	runsProcesses := t.Command != "" || t.Use != "" || t.Builtin && slices.Contains(processBuiltins, t.Name)
	if p == nil || p.Backend != "container" || !runsProcesses {
		return
	}
	if r.Commands != nil {
		v.errorf(field+".commands", t.Pos, "", "tool %q: sandbox backend container cannot enforce restrictions.commands (use the process backend)", t.Name)
	}
	if len(r.Hosts) > 0 {
		v.errorf(field+".hosts", t.Pos, "", "tool %q: sandbox backend container cannot restrict a tool to hosts (use the process backend, or hosts: [] for no network)", t.Name)
	}
}

// interpreters warns about interpreters in a commands list.
func (v *validator) interpreters(field string, pos Pos, commands []string) {
	for i, c := range commands {
		name := path.Base(c)
		if slices.Contains(interpreters, name) {
			v.warnf(fmt.Sprintf("%s[%d]", field, i), pos, "%s runs any program its code asks for: the command check sees %s, not what it runs "+
				"(unless sandbox.exec: allowlist, which the kernel enforces)", name, name)
		}
	}
}
