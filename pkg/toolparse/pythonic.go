package toolparse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

const pythonTag = "<|python_tag|>"

// maxPyDepth bounds the nesting of Python literals, so hostile input cannot exhaust the stack.
const maxPyDepth = 256

// unmarkedList matches a '[' that may open a JSON array of calls or a pythonic call list.
func (s *scanner) unmarkedList(i int) (match, error) {
	k := skipSpace(s.text, i+1)
	switch {
	case k < len(s.text) && s.text[k] == '{':
		return s.unmarkedJSON(i)
	case pyCallName(s.text, i) != "":
		return s.unmarkedPython(i)
	}
	return match{}, nil
}

// pyCallName returns the name in "[name(" at i, or "" when the list does not open with a call.
func pyCallName(src string, i int) string {
	k := skipSpace(src, i+1)
	n := identLen(src[k:], true)
	if j := skipSpace(src, k+n); n == 0 || j >= len(src) || src[j] != '(' {
		return ""
	}
	return src[k : k+n]
}

// unmarkedPython matches a pythonic call list [f(a=1), g(b='x')] written without a marker.
// Like unmarked JSON it is a call only when every name is allowed, and it must parse only where
// the output starts with what looks like a call to an allowed tool.
func (s *scanner) unmarkedPython(i int) (match, error) {
	p := &pyParser{src: s.text, pos: i}
	calls, err := p.list()
	if err != nil {
		if s.strict(i) && s.looksLikePyCall(i) {
			return fail("pythonic call list", i, err)
		}
		return match{}, nil
	}
	if !s.allAllowed(calls) {
		return match{end: p.pos}, nil
	}
	return match{end: p.pos, calls: calls, call: true}, nil
}

// looksLikePyCall reports whether "[name(" at i names an allowed tool.
func (s *scanner) looksLikePyCall(i int) bool {
	name := pyCallName(s.text, i)
	return name != "" && s.allowedName(name)
}

// pythonTag matches Llama's <|python_tag|> followed by JSON calls or name.call(k=v) calls,
// several separated by ';'.
func (s *scanner) pythonTag(i int) (match, error) {
	var calls []Call
	for k := i + len(pythonTag); ; {
		end, cs, err := s.tagPayload(skipSpace(s.text, k))
		if err != nil {
			return fail(pythonTag, i, err)
		}
		calls = append(calls, cs...)
		k = skipSpace(s.text, end)
		if k >= len(s.text) || s.text[k] != ';' || !s.startsPayload(skipSpace(s.text, k+1)) {
			if err := s.checkNames(calls); err != nil {
				return fail(pythonTag, i, err)
			}
			return match{end: end, calls: calls, call: true}, nil
		}
		k++
	}
}

// startsPayload reports whether a JSON call or a Python call may start at k.
func (s *scanner) startsPayload(k int) bool {
	return k < len(s.text) && (s.text[k] == '{' || s.text[k] == '[' || identLen(s.text[k:], true) > 0)
}

// tagPayload reads what follows a Python-style marker at k: JSON calls, a pythonic list, or
// one call where "name.call(...)" means a call of tool name.
func (s *scanner) tagPayload(k int) (int, []Call, error) {
	switch {
	case k >= len(s.text):
		return 0, nil, errors.New("missing call (truncated output?)")
	case s.text[k] == '{' || (s.text[k] == '[' && startsJSONCall(s.text, k)):
		return jsonSeq(s.text, k, true)
	case s.text[k] == '[':
		p := &pyParser{src: s.text, pos: k}
		calls, err := p.list()
		return p.pos, calls, err
	}
	p := &pyParser{src: s.text, pos: k}
	c, err := p.call()
	c.Name = strings.TrimSuffix(c.Name, ".call")
	return p.pos, []Call{c}, err
}

// pyWrapped matches a pythonic call list between Llama 4's <|python_start|>/<|python_end|> or
// LFM2's <|tool_call_start|>/<|tool_call_end|>; the brackets are optional there.
func (s *scanner) pyWrapped(i int, open, closing string) (match, error) {
	end, calls, err := s.wrappedPayload(skipSpace(s.text, i+len(open)))
	if err == nil {
		end, err = s.closeWrap(end, closing, true)
	}
	if err == nil {
		err = s.checkNames(calls)
	}
	if err != nil {
		return fail(open, i, err)
	}
	return match{end: end, calls: calls, call: true}, nil
}

// wrappedPayload reads the calls inside a pythonic wrapper: bare calls, a list or JSON.
func (s *scanner) wrappedPayload(k int) (int, []Call, error) {
	if identLen(s.text[k:], true) > 0 {
		return s.bareCalls(k)
	}
	return s.tagPayload(k)
}

// bareCalls reads "f(a=1), g(b=2)" at k.
func (s *scanner) bareCalls(k int) (int, []Call, error) {
	p := &pyParser{src: s.text, pos: k}
	var calls []Call
	for {
		c, err := p.call()
		if err != nil {
			return 0, nil, err
		}
		calls = append(calls, c)
		end := p.pos
		if p.space(); !p.eat(',') {
			return end, calls, nil
		}
		p.space()
	}
}

// pyParser reads Python call syntax with literal keyword arguments and writes them as JSON.
type pyParser struct {
	src   string
	pos   int
	depth int
}

func (p *pyParser) space() {
	p.pos = skipSpace(p.src, p.pos)
}

func (p *pyParser) eat(c byte) bool {
	if p.pos < len(p.src) && p.src[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

func (p *pyParser) errorf(format string, args ...any) error {
	if p.pos >= len(p.src) {
		return fmt.Errorf(format+" at the end of the output (truncated?)", args...)
	}
	return fmt.Errorf(format+" at offset %d", append(args, p.pos)...)
}

// list reads "[call, call, ...]"; a trailing comma is valid Python.
func (p *pyParser) list() ([]Call, error) {
	p.pos++ // '['
	var calls []Call
	for p.space(); !p.eat(']'); p.space() {
		c, err := p.call()
		if err != nil {
			return nil, err
		}
		calls = append(calls, c)
		if p.space(); p.eat(']') {
			break
		}
		if !p.eat(',') {
			return nil, p.errorf("expected , or ] after a call")
		}
	}
	if len(calls) == 0 {
		return nil, errors.New("empty call list")
	}
	return calls, nil
}

// call reads "name(k=v, ...)".
func (p *pyParser) call() (Call, error) {
	n := identLen(p.src[p.pos:], true)
	if n == 0 {
		return Call{}, p.errorf("expected a function name")
	}
	c := Call{Name: p.src[p.pos : p.pos+n]}
	p.pos += n
	if p.space(); !p.eat('(') {
		return Call{}, p.errorf("expected ( after %s", c.Name)
	}
	args, err := p.kwargs()
	if err != nil {
		return Call{}, fmt.Errorf("%s(): %w", c.Name, err)
	}
	c.Arguments = args
	return c, nil
}

// kwargs reads "k=v, ...)" into a JSON object; positional arguments have no name to map to.
func (p *pyParser) kwargs() (json.RawMessage, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	seen := map[string]bool{}
	for p.space(); !p.eat(')'); p.space() {
		n := identLen(p.src[p.pos:], false)
		key := p.src[p.pos : p.pos+n]
		p.pos += n
		if p.space(); n == 0 || !p.eat('=') || (p.pos < len(p.src) && p.src[p.pos] == '=') {
			return nil, p.errorf("positional argument or expression (only keyword arguments are allowed)")
		}
		if seen[key] {
			return nil, fmt.Errorf("duplicate argument %q", key)
		}
		if seen[key] = true; len(seen) > 1 {
			b.WriteByte(',')
		}
		b.Write(jsonString(key))
		b.WriteByte(':')
		p.space()
		if err := p.value(&b); err != nil {
			return nil, fmt.Errorf("argument %q: %w", key, err)
		}
		if p.space(); p.eat(')') {
			break
		}
		if !p.eat(',') {
			return nil, p.errorf("expected , or )")
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// value reads one Python literal and writes it as JSON.
func (p *pyParser) value(b *bytes.Buffer) error {
	if p.depth++; p.depth > maxPyDepth {
		return errors.New("literal nested too deeply")
	}
	defer func() { p.depth-- }()
	if p.pos >= len(p.src) {
		return p.errorf("expected a value")
	}
	switch c := p.src[p.pos]; {
	case c == '\'' || c == '"':
		str, err := p.str()
		b.Write(jsonString(str))
		return err
	case c == '[':
		return p.seq(b)
	case c == '{':
		return p.dict(b)
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		return p.number(b)
	}
	return p.word(b)
}

// word reads True, False or None; any other name is an expression, not a literal.
func (p *pyParser) word(b *bytes.Buffer) error {
	n := identLen(p.src[p.pos:], false)
	lit, ok := map[string]string{"True": "true", "False": "false", "None": "null"}[p.src[p.pos:p.pos+n]]
	if !ok {
		return p.errorf("expected a Python literal")
	}
	p.pos += n
	b.WriteString(lit)
	return nil
}

// seq reads a list "[v, ...]" into a JSON array.
func (p *pyParser) seq(b *bytes.Buffer) error {
	p.pos++ // '['
	b.WriteByte('[')
	for p.space(); !p.eat(']'); p.space() {
		if b.Bytes()[b.Len()-1] != '[' {
			b.WriteByte(',')
		}
		if err := p.value(b); err != nil {
			return err
		}
		if p.space(); p.eat(']') {
			break
		}
		if !p.eat(',') {
			return p.errorf("expected , or ] in a list")
		}
	}
	b.WriteByte(']')
	return nil
}

// dict reads a dict "{'k': v, ...}" with string keys into a JSON object.
func (p *pyParser) dict(b *bytes.Buffer) error {
	p.pos++ // '{'
	b.WriteByte('{')
	seen := map[string]bool{}
	for p.space(); !p.eat('}'); p.space() {
		if p.pos >= len(p.src) || (p.src[p.pos] != '\'' && p.src[p.pos] != '"') {
			return p.errorf("expected a string key in a dict")
		}
		key, err := p.str()
		if err != nil {
			return err
		}
		if seen[key] {
			return fmt.Errorf("duplicate dict key %q", key)
		}
		if seen[key] = true; len(seen) > 1 {
			b.WriteByte(',')
		}
		b.Write(jsonString(key))
		b.WriteByte(':')
		if p.space(); !p.eat(':') {
			return p.errorf("expected : after a dict key")
		}
		p.space()
		if err := p.value(b); err != nil {
			return err
		}
		if p.space(); p.eat('}') {
			break
		}
		if !p.eat(',') {
			return p.errorf("expected , or } in a dict")
		}
	}
	b.WriteByte('}')
	return nil
}

// pyNumber matches a Python int or float literal without underscores.
var pyNumber = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([+-]?)([0-9]*)(\.[0-9]*)?([eE][+-]?[0-9]+)?`) })

// number reads an int or float literal and writes the same value as JSON number text: digits
// are kept, only the spelling changes (+1 -> 1, .5 -> 0.5, 5. -> 5.0).
func (p *pyParser) number(b *bytes.Buffer) error {
	m := pyNumber().FindStringSubmatch(p.src[p.pos:])
	sign, whole, frac, exp := m[1], m[2], m[3], m[4]
	end := p.pos + len(m[0])
	if (whole == "" && len(frac) < 2) || (end < len(p.src) && isNumberTail(p.src[end])) {
		return p.errorf("unsupported number literal")
	}
	if frac == "" && exp == "" && len(whole) > 1 && whole[0] == '0' {
		return p.errorf("leading zeros in an int literal")
	}
	whole = strings.TrimLeft(whole, "0")
	if whole == "" {
		whole = "0"
	}
	if frac == "." {
		frac = ".0"
	}
	p.pos = end
	b.WriteString(strings.TrimPrefix(sign, "+") + whole + frac + exp)
	return nil
}

// isNumberTail reports bytes that would make a number something else (1_000, 0x1f, 1j, 1.2.3).
func isNumberTail(c byte) bool {
	return c == '.' || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
}

// str reads a quoted string, with or without triple quotes, resolving Python escapes.
func (p *pyParser) str() (string, error) {
	q := p.src[p.pos : p.pos+1]
	if strings.HasPrefix(p.src[p.pos:], q+q+q) {
		q += q + q
	}
	p.pos += len(q)
	var sb strings.Builder
	for {
		switch {
		case p.pos >= len(p.src):
			return "", p.errorf("unterminated string")
		case strings.HasPrefix(p.src[p.pos:], q):
			p.pos += len(q)
			return sb.String(), nil
		case p.src[p.pos] == '\n' && len(q) == 1:
			return "", p.errorf("newline in a string")
		case p.src[p.pos] == '\\':
			if err := p.escape(&sb); err != nil {
				return "", err
			}
		default:
			sb.WriteByte(p.src[p.pos])
			p.pos++
		}
	}
}

var simpleEscapes = map[byte]string{
	'\n': "", '\\': "\\", '\'': "'", '"': "\"", 'a': "\a", 'b': "\b", 'f': "\f",
	'n': "\n", 'r': "\r", 't': "\t", 'v': "\v",
}

// escape resolves the escape sequence at p.pos. An unknown escape keeps its backslash, as in
// Python.
func (p *pyParser) escape(sb *strings.Builder) error {
	if p.pos+1 >= len(p.src) {
		p.pos++
		return p.errorf("unterminated string")
	}
	c := p.src[p.pos+1]
	if s, ok := simpleEscapes[c]; ok {
		sb.WriteString(s)
		p.pos += 2
		return nil
	}
	digits, base := map[byte]int{'x': 2, 'u': 4, 'U': 8}[c], 16
	start := p.pos + 2
	if c >= '0' && c <= '7' {
		digits, base, start = 3, 8, p.pos+1
	}
	if digits == 0 {
		sb.WriteByte('\\')
		p.pos++
		return nil
	}
	return p.codePoint(sb, start, digits, base)
}

// codePoint reads up to digits digits in base at start (exactly digits for hex escapes) and
// writes the code point they name.
func (p *pyParser) codePoint(sb *strings.Builder, start, digits, base int) error {
	end := start
	for end < len(p.src) && end-start < digits && isDigitIn(p.src[end], base) {
		end++
	}
	v, err := strconv.ParseUint(p.src[start:end], base, 32)
	if err != nil || (base == 16 && end-start != digits) || v > utf8.MaxRune {
		p.pos = start
		return p.errorf("bad escape sequence")
	}
	sb.WriteRune(rune(v))
	p.pos = end
	return nil
}

func isDigitIn(c byte, base int) bool {
	if base == 8 {
		return c >= '0' && c <= '7'
	}
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
