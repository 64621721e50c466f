package cmdcheck

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// literal returns a word's value when it is fixed before the command runs: unquoted text
// without expansions, globs, braces or a leading tilde, single quotes, double quotes without
// expansions, and the bound variables of a command template ("${AWF_T1}", whose value the
// call gives). Anything else is only known at run time.
func (z *analyzer) literal(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for i, part := range w.Parts {
		switch p := part.(type) {
		case *syntax.Lit:
			v := p.Value
			if i == 0 && strings.HasPrefix(v, "~") || mayExpand(v) {
				return "", false
			}
			b.WriteString(unescape(v, false))
		case *syntax.SglQuoted:
			if p.Dollar && strings.Contains(p.Value, `\`) {
				return "", false // $'\x63url': ANSI-C escapes
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			if p.Dollar {
				return "", false // $"..." is translated
			}
			for _, dp := range p.Parts {
				switch dp := dp.(type) {
				case *syntax.Lit:
					b.WriteString(unescape(dp.Value, true))
				case *syntax.ParamExp:
					v, ok := z.bound(dp)
					if !ok {
						return "", false
					}
					b.WriteString(v)
				default:
					return "", false
				}
			}
		case *syntax.ParamExp:
			// Unquoted, the value is split into fields and globbed: known only when it has
			// nothing to split or expand.
			v, ok := z.bound(p)
			if !ok || v == "" || strings.ContainsAny(v, " \t\n*?[") {
				return "", false
			}
			b.WriteString(v)
		default:
			return "", false
		}
	}
	return b.String(), true
}

// mayExpand reports whether unquoted text may change by pathname or brace expansion.
func mayExpand(v string) bool {
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '\\':
			i++
		case '*', '?':
			return true
		case '[':
			if strings.Contains(v[i+1:], "]") {
				return true
			}
		case '{':
			if rest := v[i:]; strings.ContainsAny(rest, ",") || strings.Contains(rest, "..") {
				return true
			}
		}
	}
	return false
}

// unescape removes the backslashes the shell removes: any in unquoted text, and in double
// quotes only before $ ` " \ and newline. A backslash-newline disappears.
func unescape(v string, dquoted bool) string {
	if !strings.Contains(v, `\`) {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '\\' || i+1 == len(v) {
			b.WriteByte(c)
			continue
		}
		next := v[i+1]
		switch {
		case next == '\n':
			i++
		case !dquoted || strings.IndexByte("$`\"\\", next) >= 0:
			b.WriteByte(next)
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// bound returns the value of a plain reference ($NAME or ${NAME}) to a variable bound by the
// call (Allowlist.CheckBound), which nothing in the script can change before it is read:
// the template's variables are set before the script starts and are never assigned in it.
func (z *analyzer) bound(p *syntax.ParamExp) (string, bool) {
	if z.vars == nil || p.Param == nil || p.Excl || p.Length || p.Width || p.Index != nil ||
		p.Slice != nil || p.Repl != nil || p.Names != 0 || p.Exp != nil {
		return "", false
	}
	v, ok := z.vars[p.Param.Value]
	return v, ok
}
