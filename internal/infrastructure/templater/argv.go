package templater

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// argv returns the words of each simple command of a bound script with the bound values in
// place, for the record of what ran: a word made only of literal text, quotes and bound
// variables is its value; any other word (another variable, a substitution, a glob) is its
// source text. A script that does not parse gives nil.
func argv(script string, vars map[string]string) [][]string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
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

// staticWord is the value of word parts that hold only literal text and bound variables.
func staticWord(parts []syntax.WordPart, vars map[string]string) (string, bool) {
	var b strings.Builder
	for _, p := range parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[") {
				return "", false
			}
			b.WriteString(unescape(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			s, ok := staticWord(p.Parts, vars)
			if !ok {
				return "", false
			}
			b.WriteString(s)
		case *syntax.ParamExp:
			v, ok := vars[paramName(p)]
			if !ok {
				return "", false
			}
			b.WriteString(v)
		default:
			return "", false
		}
	}
	return b.String(), true
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
