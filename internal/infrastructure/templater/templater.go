package templater

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// Templater evaluates templates and expressions with expr-lang. Every compiled form (text
// template, expression, command template) is cached by its source, errors included, so a
// template is parsed once however often it is evaluated. The zero value is not usable; call
// New. Safe for concurrent use.
type Templater struct {
	texts    cache // source -> *cached[*textTemplate]
	exprs    cache // source -> *cached[*program]
	commands cache // source -> *cached[*commandTemplate]
	vms      sync.Pool
}

// cacheLimit bounds each cache. A workflow of 10,000 steps has as many templates, each
// compiled to a few KiB and most evaluated once: kept all, they made checking it cost 60 MiB.
// A loop's templates are evaluated again and again, so they come back soon after a reset.
const cacheLimit = 2048

// cache is a map of compiled forms that is emptied when it reaches cacheLimit entries.
type cache struct {
	m sync.Map
	n atomic.Int64
}

// Load returns the entry stored under src.
func (c *cache) Load(src string) (any, bool) { return c.m.Load(src) }

// loadOrStore stores v under src unless an entry is there, and returns the entry kept.
func (c *cache) loadOrStore(src string, v any) any {
	if c.n.Add(1) > cacheLimit {
		c.m.Clear()
		c.n.Store(1)
	}
	e, _ := c.m.LoadOrStore(src, v)
	return e
}

var _ ports.Templater = (*Templater)(nil)

// New returns a Templater with empty caches.
func New() *Templater {
	return &Templater{vms: sync.Pool{New: func() any { return new(vm.VM) }}}
}

type cached[T any] struct {
	v   T
	err error
}

// load returns the cached compiled form of src, compiling it on first use.
func load[T any](m *cache, src string, build func(string) (T, error)) (T, error) {
	if e, ok := m.Load(src); ok {
		c := e.(*cached[T])
		return c.v, c.err
	}
	v, err := build(src)
	c := m.loadOrStore(src, &cached[T]{v: v, err: err}).(*cached[T])
	return c.v, c.err
}

// textTemplate is a compiled text template.
type textTemplate struct {
	parts []textPart
}

type textPart struct {
	lit  string
	prog *program // nil for literal text
	seg  segment
}

func (t *Templater) compiled(src string) (*program, error) {
	return load(&t.exprs, src, compileExpr)
}

func (t *Templater) text(tmpl string) (*textTemplate, error) {
	return load(&t.texts, tmpl, t.compileText)
}

func (t *Templater) command(tmpl string) (*commandTemplate, error) {
	return load(&t.commands, tmpl, t.compileCommand)
}

func (t *Templater) compileText(tmpl string) (*textTemplate, error) {
	segs, err := split(tmpl)
	if err != nil {
		return nil, err
	}
	tt := &textTemplate{parts: make([]textPart, 0, len(segs))}
	for _, seg := range segs {
		if !seg.isExpr {
			tt.parts = append(tt.parts, textPart{lit: seg.lit, seg: seg})
			continue
		}
		prog, err := t.compiled(seg.expr)
		if err != nil {
			return nil, shift(err, seg.start+2)
		}
		tt.parts = append(tt.parts, textPart{prog: prog, seg: seg})
	}
	return tt, nil
}

// shift moves a SyntaxError of an expression to its place in the template.
func shift(err error, by int) error {
	var se *SyntaxError
	if errors.As(err, &se) {
		return &SyntaxError{Offset: se.Offset + by, Msg: se.Msg}
	}
	return err
}

// Render evaluates a text template: the text around placeholders is kept and each
// placeholder is replaced by its value as text. A reference to something missing is a
// *RefError; a nil value is an error too. Syntax errors are *SyntaxError (fault.Invalid).
func (t *Templater) Render(tmpl string, scope ports.Scope) (string, error) {
	tt, err := t.text(tmpl)
	if err != nil {
		return "", err
	}
	if len(tt.parts) == 1 && tt.parts[0].prog == nil {
		return tt.parts[0].lit, nil
	}
	var b strings.Builder
	for _, p := range tt.parts {
		if p.prog == nil {
			b.WriteString(p.lit)
			continue
		}
		s, err := t.value(p.prog, scope)
		if err != nil {
			return "", err
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// Eval evaluates a bare expression (when, stop_condition, approval rules) and returns its
// value, which may be nil. An expression written as one placeholder, "{{ x }}", is accepted
// as x. Misses are *RefError as in Render.
func (t *Templater) Eval(src string, scope ports.Scope) (any, error) {
	prog, _, err := t.bare(src)
	if err != nil {
		return nil, err
	}
	return t.run(prog, scope)
}

// EvalBool evaluates a bare expression that must yield a boolean; any other value, nil
// included, is an error of kind fault.Execution ("must be a boolean, got string"). Callers
// prefix the field: "when: must be a boolean, got string".
func (t *Templater) EvalBool(src string, scope ports.Scope) (bool, error) {
	v, err := t.Eval(src, scope)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fault.New(fault.Execution, "must be a boolean, got %s", typeName(v))
	}
	return b, nil
}

// bare compiles a bare expression, unwrapping "{{ x }}" and a leading dot. It returns the
// offset of the compiled expression in src.
func (t *Templater) bare(src string) (*program, int, error) {
	inner, off := unwrapBraces(src)
	prog, err := t.compiled(blankLeadingDot(inner))
	if err != nil {
		return nil, off, shift(err, off)
	}
	return prog, off, nil
}

// Command binds a command template: literal text is shell source, each placeholder becomes a
// quoted reference to a variable AWF_T<n> whose value is in Vars, so no value can change the
// script's syntax. {{ raw(x) }} splices x into the source instead; such a script is parsed and
// checked at every binding. A value holding a NUL byte is an error (fault.Execution).
func (t *Templater) Command(tmpl string, scope ports.Scope) (ports.BoundCommand, error) {
	ct, err := t.command(tmpl)
	if err != nil {
		return ports.BoundCommand{}, err
	}
	vars := make(map[string]string, len(ct.holes))
	var raws []string
	for _, h := range ct.holes {
		s, err := t.value(h.prog, scope)
		if err != nil {
			return ports.BoundCommand{}, err
		}
		if h.name == "" {
			raws = append(raws, s)
			continue
		}
		if strings.IndexByte(s, 0) >= 0 {
			return ports.BoundCommand{}, errNUL(h.prog.src)
		}
		vars[h.name] = s
	}
	script := ct.script
	places := map[string]placement{}
	for _, h := range ct.holes {
		places[h.name] = placement{command: h.command, optionLike: h.optionLike}
	}
	if ct.hasRaw {
		script = ct.splice(raws)
		if places, err = ct.verify(script, raws); err != nil {
			return ports.BoundCommand{}, fault.Wrap(fault.Execution, fmt.Errorf("command after raw(): %w", err))
		}
	}
	for _, h := range ct.holes {
		if p := places[h.name]; h.name != "" && p.optionLike && usesArgs(h.prog) && tool.OptionLike(vars[h.name]) {
			return ports.BoundCommand{}, fault.New(fault.Denied,
				"the value %q of {{%s}} would be read as an option of %s: refused (option injection); the template can put \"--\" before it",
				vars[h.name], h.prog.src, p.command)
		}
	}
	return ports.BoundCommand{Script: script, Vars: vars, Argv: argv(script, vars)}, nil
}

// value evaluates a placeholder and converts its value to text.
func (t *Templater) value(p *program, scope ports.Scope) (string, error) {
	v, err := t.run(p, scope)
	if err != nil {
		return "", err
	}
	s, err := text(v)
	if errors.Is(err, errNil) {
		return "", &RefError{Path: trimSpace(p.src), Reason: "the value is nil"}
	}
	if err != nil {
		return "", fault.Wrap(fault.Execution, fmt.Errorf("%s: %w", trimSpace(p.src), err))
	}
	return s, nil
}

// run executes a compiled expression against the scope.
func (t *Templater) run(p *program, scope ports.Scope) (any, error) {
	m := t.vms.Get().(*vm.VM)
	out, err := m.Run(p.prog, map[string]any(scope))
	t.vms.Put(m)
	if err == nil {
		return out, nil
	}
	var re *RefError
	if errors.As(err, &re) {
		return nil, re
	}
	msg := err.Error()
	var fe *file.Error
	if errors.As(err, &fe) {
		msg = fe.Message
	}
	return nil, fault.New(fault.Execution, "%s: %s", trimSpace(p.src), msg)
}

// typeName names a value's type in the words of the DSL.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case string:
		return "string"
	case bool:
		return "boolean"
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return "integer"
	case float32, float64:
		return "number"
	case map[string]any, map[any]any:
		return "object"
	case []any:
		return "array"
	}
	return fmt.Sprintf("%T", v)
}
