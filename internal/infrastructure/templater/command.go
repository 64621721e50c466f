package templater

import (
	"errors"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/awf-dev/awf/internal/domain/fault"
)

// VarPrefix starts the name of every shell variable a command template binds: AWF_T1, AWF_T2
// and so on, numbered in the order of the placeholders. Templates may not use these names.
const VarPrefix = "AWF_T"

// commandTemplate is a compiled command template. It is immutable once compiled.
type commandTemplate struct {
	pieces []cmdPiece
	holes  []*hole
	// script is the bound shell source when no placeholder is raw(): it never changes.
	script string
	hasRaw bool
}

// cmdPiece is literal shell text, the placeholder text of a bound variable, or the place of
// a raw() value (raw >= 0: its index among the raw values).
type cmdPiece struct {
	text  string
	start int // byte offset in the template
	bound bool
	raw   int
}

// hole is one placeholder of a command template.
type hole struct {
	prog    *program
	name    string // the variable; "" for raw()
	start   int    // byte offset of "{{" in the template
	comment bool   // inside a shell comment: the shell never reads it
	// optionLike is true when the value starts an argument of a command with no "--"
	// before it: a value beginning with "-" would be read as an option. command names
	// the program.
	optionLike bool
	command    string
}

// compileCommand turns a command template into shell source in which every placeholder is a
// quoted reference to its own variable, then parses and checks that source.
func (t *Templater) compileCommand(tmpl string) (*commandTemplate, error) {
	segs, err := split(tmpl)
	if err != nil {
		return nil, err
	}
	ct := &commandTemplate{}
	lx := newShellLexer()
	for _, seg := range segs {
		if !seg.isExpr {
			lx.feed(seg.lit)
			ct.pieces = append(ct.pieces, cmdPiece{text: seg.lit, start: seg.start, raw: -1})
			continue
		}
		if err := t.addHole(ct, lx, seg); err != nil {
			return nil, err
		}
	}
	if ct.hasRaw {
		return ct, nil // parsed and checked at each binding, once the raw text is known
	}
	ct.script = ct.splice(nil)
	places, err := ct.verify(ct.script, nil)
	if err != nil {
		return nil, err
	}
	for _, h := range ct.holes {
		h.command, h.optionLike = places[h.name].command, places[h.name].optionLike
	}
	return ct, nil
}

func (t *Templater) addHole(ct *commandTemplate, lx *shellLexer, seg segment) error {
	prog, err := t.compiled(seg.expr)
	if err != nil {
		return shift(err, seg.start+2)
	}
	h := &hole{prog: prog, start: seg.start}
	switch {
	case prog.wholeRaw():
		lx.rawHole()
		ct.pieces = append(ct.pieces, cmdPiece{start: seg.start, raw: ct.raws()})
		ct.hasRaw = true
	case len(prog.raws) > 0:
		return &SyntaxError{Offset: seg.start + 2 + prog.raws[0].offset,
			Msg: "raw() must be the whole expression of its {{ }} in a command: {{ raw(x) }}"}
	default:
		q, err := lx.hole()
		if err != nil {
			return &SyntaxError{Offset: seg.start, Msg: err.Error()}
		}
		h.name = VarPrefix + strconv.Itoa(len(ct.holes)-ct.raws()+1)
		h.comment = q == inComment
		ct.pieces = append(ct.pieces, cmdPiece{text: q.placeholder(h.name), start: seg.start, bound: true, raw: -1})
	}
	ct.holes = append(ct.holes, h)
	return nil
}

// raws counts the raw() placeholders so far.
func (ct *commandTemplate) raws() int {
	n := 0
	for _, p := range ct.pieces {
		if p.raw >= 0 {
			n++
		}
	}
	return n
}

// splice writes the script with the raw values in place.
func (ct *commandTemplate) splice(raws []string) string {
	var b strings.Builder
	for _, p := range ct.pieces {
		if p.raw >= 0 {
			b.WriteString(raws[p.raw])
			continue
		}
		b.WriteString(p.text)
	}
	return b.String()
}

// parseError maps a shell parse error in the bound script back to the template.
func (ct *commandTemplate) parseError(err error, raws []string) error {
	var pe syntax.ParseError
	if !errors.As(err, &pe) {
		return &SyntaxError{Msg: "command does not parse as shell: " + err.Error()}
	}
	return &SyntaxError{Offset: ct.templateOffset(int(pe.Pos.Offset()), raws), Msg: "command does not parse as shell: " + pe.Text}
}

// templateOffset converts an offset in the bound script to an offset in the template.
func (ct *commandTemplate) templateOffset(off int, raws []string) int {
	pos, end := 0, 0
	for _, p := range ct.pieces {
		text := p.text
		if p.raw >= 0 && p.raw < len(raws) {
			text = raws[p.raw]
		}
		if off < pos+len(text) {
			if p.bound || p.raw >= 0 {
				return p.start
			}
			return p.start + off - pos
		}
		pos += len(text)
		end = p.start + len(text)
	}
	return end
}

// errNUL is returned for a value holding a NUL byte: no shell variable can hold one.
func errNUL(src string) error {
	return fault.New(fault.Execution, "%s: the value contains a NUL byte, which a shell variable cannot hold", trimSpace(src))
}
