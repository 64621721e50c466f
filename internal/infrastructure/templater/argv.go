package templater

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/awf-dev/awf/internal/infrastructure/shellsyntax"
)

// argv returns the words of each simple command of a bound script with the bound values in
// place, for the record of what ran: a word made only of literal text, quotes and bound
// variables is its value; any other word (another variable, a substitution, a glob) is its
// source text. A script that does not parse gives nil.
func argv(script string, vars map[string]string) [][]string {
	f, err := shellsyntax.Parse(script, "")
	if err != nil {
		return nil
	}
	var out [][]string
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		words := make([]string, len(call.Args))
		for i, w := range call.Args {
			if s, ok := staticWord(w.Parts, vars); ok {
				words[i] = s
			} else {
				words[i] = printWord(w)
			}
		}
		out = append(out, words)
		return true
	})
	return out
}

// maxArgvWord bounds a word of the recorded argv: a longer one (a 10 MB value bound into
// printf, say) is recorded as its first argvWordHead bytes and its size, so the record says
// what ran without holding, or copying, the value again.
const (
	maxArgvWord  = 1024
	argvWordHead = 256
)

// staticWord is the value of word parts that hold only literal text and bound variables, at
// most maxArgvWord bytes of it with a note of the size past that.
func staticWord(parts []syntax.WordPart, vars map[string]string) (string, bool) {
	var w wordBuf
	if !w.add(parts, vars) {
		return "", false
	}
	if w.n > maxArgvWord {
		return fmt.Sprintf("%s... (%d bytes)", cutUTF8(w.b.String(), argvWordHead), w.n), true
	}
	return w.b.String(), true
}

// wordBuf builds a word, keeping at most maxArgvWord+1 bytes of it and counting all of them.
type wordBuf struct {
	b strings.Builder
	n int
}

func (w *wordBuf) write(s string) {
	w.n += len(s)
	if room := maxArgvWord + 1 - w.b.Len(); room > 0 {
		w.b.WriteString(s[:min(room, len(s))])
	}
}

func (w *wordBuf) add(parts []syntax.WordPart, vars map[string]string) bool {
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[") {
				return false
			}
			w.write(unescape(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				return false
			}
			w.write(p.Value)
		case *syntax.DblQuoted:
			if !w.add(p.Parts, vars) {
				return false
			}
		case *syntax.ParamExp:
			v, ok := vars[paramName(p)]
			if !ok {
				return false
			}
			w.write(v)
		default:
			return false
		}
	}
	return true
}

// cutUTF8 cuts s to at most n bytes without splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// paramName is the variable of a plain ${NAME} or $NAME reference, "" for anything else.
func paramName(p *syntax.ParamExp) string {
	if p.Param == nil || p.Excl || p.Length || p.Width || p.Index != nil || p.Slice != nil ||
		p.Repl != nil || p.Names != 0 || p.Exp != nil {
		return ""
	}
	return p.Param.Value
}

// unescape removes the backslashes of an unquoted literal ("a\ b" is "a b").
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// printWord is a word's source text.
func printWord(w *syntax.Word) string {
	var b strings.Builder
	if err := syntax.NewPrinter().Print(&b, w); err != nil {
		return "?"
	}
	return b.String()
}
