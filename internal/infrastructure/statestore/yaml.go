package statestore

import (
	"bytes"
	"encoding/base64"
	"errors"
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
	"github.com/awf-dev/awf/internal/infrastructure/yamlnode"
)

// encodeYAML marshals v with multi-line strings as literal blocks where that is lossless.
//
// go-yaml alone does not read back every string it writes: with UseLiteralStyleIfMultiline a
// first line that starts with a space, carriage returns, lines of blanks and multi-line map
// keys come out wrong, and without it some plain scalars ("\t", ".inf", "? x") do. So the
// document is built as an AST and the style of every string is decided here: a literal block
// when literalSafe, plain when plainSafe, double quotes otherwise. Floats such as 1e+20, which
// go-yaml writes but reads back as strings, get a decimal point.
//
// It defines the format; Saves use emit, which writes the same bytes without go-yaml.
func encodeYAML(v any) (string, error) {
	node, err := yaml.ValueToNode(v, yaml.UseLiteralStyleIfMultiline(true))
	if err != nil {
		return "", err
	}
	ast.Walk(&fixer{done: map[*ast.StringNode]bool{}}, node)
	return node.String() + "\n", nil
}

// fixer sets the style of every string node and the spelling of every float node. Keys are
// visited twice, first as keys: done holds the string nodes styled.
type fixer struct{ done map[*ast.StringNode]bool }

func (f *fixer) Visit(node ast.Node) ast.Visitor {
	switch n := node.(type) {
	case *ast.MappingValueNode:
		if key, ok := n.Key.(*ast.StringNode); ok && !f.done[key] {
			setStyle(key, false)
			f.done[key] = true
		}
	case *ast.StringNode:
		if !f.done[n] {
			setStyle(n, true)
			f.done[n] = true
		}
	case *ast.FloatNode:
		n.Token.Value = floatWithPoint(n.Token.Value)
	}
	return f
}

// setStyle recovers the string go-yaml encoded in n and sets how it is printed, unless
// go-yaml gave it a quoted token type.
func setStyle(n *ast.StringNode, blockOK bool) {
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
	switch stringStyle(s, blockOK) {
	case quotedStyle:
		n.Token.Type = token.DoubleQuoteType
	case binaryStyle:
		n.Value = binaryScalar(s)
		n.Token.Value = n.Value
		n.Token.Type = token.StringType
	}
}

// style is how a string is written: go-yaml prints a plain string that holds a line break as
// a literal block.
type style uint8

const (
	plainStyle style = iota
	quotedStyle
	literalStyle
	binaryStyle
)

// stringStyle chooses how s is written: base64 tagged !!binary when s is not valid UTF-8, a
// literal block when blockOK and literalSafe, plain when plainSafe, double quotes otherwise.
// Keys are never blocks.
//
// YAML holds only Unicode text: a double-quoted "\xff" is the character U+00FF, not the byte,
// so bytes that are not UTF-8 (a tool's binary output, a program's stderr in Latin-1) would
// come back changed. !!binary is YAML's own tag for bytes: go-yaml reads it back into a string
// field as the exact bytes, PyYAML and yq as bytes, and the tag says to a reader of the file
// that the value is not text.
func stringStyle(s string, blockOK bool) style {
	switch {
	case !utf8.ValidString(s):
		return binaryStyle
	case strings.ContainsAny(s, "\r\n"):
		if blockOK && literalSafe(s) {
			return literalStyle
		}
		return quotedStyle
	case !plainSafe(s):
		return quotedStyle
	}
	return plainStyle
}

// plainSafe reports whether s can be written as a plain scalar and read back as the same
// string. It is stricter than YAML needs: when in doubt, quote.
func plainSafe(s string) bool {
	return s != "" && (plainWord(s) || plainChecked(s))
}

// plainChecked is plainSafe without its shortcut.
func plainChecked(s string) bool {
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

// plainWord is a quick yes for the common plain strings, for which go-yaml's checks (at the
// end of plainSafe) take microseconds: an ASCII letter, then letters, digits, spaces, '_',
// '.', '/' and '-', not ending with a space, no "- ", and none of the words YAML reads as null
// or a boolean. Such a string is
// neither a number nor a time (both start with a digit, a sign or a dot) and holds nothing
// go-yaml quotes; a test checks that plainSafe's answer is the same with and without it.
func plainWord(s string) bool {
	if c := s[0]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') || s[len(s)-1] == ' ' {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == ' ' || c == '_' || c == '.' || c == '/' || c == '-') {
			return false
		}
	}
	return !strings.Contains(s, "- ") && !(len(s) <= 5 && yamlWords[s])
}

// yamlWords are the words that start with a letter and that go-yaml reads, or writes quoted
// for YAML 1.1 readers, as null or a boolean.
var yamlWords = map[string]bool{
	"null": true, "Null": true, "NULL": true,
	"true": true, "True": true, "TRUE": true, "false": true, "False": true, "FALSE": true,
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "n": true, "N": true, "no": true, "No": true, "NO": true,
	"on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true,
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
	for i, r := range s {
		if c := s[i]; c < utf8.RuneSelf { // ASCII: unicode.IsPrint's answer, quicker
			if c != '\n' && c != '\t' && (c < ' ' || c > '~') {
				return false
			}
		} else if !unicode.IsPrint(r) {
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

// binaryScalar writes bytes as a YAML !!binary scalar: standard base64 on one line.
//
// The base64 is double-quoted: plain, a base64 text that reads as another type (8703, true,
// null, 1e10, 0x12) was decoded as that type despite the tag, and the run did not load
// (FuzzSaveLoadBytes found "\xf3\xbd7", whose base64 is 8703).
func binaryScalar(s string) string {
	return `!!binary "` + base64.StdEncoding.EncodeToString([]byte(s)) + `"`
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

// runDoc is a state file: the run, and the sequence number of the last journal line it
// holds (see journal.go).
type runDoc struct {
	state.RunState `yaml:",inline"`
	JournalSeq     int64 `yaml:"journal_seq"`
}

// stateHeader starts every state file this version writes, and stateEnd ends it, so that a
// file cut short (a copy interrupted, a disk that lost its tail) is known: a file that starts
// with the one and lacks the other is truncated. Files of earlier versions have neither and
// load as they are. Both are YAML comments: any YAML reader skips them.
const (
	stateHeader = "# awf run state; a whole file ends with the line \"# end\"\n"
	stateEnd    = "# end\n"
)

// errTruncated says that a state file that should end with stateEnd does not.
var errTruncated = errors.New(`the state file is truncated: it does not end with the line "# end" that awf writes last (was it copied, or cut short by a disk problem?)`)

// checkWhole reports errTruncated for a file that starts with data (its first bytes at least)
// and ends with tail (its last bytes, at least len(stateEnd) of them if it has that many).
func checkWhole(data, tail []byte) error {
	if bytes.HasPrefix(data, []byte(stateHeader)) && !bytes.HasSuffix(tail, []byte(stateEnd)) {
		return errTruncated
	}
	return nil
}

// decodeRun parses a state file and normalises its dynamic values (see normalize). It
// returns the file's journal_seq with the run. A truncated file is errTruncated.
func decodeRun(data []byte) (*state.RunState, int64, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, 0, errors.New("the state file is empty")
	}
	if err := checkWhole(data, data); err != nil {
		return nil, 0, err
	}
	if err := yamlnode.CheckWritten(data); err != nil {
		return nil, 0, err
	}
	doc, err := decodeDoc(data)
	if err != nil {
		return nil, 0, err
	}
	rs := doc.RunState
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
	return &rs, doc.JournalSeq, nil
}

// decodeDoc decodes a state file, a large run's `states` in chunks (see splitStates).
func decodeDoc(data []byte) (*runDoc, error) {
	if split, ok := splitStates(data); ok {
		if doc, err := decodeSplit(split); err == nil {
			return doc, nil
		}
	}
	var doc runDoc
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s", yaml.FormatError(err, false, false))
	}
	return &doc, nil
}

// normalize gives a decoded dynamic value the types a JSON-like value has in memory:
// go-yaml reads integers as uint64 or int64, and awf code expects int; it reads !!binary
// into an any as []byte, and the value was a string that was not valid UTF-8.
func normalize(v any) any {
	switch x := v.(type) {
	case []byte:
		return string(x)
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
