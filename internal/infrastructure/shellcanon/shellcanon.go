// Package shellcanon gives the canonical form of a shell script for approval: every simple
// command the script would run, wherever it sits (lists, pipelines, $(...), backticks, <(...),
// function bodies, `sh -c` scripts, commands run by wrappers such as env, xargs, timeout or
// find -exec), each with its argument vector and its normalised source. It parses with
// mvdan.cc/sh and decides nothing: approval rules and the sandbox policy do. What parsing
// cannot see (a command name from a variable, eval, source, trap, ${x@P}) makes the form
// opaque.
package shellcanon

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/infrastructure/shellsyntax"
)

// maxNesting bounds how deep `sh -c` scripts and wrappers are followed.
const maxNesting = 8

// Canonical returns the canonical form of a call whose shell script is args[key] (the shell
// tool's "command"): one action per simple command, each holding "command" (its source,
// normalised by the printer, with assignments and redirections), "argv" (its words, literal
// where they are static, else their source text) and the call's other arguments unchanged. A
// missing or non-string script is an error; a script that does not parse gives an opaque form.
func Canonical(args map[string]any, key string) (tool.Canonical, error) {
	script, ok := args[key].(string)
	if !ok {
		return tool.Canonical{}, fmt.Errorf("argument %q: want the script as a string", key)
	}
	c := Parse(script)
	for _, a := range c.Actions {
		for k, v := range args {
			if k != key {
				a[k] = v
			}
		}
	}
	return c, nil
}

// Parse returns the canonical form of script: one action per simple command, each with
// "command" and "argv". A script that does not parse is opaque, with no actions.
func Parse(script string) tool.Canonical {
	w := &walker{}
	w.script(script, 0)
	c := tool.Canonical{Actions: w.actions}
	if len(w.opaque) > 0 {
		c.Opaque = strings.Join(w.opaque, "; ")
	}
	if c.Actions == nil {
		c.Actions = []map[string]any{}
	}
	return c
}

type walker struct {
	actions []map[string]any
	opaque  []string
}

func (w *walker) hide(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if !slices.Contains(w.opaque, msg) {
		w.opaque = append(w.opaque, msg)
	}
}

func (w *walker) script(src string, depth int) {
	if depth > maxNesting {
		w.hide("nested too deeply")
		return
	}
	f, err := shellsyntax.Parse(src, "")
	if err != nil {
		w.hide("does not parse: %v", err)
		return
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			w.stmt(n, depth)
		case *syntax.ParamExp:
			if n.Exp != nil && n.Exp.Op == syntax.OtherParamOps {
				w.hide("${...@...} expansions can run hidden commands")
			}
		}
		return true
	})
}

// stmt records a statement that is a simple command or a declaration (export, local, ...).
func (w *walker) stmt(s *syntax.Stmt, depth int) {
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		argv, static := words(c.Args)
		w.add(printed(s), argv)
		if len(c.Args) > 0 {
			w.command(argv, static, depth)
		}
	case *syntax.DeclClause:
		argv := []string{c.Variant.Value}
		for _, a := range c.Args {
			argv = append(argv, printed(a))
		}
		w.add(printed(s), argv)
	}
}

func (w *walker) add(command string, argv []string) {
	list := make([]any, len(argv))
	for i, a := range argv {
		list[i] = a
	}
	w.actions = append(w.actions, map[string]any{"command": command, "argv": list})
}

// command looks inside what a simple command runs: scripts given to a shell, commands given to
// wrappers, and builtins that run code parsing cannot see.
func (w *walker) command(argv []string, static []bool, depth int) {
	if !static[0] {
		w.hide("command name %s comes from an expansion", argv[0])
		return
	}
	name := baseName(argv[0])
	switch {
	case codeRunners[name]:
		w.hide("%s runs code that is not visible before the command runs", name)
	case shells[name]:
		w.shellScript(argv, static, depth)
	case name == "env" && slices.ContainsFunc(argv[1:], splitsString):
		w.hide("env -S runs a command line that is split at run time")
	default:
		if lo, hi, ok := wrapped(name, argv); ok && lo < hi {
			w.inner(argv[lo:hi], static[lo:hi], depth)
		}
	}
}

// inner records a command run by a wrapper as an action of its own, and looks inside it.
func (w *walker) inner(argv []string, static []bool, depth int) {
	if depth >= maxNesting {
		w.hide("nested too deeply")
		return
	}
	quoted := make([]string, len(argv))
	for i, a := range argv {
		quoted[i] = quote(a, static[i])
	}
	w.add(strings.Join(quoted, " "), argv)
	w.command(argv, static, depth+1)
}

// shellScript parses the script of `sh -c SCRIPT` (and bash, dash, ...). A script read from
// standard input or a file cannot be seen.
func (w *walker) shellScript(argv []string, static []bool, depth int) {
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if a == "-c" || (strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.Contains(a, "c")) {
			if i+1 >= len(argv) || !static[i+1] {
				w.hide("%s -c runs a script that comes from an expansion", argv[0])
				return
			}
			w.script(argv[i+1], depth+1)
			return
		}
		if !strings.HasPrefix(a, "-") {
			break
		}
	}
	w.hide("%s runs a script that is not visible on the command line", argv[0])
}

// words returns each word's literal value where it is static, else its source text.
func words(ws []*syntax.Word) ([]string, []bool) {
	argv := make([]string, len(ws))
	static := make([]bool, len(ws))
	for i, wd := range ws {
		if v, ok := literal(wd); ok {
			argv[i], static[i] = v, true
			continue
		}
		argv[i] = printed(wd)
	}
	return argv, static
}

// literal returns a word's value when it is the same whatever the environment and the file
// system: literal text and quotes around literal text, with the shell's backslash escapes
// removed as mvdan.cc/sh/v3/expand removes them. Unquoted globs, braces ({rm,-rf,/} runs rm)
// and a leading tilde make a word dynamic.
func literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for i, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[{") || (i == 0 && strings.HasPrefix(p.Value, "~")) {
				return "", false
			}
			b.WriteString(unescapeUnquoted(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false // $'...' has escapes of its own
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false
			}
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescapeQuoted(lit.Value))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescapeUnquoted removes the backslash before any character; a trailing one stays.
func unescapeUnquoted(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '\\')
		if i < 0 || i == len(s)-1 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		_, size := utf8.DecodeRuneInString(s[i+1:])
		b.WriteString(s[i+1 : i+1+size])
		s = s[i+1+size:]
	}
}

// unescapeQuoted removes the backslash before the characters it escapes in double quotes.
func unescapeQuoted(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\$`\"", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// printers are reusable and costly to build.
var printers = sync.Pool{New: func() any { return syntax.NewPrinter(syntax.SingleLine(true)) }}

func printed(n syntax.Node) string {
	var b strings.Builder
	p := printers.Get().(*syntax.Printer)
	err := p.Print(&b, n)
	printers.Put(p)
	if err != nil {
		return fmt.Sprintf("<%T>", n)
	}
	return strings.TrimSpace(b.String())
}

func quote(s string, static bool) string {
	if !static {
		return s
	}
	q, err := syntax.Quote(s, syntax.LangBash)
	if err != nil {
		return fmt.Sprintf("%q", s)
	}
	return q
}

func baseName(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

func splitsString(a string) bool {
	return a == "-S" || strings.HasPrefix(a, "--split-string") || (strings.HasPrefix(a, "-S") && !strings.HasPrefix(a, "--"))
}
