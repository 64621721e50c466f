package cmdcheck

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
)

// DefaultPath is where execvp looks when PATH is unset (env -i), as glibc does.
const DefaultPath = "/bin:/usr/bin"

// Guard re-checks every command at run time: the argv the interpreter is about to execute,
// after expansion, its wrappers unwrapped, each name resolved through PATH as exec would and
// required to land in a trusted directory. Safe for concurrent use.
type Guard struct {
	list    *Allowlist
	trusted []string
	initial map[string]string
}

// NewGuard returns the guard of list for a script that starts with environment env ("K=V").
// The directories of env's PATH are trusted, except those inside untrusted (the writable
// paths): a program planted there under an allowed name is refused. A nil list allows every
// command.
func NewGuard(list *Allowlist, env []string, untrusted []string) *Guard {
	g := &Guard{list: list, initial: map[string]string{}}
	for _, kv := range env {
		if name, value, ok := strings.Cut(kv, "="); ok {
			g.initial[name] = value
		}
	}
	for _, d := range filepath.SplitList(g.initial["PATH"]) {
		if !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		if !slices.ContainsFunc(untrusted, func(u string) bool { return within(d, filepath.Clean(u)) }) {
			g.trusted = append(g.trusted, d)
		}
	}
	return g
}

func within(p, root string) bool {
	return p == root || root == "/" || strings.HasPrefix(p, root+"/")
}

// Check checks one argv run from dir; getenv sees the variables it runs with (exported: true
// when the command inherits it). The error is a *Refusal.
func (g *Guard) Check(args []string, dir string, getenv func(name string) (value string, exported bool)) error {
	if g == nil || g.list == nil || len(args) == 0 {
		return nil
	}
	z := &analyzer{list: g.list, dir: dir, guard: g, getenv: getenv}
	c := callCtx{}
	for _, name := range append(slices.Clone(commandVars), codeVars...) {
		v, exported := getenv(name)
		if initial, ok := g.initial[name]; exported && (!ok || v != initial) {
			if err := z.envVar(name, arg{v, true}, c); err != nil {
				return err
			}
		}
	}
	return z.argv(lits(args...), c)
}

// Middleware wraps the interpreter's exec handler: a refused command does not run; its
// status is 126 and stderr says which rule refused it ("awf: command "curl" refused (rule
// sandbox.commands): ..."). A nil guard or list passes every command through.
func (g *Guard) Middleware(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	if g == nil || g.list == nil {
		return next
	}
	return func(ctx context.Context, args []string) error {
		hc := interp.HandlerCtx(ctx)
		if err := g.Check(args, hc.Dir, lookup(hc.Env)); err != nil {
			fmt.Fprintf(hc.Stderr, "awf: %v\n", err)
			return interp.ExitStatus(126)
		}
		return next(ctx, args)
	}
}

func lookup(env expand.Environ) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v := env.Get(name)
		return v.String(), v.IsSet() && v.Exported
	}
}

// permit resolves name as exec would and checks it.
func (g *Guard) permit(z *analyzer, name string, transparent bool, c callCtx) error {
	byName := transparent || g.list.names[filepath.Base(name)]
	if strings.Contains(name, "/") {
		p := filepath.Clean(z.abs(name))
		switch {
		case g.list.paths[p]:
			return nil
		case byName && g.isTrusted(filepath.Dir(p)):
			return nil
		case byName:
			return refuse(name, RuleUntrusted, "%s is outside the trusted PATH directories", p)
		}
		return refuse(name, RuleAllowlist, "not in the commands allowlist")
	}
	found := lookPath(z.dir, z.pathVar(c), name)
	switch {
	case found != "" && g.list.paths[found]:
		return nil
	case !byName:
		return refuse(name, RuleAllowlist, "not in the commands allowlist")
	case found == "" || g.isTrusted(filepath.Dir(found)):
		return nil // not found: the shell reports it
	}
	return refuse(name, RuleUntrusted, "%s resolves to %s, outside the trusted PATH directories", name, found)
}

func (g *Guard) isTrusted(dir string) bool { return slices.Contains(g.trusted, filepath.Clean(dir)) }

// pathVar is the PATH the command will be looked up with.
func (z *analyzer) pathVar(c callCtx) string {
	if v, ok := c.env["PATH"]; ok {
		if v == nil {
			return DefaultPath
		}
		return *v
	}
	if c.clearEnv {
		return DefaultPath
	}
	if z.getenv != nil {
		if v, _ := z.getenv("PATH"); v != "" {
			return v
		}
	}
	return DefaultPath
}

// lookPath finds an executable file name in path, relative entries against dir.
func lookPath(dir, path, name string) string {
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		p := filepath.Join(d, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}
