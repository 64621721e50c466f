package command

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/shellsyntax"
)

// MaxArgLen is the longest single program argument Linux accepts: MAX_ARG_STRLEN is 32 pages
// of 4 KiB, the terminating NUL included.
const MaxArgLen = 32*4096 - 1

// ArgVarPrefix starts the variables a wrapped tool binds its values to: AWF_A1, AWF_A2, ...
const ArgVarPrefix = "AWF_A"

// Wrapped is a seed 004 wrapped tool: a fixed program whose arguments come from the call. Its
// @command is split into words once, when the tool is built; {param} stands for a parameter's
// value: an array<string> parameter, which must be a word of its own, expands to one argument
// per element, any other parameter to its text inside its word (a word whose optional
// parameter the call leaves out is left out). A call runs the program with
// exactly those arguments: each value is one argument, verbatim, never parsed by a shell (the
// script the process runner receives is `exec` followed by quoted literals and quoted
// references to bound variables, and exec never runs a shell builtin). Safe for concurrent
// use.
type Wrapped struct {
	spec   tool.WrapSpec
	words  [][]segment
	params map[string]tool.Param
	schema json.RawMessage
	cfg    Config
}

// segment is literal text, or (param != "") the place of a parameter's value.
type segment struct {
	lit   string
	param string
}

var (
	_ tool.Tool       = (*Wrapped)(nil)
	_ tool.Summarizer = (*Wrapped)(nil)
	_ tool.Annotated  = (*Wrapped)(nil)
	_ tool.Located    = (*Wrapped)(nil)
	_ tool.Narrowable = (*Wrapped)(nil)
)

// Narrow returns the wrapped tool under its policy narrowed by r too.
func (w *Wrapped) Narrow(r *workflow.Restrictions) (tool.Tool, error) {
	n := *w
	n.cfg.Restrictions = n.cfg.Restrictions.And(r)
	return &n, nil
}

// NewWrapped builds a wrapped tool. Config.Process is required; Templater is not used. A
// @command that is not one simple command of literal words and {param} placeholders is a
// fault.Invalid error.
func NewWrapped(spec tool.WrapSpec, cfg Config) (*Wrapped, error) {
	if cfg.Process == nil {
		return nil, fault.New(fault.System, "wrapped tool %q: the process runner is required", spec.Name)
	}
	if strings.TrimSpace(spec.Command) == "" {
		return nil, fault.New(fault.Invalid, "a wrapped tool needs an @command")
	}
	if err := tool.CheckParams(spec.Params); err != nil {
		return nil, fault.Wrap(fault.Invalid, err)
	}
	params := make(map[string]tool.Param, len(spec.Params))
	for _, p := range spec.Params {
		params[p.Name] = p
	}
	words, err := parseCommand(spec.Command, params)
	if err != nil {
		return nil, fault.New(fault.Invalid, "@command %q: %w", spec.Command, err)
	}
	return &Wrapped{spec: spec, words: words, params: params, schema: tool.ObjectSchema(spec.Params), cfg: cfg}, nil
}

var placeholder = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_-]*)\}`) })

// parseCommand splits a command template into words of literal text and placeholders.
func parseCommand(cmd string, params map[string]tool.Param) ([][]segment, error) {
	f, err := shellsyntax.Parse(cmd, "")
	if err != nil {
		return nil, fmt.Errorf("does not parse: %v", err)
	}
	if len(f.Stmts) != 1 {
		return nil, fmt.Errorf("must be one simple command (no ;, && or newlines)")
	}
	st := f.Stmts[0]
	call, ok := st.Cmd.(*syntax.CallExpr)
	switch {
	case st.Negated || st.Background || st.Coprocess || len(st.Redirs) > 0:
		return nil, fmt.Errorf("must be a plain command: no redirections, !, & or |&")
	case !ok:
		return nil, fmt.Errorf("must be one simple command (no pipes, lists, subshells or keywords)")
	case len(call.Assigns) > 0:
		return nil, fmt.Errorf("must not assign variables")
	}
	var words [][]segment
	for i, w := range call.Args {
		segs, err := parseWord(w, params)
		if err != nil {
			return nil, err
		}
		if i == 0 && slices.ContainsFunc(segs, func(s segment) bool { return s.param != "" }) {
			return nil, fmt.Errorf("must start with a program name, not a placeholder")
		}
		words = append(words, segs)
	}
	return words, nil
}

// parseWord reads one word: its literal value (quotes removed), split at placeholders.
func parseWord(w *syntax.Word, params map[string]tool.Param) ([]segment, error) {
	src := wordSource(w)
	for _, p := range w.Parts {
		switch x := p.(type) {
		case *syntax.Lit:
		case *syntax.SglQuoted:
			if x.Dollar {
				return nil, fmt.Errorf("word %s: $'...' quoting is not supported; use '...'", src)
			}
		case *syntax.DblQuoted:
			for _, in := range x.Parts {
				if _, ok := in.(*syntax.Lit); !ok || x.Dollar {
					return nil, fmt.Errorf("word %s: only literal text and {param} placeholders are allowed (no $, ` or expansions)", src)
				}
			}
		default:
			return nil, fmt.Errorf("word %s: only literal text and {param} placeholders are allowed (no $, ` or expansions)", src)
		}
	}
	lit, err := expand.Literal(nil, w)
	if err != nil {
		return nil, fmt.Errorf("word %s: %v", src, err)
	}
	var segs []segment
	last := 0
	for _, m := range placeholder().FindAllStringSubmatchIndex(lit, -1) {
		name := lit[m[2]:m[3]]
		p, ok := params[name]
		if !ok {
			return nil, fmt.Errorf("{%s} is not a declared @param%s", name, hint(name, params))
		}
		if isArray(p) && (m[0] != 0 || m[1] != len(lit)) {
			return nil, fmt.Errorf("{%s} is an array: it must be a word of its own", name)
		}
		if m[0] > last {
			segs = append(segs, segment{lit: lit[last:m[0]]})
		}
		segs = append(segs, segment{param: name})
		last = m[1]
	}
	if last < len(lit) || len(segs) == 0 {
		segs = append(segs, segment{lit: lit[last:]})
	}
	return segs, nil
}

func wordSource(w *syntax.Word) string {
	var b strings.Builder
	_ = syntax.NewPrinter().Print(&b, w)
	return strconv.Quote(b.String())
}

func hint(name string, params map[string]tool.Param) string {
	names := make([]string, 0, len(params))
	for n := range params {
		names = append(names, n)
	}
	if h := workflow.DidYouMean(name, names); h != "" {
		return " (" + h + ")"
	}
	return ""
}

func isArray(p tool.Param) bool { return p.Type == "array" || strings.HasPrefix(p.Type, "array<") }

// Name returns @name.
func (w *Wrapped) Name() string { return w.spec.Name }

// Description returns the definition's description, or its title.
func (w *Wrapped) Description(tool.Context) string {
	if w.spec.Description != "" {
		return w.spec.Description
	}
	return w.spec.Title
}

// Parameters returns the strict schema of the @param declarations.
func (w *Wrapped) Parameters() json.RawMessage { return w.schema }

// Pos is where the definition is.
func (w *Wrapped) Pos() workflow.Pos { return w.spec.Pos }

// Annotations reports the definition's source.
func (w *Wrapped) Annotations() tool.Annotations {
	return tool.Annotations{Tags: []string{"wrapped"}, Source: w.spec.Source}
}

// Meta shows the command line a call runs, shortened: "find . -name '*.go' -type f".
func (w *Wrapped) Meta(args map[string]any) string {
	argv, err := w.argv(args)
	if err != nil {
		return w.spec.Name
	}
	parts := make([]string, len(argv))
	for i, a := range argv {
		if q, err := syntax.Quote(a, syntax.LangBash); err == nil {
			a = q
		}
		parts[i] = a
	}
	s := strings.Join(parts, " ")
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// Execute runs the program with the call's arguments. The seed's errors are error results: a
// missing arguments array, arguments that are not an array, an element that is not a string;
// so are values no program argument can hold (a NUL byte, more than MaxArgLen bytes).
func (w *Wrapped) Execute(ctx context.Context, call tool.Invocation) tool.Result {
	values, err := w.values(call.Args)
	if err != nil {
		return tool.Errorf(fmt.Sprintf("%s: %v", w.spec.Name, err))
	}
	if p, v, ok := w.optionValue(values); ok {
		return tool.Refused(CheckLayer, RuleOptionInjection, fmt.Sprintf(
			"%s: the value %q of %s would be read as an option of %s: refused (nothing was run); the definition can put \"--\" before {%s}",
			w.spec.Name, v, p, w.program(), p))
	}
	script, vars := w.script(values)
	return w.cfg.Run(ctx, w.spec.Name, ports.ProcessRequest{Script: script, Vars: vars, Dir: w.cfg.Dir,
		BaseEnv: w.cfg.BaseEnv, Env: w.cfg.Env, Stdin: call.Input, Timeout: w.cfg.Timeout,
		OutputLimit: w.cfg.OutputLimit}, w.argvOf(values))
}

// values reads every parameter's value as strings: one per element of an array, one for
// anything else.
func (w *Wrapped) values(args map[string]any) (map[string][]string, error) {
	args = tool.Defaults(w.spec.Params, args)
	out := make(map[string][]string, len(w.params))
	for _, p := range w.spec.Params {
		v, ok := args[p.Name]
		if !ok || v == nil {
			if p.Required {
				return nil, missing(p)
			}
			continue
		}
		var vals []string
		if isArray(p) {
			list, ok := v.([]any)
			if !ok {
				return nil, fmt.Errorf("argument %q must be an array of strings, got %s", p.Name, tool.KindOf(v))
			}
			for i, e := range list {
				s, ok := e.(string)
				if !ok {
					return nil, fmt.Errorf("%s[%d] must be a string, got %s", p.Name, i, tool.KindOf(e))
				}
				vals = append(vals, s)
			}
		} else {
			vals = []string{tool.ArgText(v)}
		}
		for i, s := range vals {
			if err := checkArg(p, i, s); err != nil {
				return nil, err
			}
		}
		out[p.Name] = vals
	}
	return out, nil
}

func missing(p tool.Param) error {
	if isArray(p) {
		return fmt.Errorf("missing required argument %q: an array of strings, one per program argument", p.Name)
	}
	return fmt.Errorf("missing required argument %q", p.Name)
}

func checkArg(p tool.Param, i int, s string) error {
	name := p.Name
	if isArray(p) {
		name = fmt.Sprintf("%s[%d]", p.Name, i)
	}
	switch {
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("%s contains a NUL byte, which no program argument can hold", name)
	case len(s) > MaxArgLen:
		return fmt.Errorf("%s is %d bytes; one program argument holds at most %d bytes", name, len(s), MaxArgLen)
	}
	return nil
}

// argv is the argument vector a call would run, for Meta.
func (w *Wrapped) argv(args map[string]any) ([]string, error) {
	values, err := w.values(args)
	if err != nil {
		return nil, err
	}
	return w.argvOf(values), nil
}

// program is the @command's program.
func (w *Wrapped) program() string { return w.words[0][0].lit }

// optionValue finds a scalar parameter whose value, a word of its own before any "--" word,
// starts with "-": the program would read it as an option (find {path} given "-delete").
// Such a value is refused whatever the sandbox policy (docs/security.md, option
// injection). Array parameters are argument vectors by design and are not checked here; the
// command check sees the options they make.
func (w *Wrapped) optionValue(values map[string][]string) (param, value string, ok bool) {
	for _, word := range w.words[1:] {
		if len(word) == 1 && word[0].param == "" && word[0].lit == "--" {
			return "", "", false
		}
		if len(word) != 1 || word[0].param == "" || isArray(w.params[word[0].param]) {
			continue
		}
		if vals := values[word[0].param]; len(vals) == 1 && tool.OptionLike(vals[0]) {
			return word[0].param, vals[0], true
		}
	}
	return "", "", false
}

// argvOf is the argument vector of a call's values.
func (w *Wrapped) argvOf(values map[string][]string) []string {
	var argv []string
	for _, word := range w.words {
		if len(word) == 1 && word[0].param != "" && isArray(w.params[word[0].param]) {
			argv = append(argv, values[word[0].param]...)
			continue
		}
		if absent(word, values) {
			continue
		}
		var b strings.Builder
		for _, s := range word {
			if s.param == "" {
				b.WriteString(s.lit)
			} else {
				b.WriteString(values[s.param][0])
			}
		}
		argv = append(argv, b.String())
	}
	return argv
}

// script writes `exec` and the words: literals quoted, each value a quoted reference to a
// variable of its own.
func (w *Wrapped) script(values map[string][]string) (string, map[string]string) {
	vars := map[string]string{}
	bind := func(v string) string {
		name := ArgVarPrefix + strconv.Itoa(len(vars)+1)
		vars[name] = v
		return `"${` + name + `}"`
	}
	words := []string{"exec"}
	for _, word := range w.words {
		if len(word) == 1 && word[0].param != "" && isArray(w.params[word[0].param]) {
			for _, v := range values[word[0].param] {
				words = append(words, bind(v))
			}
			continue
		}
		if absent(word, values) {
			continue
		}
		var b strings.Builder
		for _, s := range word {
			switch {
			case s.param != "":
				b.WriteString(bind(values[s.param][0]))
			case s.lit != "":
				q, _ := syntax.Quote(s.lit, syntax.LangBash) // template text: never holds NUL
				b.WriteString(q)
			}
		}
		if b.Len() == 0 {
			b.WriteString("''")
		}
		words = append(words, b.String())
	}
	return strings.Join(words, " "), vars
}

// absent reports whether a word uses an optional parameter the call left out: the word is
// then left out too, so that `{path}` or `--name={name}` disappear rather than pass "".
func absent(word []segment, values map[string][]string) bool {
	for _, s := range word {
		if s.param != "" && len(values[s.param]) == 0 {
			if _, given := values[s.param]; !given {
				return true
			}
		}
	}
	return false
}
