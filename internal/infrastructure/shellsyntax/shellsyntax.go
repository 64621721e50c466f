// Package shellsyntax parses shell scripts as bash for every part of awf that reads one (the
// templater, the sandbox's command check, approval's canonical form, the processes that run
// them), after refusing what would make the parser itself a denial of service: mvdan.cc/sh
// parses by recursive descent, some 9 KB of stack a level, so a 300 KB script of 100,000
// nested $( took 900 MB before it ran anything. Scripts come from workflows and, through the
// shell tool, from models.
package shellsyntax

import (
	"fmt"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// MaxDepth is how deeply parentheses and braces (subshells, $( ), $(( )), ${ }, groups) may
// nest in a script: as deep as awf lets YAML nest, far beyond any script people write.
const MaxDepth = 256

// parsers are reused: building one costs more than parsing a short line.
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

// Parse parses src as bash, as syntax.Parser.Parse does; name is the file name its errors give.
// A script whose parentheses and braces nest deeper than MaxDepth is refused with a
// syntax.ParseError at the one that goes past it. The count is conservative: it counts them
// in double quotes, comments and here-documents too (not in single quotes or escaped), so a
// script can only be refused for more than MaxDepth unclosed ones in a row, never let through
// with more.
func Parse(src, name string) (*syntax.File, error) {
	if pos, deep := tooDeep(src); deep {
		return nil, syntax.ParseError{Filename: name, Pos: pos,
			Text: fmt.Sprintf("nested deeper than %d levels of ( and {; awf refuses scripts this deep", MaxDepth)}
	}
	p := parsers.Get().(*syntax.Parser)
	defer parsers.Put(p)
	return p.Parse(strings.NewReader(src), name)
}

// tooDeep finds the first ( or { of src that opens a level past MaxDepth.
func tooDeep(src string) (syntax.Pos, bool) {
	depth, line, col := 0, 1, 1
	inDouble := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\\' && i+1 < len(src):
			i++
			line, col = advance(line, col, c)
			c = src[i]
		case c == '\'' && !inDouble:
			end := quoteEnd(src[i+1:], i > 0 && src[i-1] == '$')
			if end < 0 {
				return syntax.Pos{}, false // unterminated: the parser says so
			}
			for _, q := range []byte(src[i : i+1+end]) {
				line, col = advance(line, col, q)
			}
			i += 1 + end
			c = src[i]
		case c == '"':
			inDouble = !inDouble
		case c == '(' || c == '{':
			if depth++; depth > MaxDepth {
				return syntax.NewPos(uint(i), uint(line), uint(col)), true
			}
		case c == ')' || c == '}':
			depth = max(depth-1, 0)
		}
		line, col = advance(line, col, c)
	}
	return syntax.Pos{}, false
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
