// Package shellsyntax parses shell scripts as bash for every part of awf that reads one (the
// templater, the sandbox's command check, approval's canonical form, the processes that run
// them), after refusing what would make the parser itself a denial of service: mvdan.cc/sh
// parses by recursive descent, some 9 KB of stack a level, so a 300 KB script of 100,000
// nested $( took 900 MB before it ran anything. Scripts come from workflows and, through the
// shell tool, from models.
package shellsyntax

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// MaxDepth is how deeply parentheses and braces (subshells, $( ), $(( )), ${ }, groups) may
// nest in a script: as deep as awf lets YAML nest, far beyond any script people write.
const MaxDepth = 256

// maxFrames bounds how deep the parser may recurse, in Go call frames, for what tooDeep does
// not count: compound commands (if, loops, case, function bodies, time, coproc), arithmetic
// operators and [[ ]] tests nest without brackets, and a 300 KB script of nested ifs took
// 140 MB to parse. The deepest a script MaxDepth brackets deep can go is 256 subshells at 29
// frames each; nested ifs take 6 a level, so about 2,000 of them fit, and the stack stays
// under 8 MB whatever the script.
const maxFrames = 12_000

// guardFrom is the length from which the parser's depth is watched while it reads. A script
// shorter than that cannot recurse far enough to matter (at most 29 frames a byte) and is
// handed to the parser whole, as before.
const guardFrom = 1 << 10

// guardChunk is how much a watched parse reads between two looks at its depth: small enough
// that it cannot go far past maxFrames in between (a few frames a byte without brackets),
// large enough that looking costs little (a look unwinds the stack: 5% of parsing a long
// script at this size, 15% at 256 bytes).
const guardChunk = 1 << 10

// A look costs about 0.1 us a frame of depth, so a script kept just under maxFrames for
// megabytes would cost 1.2 ms a chunk (a 5 MB one: 7 s, ten times its parse). So a parse may
// read at most maxDeepChunks chunks while deeper than shallowFrames (about 35 nested $( or
// 170 nested if, far beyond scripts people write); below that a look costs at most 0.1 ms.
const (
	shallowFrames = 1 << 10
	maxDeepChunks = 64
)

// errTooDeep stops a watched parse: the parser returns the first read error it gets.
var errTooDeep = errors.New("the parser recursed too deep")

// parsers are reused: building one costs more than parsing a short line.
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

// Parse parses src as bash, as syntax.Parser.Parse does; name is the file name its errors give.
// A script whose parentheses and braces nest deeper than MaxDepth is refused with a
// syntax.ParseError at the one that goes past it. The count follows quotes, backslashes,
// comments and here-documents as the parser does, and errs on the side of refusing: it also
// counts those in double quotes and in here-document bodies (code there may nest), so a
// script can be refused only for more than MaxDepth unclosed ones in a row. What nests without
// brackets (if, loops, case, functions, time, arithmetic and test operators) is stopped while
// it is parsed, once the parser recurses past maxFrames or reads more than maxDeepChunks
// while deeper than shallowFrames, with a syntax.ParseError at the chunk it was reading.
func Parse(src, name string) (*syntax.File, error) {
	if pos, deep := tooDeep(src); deep {
		return nil, syntax.ParseError{Filename: name, Pos: pos,
			Text: fmt.Sprintf("nested deeper than %d levels of ( and {; %s", MaxDepth, refusal)}
	}
	p := parsers.Get().(*syntax.Parser)
	defer parsers.Put(p)
	if len(src) < guardFrom {
		return p.Parse(strings.NewReader(src), name)
	}
	g := newGuard(src)
	f, err := p.Parse(g, name)
	if errors.Is(err, errTooDeep) {
		return nil, syntax.ParseError{Filename: name, Pos: position(src, g.last),
			Text: fmt.Sprintf("compound commands or operators nested too deep to parse (past %d levels of ( and {, about 2,000 of if, loops, case, functions or operators, or %d KB of script inside about 170 of them); %s", MaxDepth, maxDeepChunks*guardChunk>>10, refusal)}
	}
	return f, err
}

// refusal ends the message of every script Parse refuses for its depth.
const refusal = "awf refuses scripts this deep"

// Check returns Parse's error when Parse refuses src for its depth, and nil otherwise (an
// ordinary syntax error included): for text that another parser will read, such as what an
// interpreter's eval or source reads, which has no depth limit of its own.
func Check(src, name string) error {
	_, err := Parse(src, name)
	var pe syntax.ParseError
	if errors.As(err, &pe) && strings.HasSuffix(pe.Text, refusal) {
		return err
	}
	return nil
}

// guard feeds a script to the parser a chunk at a time and, before each chunk, stops it if
// it has recursed more than maxFrames below Parse, or has read more than maxDeepChunks while
// more than shallowFrames below it. Every level of recursion reads at least
// one byte, so the parser cannot go much deeper unseen.
type guard struct {
	src       string
	off, last int // bytes handed out, and where the last chunk started
	base      int // frames above the parse
	deep      int // chunks handed out while deeper than shallowFrames
}

func newGuard(src string) *guard {
	var pcs [64]uintptr
	return &guard{src: src, base: runtime.Callers(0, pcs[:])}
}

func (g *guard) Read(b []byte) (int, error) {
	var pc [1]uintptr
	if runtime.Callers(g.base+shallowFrames, pc[:]) > 0 {
		if g.deep++; g.deep > maxDeepChunks || runtime.Callers(g.base+maxFrames, pc[:]) > 0 {
			return 0, errTooDeep
		}
	}
	if g.off == len(g.src) {
		return 0, io.EOF
	}
	n := copy(b[:min(len(b), guardChunk)], g.src[g.off:])
	g.last, g.off = g.off, g.off+n
	return n, nil
}

// position is the line and column of offset off in src, as mvdan.cc/sh counts them.
func position(src string, off int) syntax.Pos {
	line, col := 1, 1
	for i := range off {
		line, col = advance(line, col, src[i])
	}
	return syntax.NewPos(uint(off), uint(line), uint(col))
}

// tooDeep finds the first ( or { of src that opens a level past MaxDepth.
func tooDeep(src string) (syntax.Pos, bool) {
	sc := &scanner{src: src, line: 1, col: 1}
	return sc.scan()
}

// scanner counts how deeply ( and { nest in a script, following what decides whether they
// are code: quotes, backslashes, comments and here-documents (whose bodies count, quotes
// there being text). It tracks line and column (1-based, in bytes, as mvdan.cc/sh counts).
type scanner struct {
	src                 string
	i, line, col, depth int
	inDouble            bool
	pending             []heredoc // here-documents whose bodies start at the next line
}

type heredoc struct {
	delim string
	tabs  bool // <<-: the closing line may be indented with tabs
}

func (sc *scanner) scan() (syntax.Pos, bool) {
	for sc.i < len(sc.src) {
		c := sc.src[sc.i]
		switch {
		case c == '\\' && sc.i+1 < len(sc.src):
			sc.step() // the backslash and the byte it escapes
			sc.step()
			continue
		case c == '\'' && !sc.inDouble:
			end := quoteEnd(sc.src[sc.i+1:], sc.i > 0 && sc.src[sc.i-1] == '$')
			if end < 0 {
				return syntax.Pos{}, false // unterminated: the parser says so
			}
			for range end + 2 { // the quotes and what is between them
				sc.step()
			}
			continue
		case c == '"':
			sc.inDouble = !sc.inDouble
		case c == '#' && !sc.inDouble && (sc.i == 0 || strings.IndexByte(" \t\n;&|()", sc.src[sc.i-1]) >= 0):
			for sc.i < len(sc.src) && sc.src[sc.i] != '\n' {
				sc.step()
			}
			continue
		case c == '<' && !sc.inDouble && strings.HasPrefix(sc.src[sc.i:], "<<") && !strings.HasPrefix(sc.src[sc.i:], "<<<"):
			sc.heredoc()
			continue
		case c == '\n' && !sc.inDouble && len(sc.pending) > 0:
			sc.step()
			if pos, deep := sc.bodies(); deep {
				return pos, true
			}
			continue
		}
		if pos, deep := sc.count(); deep {
			return pos, true
		}
		sc.step()
	}
	return syntax.Pos{}, false
}

// count takes the byte at sc.i into the depth.
func (sc *scanner) count() (syntax.Pos, bool) {
	switch sc.src[sc.i] {
	case '(', '{':
		if sc.depth++; sc.depth > MaxDepth {
			return syntax.NewPos(uint(sc.i), uint(sc.line), uint(sc.col)), true
		}
	case ')', '}':
		sc.depth = max(sc.depth-1, 0)
	}
	return syntax.Pos{}, false
}

// heredoc reads the operator << or <<- and its delimiter word, whose body starts at the next
// line.
func (sc *scanner) heredoc() {
	sc.step()
	sc.step()
	h := heredoc{}
	if sc.i < len(sc.src) && sc.src[sc.i] == '-' {
		h.tabs = true
		sc.step()
	}
	for sc.i < len(sc.src) && (sc.src[sc.i] == ' ' || sc.src[sc.i] == '\t') {
		sc.step()
	}
	var delim strings.Builder
	for sc.i < len(sc.src) && strings.IndexByte(" \t\n;&|<>()", sc.src[sc.i]) < 0 {
		if c := sc.src[sc.i]; c != '\'' && c != '"' && c != '\\' {
			delim.WriteByte(c)
		}
		sc.step()
	}
	h.delim = delim.String()
	sc.pending = append(sc.pending, h)
}

// bodies reads the bodies of the pending here-documents, line by line up to each closing
// line, counting ( and { in them whatever quotes they hold (text there, but $( ) is code).
func (sc *scanner) bodies() (syntax.Pos, bool) {
	for _, h := range sc.pending {
		for sc.i < len(sc.src) {
			end := strings.IndexByte(sc.src[sc.i:], '\n')
			if end < 0 {
				end = len(sc.src) - sc.i
			}
			text := sc.src[sc.i : sc.i+end]
			if h.tabs {
				text = strings.TrimLeft(text, "\t")
			}
			closing := text == h.delim
			for range end {
				if !closing {
					if pos, deep := sc.count(); deep {
						return pos, true
					}
				}
				sc.step()
			}
			if sc.i < len(sc.src) {
				sc.step() // the newline
			}
			if closing {
				break
			}
		}
	}
	sc.pending = sc.pending[:0]
	return syntax.Pos{}, false
}

// step moves past the byte at sc.i.
func (sc *scanner) step() {
	sc.line, sc.col = advance(sc.line, sc.col, sc.src[sc.i])
	sc.i++
}

// quoteEnd is the offset in rest of the quote that ends a single-quoted string, or -1: the
// first quote, or in $'...' (ansiC) the first one not escaped by a backslash.
func quoteEnd(rest string, ansiC bool) int {
	for j := 0; j < len(rest); j++ {
		switch {
		case ansiC && rest[j] == '\\':
			j++
		case rest[j] == '\'':
			return j
		}
	}
	return -1
}

// advance moves a line and column (1-based, in bytes, as mvdan.cc/sh counts them) past c.
func advance(line, col int, c byte) (int, int) {
	if c == '\n' {
		return line + 1, 1
	}
	return line, col + 1
}
