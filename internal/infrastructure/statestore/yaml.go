package statestore

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/awf-dev/awf/internal/domain/state"
)

// encodeYAML marshals v with multi-line strings as literal blocks where that is lossless.
//
// go-yaml alone does not read back every string it writes: with UseLiteralStyleIfMultiline a
// first line that starts with a space, carriage returns, lines of blanks and multi-line map
// keys come out wrong, and without it some plain scalars ("\t", ".inf", "? x") do. So the
// document is built as an AST and the style of every string is decided here: a literal block
// when literalSafe, plain when plainSafe, double quotes otherwise. Floats such as 1e+20, which
// go-yaml writes but reads back as strings, get a decimal point.
func encodeYAML(v any) (string, error) {
	node, err := yaml.ValueToNode(v, yaml.UseLiteralStyleIfMultiline(true))
	if err != nil {
		return "", err
	}
	ast.Walk(&fixer{plain: map[string]bool{}}, node)
	return node.String() + "\n", nil
}

// fixer sets the style of every string node and the spelling of every float node.
type fixer struct {
	plain map[string]bool // plainSafe of short strings: keys and enum values repeat a lot
}

func (f *fixer) Visit(node ast.Node) ast.Visitor {
	switch n := node.(type) {
	case *ast.MappingValueNode:
		if key, ok := n.Key.(*ast.StringNode); ok {
			f.setStyle(key, false)
		}
	case *ast.StringNode:
		f.setStyle(n, true)
	case *ast.FloatNode:
		n.Token.Value = floatWithPoint(n.Token.Value)
	}
	return f
}

// setStyle recovers the string go-yaml encoded in n and chooses how it is printed. Nodes that
// already carry a quoted token type were styled before (keys are visited twice).
func (f *fixer) setStyle(n *ast.StringNode, blockOK bool) {
	if n.Token.Type == token.DoubleQuoteType || n.Token.Type == token.SingleQuoteType {
		return
	}
	s := n.Value
	// go-yaml puts the quotes of a string it chose to quote into the value; a raw string that
	// starts with a quote is always quoted by it, and a quoted one never holds a line break.
	if strings.HasPrefix(s, `"`) && !strings.ContainsAny(s, "\r\n") {
		if u, err := strconv.Unquote(s); err == nil {
			s = u
		}
	}
	n.Value = s
	n.Token.Value = s
	switch {
	case strings.ContainsAny(s, "\r\n"):
		if !blockOK || !literalSafe(s) {
			n.Token.Type = token.DoubleQuoteType
		}
	case !f.plainSafe(s):
		n.Token.Type = token.DoubleQuoteType
	}
}

func (f *fixer) plainSafe(s string) bool {
	if len(s) > 64 {
		return plainSafe(s)
	}
	safe, ok := f.plain[s]
	if !ok {
		safe = plainSafe(s)
		f.plain[s] = safe
	}
	return safe
}

// plainSafe reports whether s can be written as a plain scalar and read back as the same
// string. It is stricter than YAML needs: when in doubt, quote.
func plainSafe(s string) bool {
	if s == "" || s != strings.TrimSpace(s) {
		return false
	}
	if strings.ContainsAny(s[:1], "-?:,[]{}#&*!|>'\"%@`<=~") || strings.ContainsAny(s, "{}[]") {
		return false
	}
	// go-yaml's lexer takes "<<" anywhere in a key for a merge key.
	if strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") ||
		strings.Contains(s, "<<") {
		return false
	}
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return false
		}
	}
	if len(s) >= 20 && '0' <= s[0] && s[0] <= '9' && s[4] == '-' {
		if _, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return true // how times are written; read back as the same text, even into an any
		}
	}
	return !token.IsNeedQuoted(s) && token.New(s, s, &token.Position{}).Type == token.StringType
}

// literalSafe reports whether s, printed by go-yaml as a literal block, reads back unchanged:
// printable text with "\n" line breaks and at least one line that is not blank, no line of
// only blanks, a first line that starts with neither a space (it would be taken for
// indentation) nor a tab (go-yaml's parser rejects it), and a last line that does not end
// with a space (go-yaml's printer trims it).
func literalSafe(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r != '\n' && r != '\t' && !unicode.IsPrint(r) {
			return false
		}
	}
	first, last := "", ""
	for line := range strings.SplitSeq(s, "\n") {
		if line == "" {
			continue
		}
		if strings.TrimLeft(line, " \t") == "" {
			return false
		}
		if first == "" {
			first = line
		}
		last = line
	}
	return first != "" && first[0] != ' ' && first[0] != '\t' && !strings.HasSuffix(last, " ")
}

// floatWithPoint turns "1e+20" into "1.0e+20": YAML 1.1 readers, go-yaml's included, take an
// exponent without a decimal point for a string.
func floatWithPoint(v string) string {
	i := strings.IndexAny(v, "eE")
	if i < 0 || strings.Contains(v[:i], ".") {
		return v
	}
	return v[:i] + ".0" + v[i:]
}

// decodeRun parses a state file and normalises its dynamic values (see normalize).
func decodeRun(data []byte) (*state.RunState, error) {
	var rs state.RunState
	if err := yaml.Unmarshal(data, &rs); err != nil {
		return nil, fmt.Errorf("%s", yaml.FormatError(err, false, false))
	}
	for k, v := range rs.Inputs {
		rs.Inputs[k] = normalize(v)
	}
	for _, st := range rs.States {
		if st == nil {
			continue
		}
		st.Response = normalize(st.Response)
		for i := range st.ToolCalls {
			for k, v := range st.ToolCalls[i].Arguments {
				st.ToolCalls[i].Arguments[k] = normalize(v)
			}
		}
	}
	return &rs, nil
}

// normalize gives a decoded dynamic value the types a JSON-like value has in memory:
// go-yaml reads integers as uint64 or int64, and awf code expects int.
func normalize(v any) any {
	switch x := v.(type) {
	case uint64:
		if x <= math.MaxInt {
			return int(x)
		}
	case int64:
		if x >= math.MinInt && x <= math.MaxInt {
			return int(x)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = normalize(e)
		}
	case []any:
		for i, e := range x {
			x[i] = normalize(e)
		}
	}
	return v
}
