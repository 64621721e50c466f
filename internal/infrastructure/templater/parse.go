package templater

import (
	"fmt"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
)

// SyntaxError is a template or expression that does not parse. Offset is the byte offset in
// the template (or bare expression) where the problem is, so a checker can point at it.
type SyntaxError struct {
	Offset int
	Msg    string
}

func (e *SyntaxError) Error() string { return fmt.Sprintf("%s (at offset %d)", e.Msg, e.Offset) }

// FaultKind classifies a syntax error as an invalid workflow.
func (e *SyntaxError) FaultKind() fault.Kind { return fault.Invalid }

// segment is one piece of a template: literal text, or a {{ }} placeholder.
type segment struct {
	lit    string
	expr   string // the expression between the braces, leading dot blanked out
	start  int    // byte offset in the template: of the text, or of the "{{"
	isExpr bool
}

// split cuts a template into literal text and placeholders. A placeholder ends at the first
// "}}" outside string literals and outside braces opened inside it, so `{{ {"a": 1} }}` and
// `{{ "}}" }}` work.
func split(tmpl string) ([]segment, error) {
	var segs []segment
	for i := 0; i < len(tmpl); {
		open := strings.Index(tmpl[i:], "{{")
		if open < 0 {
			segs = append(segs, segment{lit: tmpl[i:], start: i})
			break
		}
		open += i
		if open > i {
			segs = append(segs, segment{lit: tmpl[i:open], start: i})
		}
		end, err := exprEnd(tmpl, open+2)
		if err != nil {
			return nil, err
		}
		if end < 0 {
			return nil, &SyntaxError{Offset: open, Msg: `unterminated "{{"`}
		}
		src := tmpl[open+2 : end]
		if strings.TrimSpace(src) == "" {
			return nil, &SyntaxError{Offset: open, Msg: "empty {{ }}"}
		}
		segs = append(segs, segment{expr: blankLeadingDot(src), start: open, isExpr: true})
		i = end + 2
	}
	return segs, nil
}

// exprEnd returns the index of the "}}" that closes the placeholder whose expression starts
// at from, or -1 when there is none.
func exprEnd(s string, from int) (int, error) {
	depth := 0
	for k := from; k < len(s); k++ {
		switch c := s[k]; c {
		case '"', '\'', '`':
			end := stringEnd(s, k)
			if end < 0 {
				return 0, &SyntaxError{Offset: k, Msg: "unterminated string literal in {{ }}"}
			}
			k = end
		case '{':
			depth++
		case '}':
			if depth == 0 && k+1 < len(s) && s[k+1] == '}' {
				return k, nil
			}
			if depth > 0 {
				depth--
			}
		}
	}
	return -1, nil
}

// stringEnd returns the index of the quote closing the expr string literal opened at s[open],
// or -1. Backquoted strings have no escapes.
func stringEnd(s string, open int) int {
	q := s[open]
	for k := open + 1; k < len(s); k++ {
		switch s[k] {
		case '\\':
			if q != '`' {
				k++
			}
		case q:
			return k
		}
	}
	return -1
}

// blankLeadingDot turns ".inputs.x" into " inputs.x": the Go-template habit of a leading dot
// means the same name. The dot becomes a space so that offsets stay true.
func blankLeadingDot(src string) string {
	p := len(src) - len(strings.TrimLeft(src, " \t\r\n"))
	if p+1 < len(src) && src[p] == '.' && isIdentStart(src[p+1]) {
		return src[:p] + " " + src[p+1:]
	}
	return src
}

func isIdentStart(c byte) bool {
	return c == '_' || c == '$' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// unwrapBraces returns the expression inside "{{ expr }}" when a bare expression is written as
// a single placeholder (when: "{{ inputs.x == 'y' }}"), with the offset of the expression.
func unwrapBraces(src string) (string, int) {
	trimmed := strings.TrimSpace(src)
	if !strings.HasPrefix(trimmed, "{{") {
		return src, 0
	}
	segs, err := split(trimmed)
	if err != nil || len(segs) != 1 || !segs[0].isExpr {
		return src, 0
	}
	return segs[0].expr, strings.Index(src, "{{") + 2
}
