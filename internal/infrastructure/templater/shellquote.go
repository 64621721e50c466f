package templater

import (
	"fmt"
	"strings"
)

// quoting is the shell quoting context at a point of a command template.
type quoting int

const (
	inBare          quoting = iota // top level, or inside $( ), ` ` or ${ }
	inDouble                       // "..."
	inSingle                       // '...'
	inDollarSingle                 // $'...'
	inCmdSubst                     // $( ... ): bare, closed by the matching )
	inBacktick                     // ` ... `: bare, closed by the next unescaped `
	inParam                        // ${ ... }: bare, closed by the matching }
	inComment                      // # ... to the end of the line
	inHeredoc                      // the body of <<EOF: expansions happen, no splitting
	inHeredocQuoted                // the body of <<'EOF': nothing is expanded
)

// placeholder returns the shell text that stands for variable name in this context: always
// one quoted expansion, so the value is one word, never split, globbed or parsed.
func (q quoting) placeholder(name string) string {
	ref := "${" + name + "}"
	switch q {
	case inDouble, inHeredoc, inComment:
		return ref
	case inSingle:
		return `'"` + ref + `"'` // close the quote, expand in double quotes, reopen
	case inDollarSingle:
		return `'"` + ref + `"$'`
	default:
		return `"` + ref + `"`
	}
}

type frame struct {
	q     quoting
	depth int // nested ( or { inside $( ) and ${ }
}

type heredoc struct {
	word   string
	quoted bool // <<'EOF' or <<"EOF" or <<\EOF: the body is literal
	strip  bool // <<-EOF: leading tabs are removed
}

// shellLexer follows the quoting of the literal text of a command template, so that each
// placeholder can be written in the form its context needs. It is a small model of bash's
// quoting (quotes, escapes, $( ), ` `, ${ }, comments, here-documents), not a parser: the
// bound script is parsed and checked afterwards (see verify), so a case the model gets wrong
// is refused, never run unquoted.
type shellLexer struct {
	stack   []frame
	prev    byte // previous character outside quotes, for word starts; '\n' at the start
	escaped bool // a backslash ended the previous literal text
	dollar  bool // an unescaped $ ended the previous literal text
	pending []heredoc
	body    *heredoc // the here-document whose body is being read
	line    strings.Builder
	holeIn  bool     // the current here-document line holds a placeholder
	delim   *heredoc // the here-document whose delimiter word is being read
	dword   []byte   // delimiter so far
	dquote  byte     // quote open inside the delimiter word
	dstart  bool     // the delimiter word has started
}

func newShellLexer() *shellLexer {
	return &shellLexer{stack: []frame{{q: inBare}}, prev: '\n'}
}

func (l *shellLexer) top() *frame    { return &l.stack[len(l.stack)-1] }
func (l *shellLexer) push(q quoting) { l.stack = append(l.stack, frame{q: q}) }
func (l *shellLexer) pop() {
	if len(l.stack) > 1 {
		l.stack = l.stack[:len(l.stack)-1]
	}
}

// feed follows a piece of literal template text.
func (l *shellLexer) feed(s string) {
	l.escaped, l.dollar = false, false
	for i := 0; i < len(s); {
		i += l.step(s, i)
	}
}

// hole returns the quoting context of a placeholder at the current point, or an error when
// no placeholder can be bound there.
func (l *shellLexer) hole() (quoting, error) {
	switch {
	case l.escaped:
		return 0, fmt.Errorf(`a backslash right before {{ }} would escape the quoting awf adds; remove it`)
	case l.dollar:
		return 0, fmt.Errorf(`a "$" right before {{ }} is ambiguous; write "\$" for a literal dollar sign`)
	case l.delim != nil:
		return 0, fmt.Errorf("a here-document delimiter cannot hold a template value")
	case l.body != nil && l.body.quoted:
		return 0, fmt.Errorf("a quoted here-document (<<'%s') is literal text: a template value cannot be bound in it; unquote the delimiter", l.body.word)
	case l.body != nil:
		l.holeIn = true
		return inHeredoc, nil
	}
	q := l.top().q
	if q == inBare || q == inCmdSubst || q == inBacktick || q == inParam {
		l.prev = 'x' // the value is part of a word
	}
	return q, nil
}

// rawHole notes spliced text: it is assumed to leave the quoting as it found it (verify
// checks the result).
func (l *shellLexer) rawHole() {
	l.escaped, l.dollar = false, false
	if l.body != nil {
		l.holeIn = true
	}
	l.prev = 'x'
}

// step follows the character s[i] and returns how many characters it consumed.
func (l *shellLexer) step(s string, i int) int {
	c := s[i]
	if l.body != nil {
		l.bodyChar(c)
		return 1
	}
	if l.delim != nil && l.delimChar(s, i) {
		return l.delimLen(s, i)
	}
	switch f := l.top(); f.q {
	case inSingle:
		if c == '\'' {
			l.pop()
		}
		return 1
	case inDollarSingle:
		if c == '\\' {
			return l.escape(s, i)
		}
		if c == '\'' {
			l.pop()
		}
		return 1
	case inComment:
		if c == '\n' {
			l.pop()
			return l.newline()
		}
		return 1
	case inDouble:
		return l.double(s, i)
	default:
		return l.bare(s, i, f)
	}
}

func (l *shellLexer) escape(s string, i int) int {
	if i+1 >= len(s) {
		l.escaped = true
		return 1
	}
	return 2
}

func (l *shellLexer) double(s string, i int) int {
	switch s[i] {
	case '\\':
		return l.escape(s, i)
	case '"':
		l.pop()
	case '`':
		l.push(inBacktick)
	case '$':
		return l.dollarSign(s, i, false)
	}
	return 1
}

func (l *shellLexer) bare(s string, i int, f *frame) int {
	c := s[i]
	defer func() { l.prev = c }()
	switch c {
	case '\\':
		return l.escape(s, i)
	case '\'':
		l.push(inSingle)
	case '"':
		l.push(inDouble)
	case '$':
		return l.dollarSign(s, i, true)
	case '`':
		if f.q == inBacktick {
			l.pop()
		} else {
			l.push(inBacktick)
		}
	case '(', '{':
		if f.q == inCmdSubst && c == '(' || f.q == inParam && c == '{' {
			f.depth++
		}
	case ')', '}':
		if f.q == inCmdSubst && c == ')' || f.q == inParam && c == '}' {
			if f.depth == 0 {
				l.pop()
			} else {
				f.depth--
			}
		}
	case '#':
		if f.q != inParam && wordStart(l.prev) {
			l.push(inComment)
		}
	case '<':
		if strings.HasPrefix(s[i:], "<<<") {
			return 3 // a here-string, not a here-document
		}
		if strings.HasPrefix(s[i:], "<<") {
			n := 2
			h := &heredoc{}
			if strings.HasPrefix(s[i+2:], "-") {
				h.strip = true
				n++
			}
			l.delim, l.dword, l.dquote, l.dstart = h, nil, 0, false
			return n
		}
	case '\n':
		return l.newline()
	}
	return 1
}

// dollarSign follows a $: the start of $( ), ${ }, or in bare context $” and $"".
func (l *shellLexer) dollarSign(s string, i int, bare bool) int {
	if i+1 >= len(s) {
		l.dollar = true
		return 1
	}
	switch s[i+1] {
	case '(':
		l.push(inCmdSubst)
	case '{':
		l.push(inParam)
	case '\'':
		if !bare {
			return 1
		}
		l.push(inDollarSingle)
	case '"':
		if !bare {
			return 1
		}
		l.push(inDouble)
	default:
		return 1
	}
	return 2
}

// newline starts the body of the first pending here-document, if any.
func (l *shellLexer) newline() int {
	if len(l.pending) > 0 {
		h := l.pending[0]
		l.pending = l.pending[1:]
		l.body = &h
		l.line.Reset()
		l.holeIn = false
	}
	return 1
}

// bodyChar follows a character of a here-document body, ending the body at its delimiter line.
func (l *shellLexer) bodyChar(c byte) {
	if c != '\n' {
		l.line.WriteByte(c)
		return
	}
	line := l.line.String()
	if l.body.strip {
		line = strings.TrimLeft(line, "\t")
	}
	l.line.Reset()
	if line == l.body.word && !l.holeIn {
		l.body, l.prev = nil, '\n'
		l.newline()
	}
	l.holeIn = false
}

// delimChar reports whether s[i] belongs to the here-document delimiter being read, and
// records it; when the word ends, the here-document becomes pending.
func (l *shellLexer) delimChar(s string, i int) bool {
	c := s[i]
	switch {
	case l.dquote != 0:
		if c == l.dquote {
			l.dquote = 0
		} else {
			l.dword = append(l.dword, c)
		}
		return true
	case !l.dstart && (c == ' ' || c == '\t'):
		return true
	case c == '\'' || c == '"':
		l.delim.quoted, l.dquote, l.dstart = true, c, true
		return true
	case c == '\\':
		l.delim.quoted, l.dstart = true, true
		if i+1 < len(s) {
			l.dword = append(l.dword, s[i+1])
		}
		return true
	case strings.IndexByte(" \t\n;&|<>()", c) >= 0:
		l.delim.word = string(l.dword)
		l.pending = append(l.pending, *l.delim)
		l.delim = nil
		return false
	}
	l.dword, l.dstart = append(l.dword, c), true
	return true
}

func (l *shellLexer) delimLen(s string, i int) int {
	if s[i] == '\\' && i+1 < len(s) {
		return 2
	}
	return 1
}

// wordStart reports whether a # after c starts a comment.
func wordStart(c byte) bool {
	return strings.IndexByte(" \t\n;&|()<>", c) >= 0
}
