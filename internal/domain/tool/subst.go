package tool

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/awf-dev/awf/internal/domain/workflow"
)

// Manifest templates (seed 000) use single braces: {name} is the value of the variable name
// (an argument's variable, input, or an earlier step's output_var). {{ and }} are literal
// braces. A brace not followed by a name and a closing brace is literal text, so JSON such as
// {"a": 1} passes through unchanged. A name that is not a variable is an error, never empty.

// Substitute replaces every {name} of tmpl with vars[name].
func Substitute(tmpl string, vars map[string]string) (string, error) {
	if !strings.ContainsAny(tmpl, "{}") {
		return tmpl, nil
	}
	var b strings.Builder
	b.Grow(len(tmpl))
	for i := 0; i < len(tmpl); {
		name, n, kind := scanBrace(tmpl[i:])
		switch kind {
		case braceVar:
			v, ok := vars[name]
			if !ok {
				return "", unknownVar(name, vars)
			}
			b.WriteString(v)
		case braceEscape:
			b.WriteByte(tmpl[i])
		default:
			b.WriteString(tmpl[i : i+n])
		}
		i += n
	}
	return b.String(), nil
}

// ArgText renders an argument value as the text that stands for it in a template or a program
// argument: strings as they are, numbers and booleans as JSON writes them, lists and objects as
// JSON, nil as "". A value JSON cannot encode is printed with fmt.
func ArgText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case json.Number:
		return x.String()
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// Variables lists the names tmpl refers to, in order of first use.
func Variables(tmpl string) []string {
	var names []string
	for i := 0; i < len(tmpl); {
		name, n, kind := scanBrace(tmpl[i:])
		if kind == braceVar && !slices.Contains(names, name) {
			names = append(names, name)
		}
		i += n
	}
	return names
}

type braceKind int

const (
	braceText braceKind = iota
	braceVar
	braceEscape
)

// scanBrace reads one token at the start of s: "{{" or "}}" (an escaped brace), "{name}" (a
// variable), or a run of other text. It returns the name, the token's length and its kind.
func scanBrace(s string) (string, int, braceKind) {
	if len(s) >= 2 && (s[:2] == "{{" || s[:2] == "}}") {
		return "", 2, braceEscape
	}
	if s[0] == '{' {
		end := 1
		for end < len(s) && isNameByte(s[end], end == 1) {
			end++
		}
		if end > 1 && end < len(s) && s[end] == '}' {
			return s[1:end], end + 1, braceVar
		}
		return "", 1, braceText
	}
	n := strings.IndexAny(s[1:], "{}")
	if n < 0 {
		return "", len(s), braceText
	}
	return "", n + 1, braceText
}

func isNameByte(c byte, first bool) bool {
	switch {
	case c == '_', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		return true
	case c >= '0' && c <= '9', c == '-':
		return !first
	}
	return false
}

func unknownVar(name string, vars map[string]string) error {
	known := make([]string, 0, len(vars))
	for k := range vars {
		known = append(known, k)
	}
	slices.Sort(known)
	msg := fmt.Sprintf("unknown variable {%s} (known: %s)", name, strings.Join(known, ", "))
	if hint := workflow.DidYouMean(name, known); hint != "" {
		msg += "; " + hint
	}
	return fmt.Errorf("%s", msg)
}
