package toolparse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// antml is the namespace prefix Claude may put on <function_calls>, <invoke> and <parameter>.
const antml = "antml:"

// param is one XML parameter: its name and its raw text, trimmed and not entity-decoded.
type param struct{ name, value string }

// invokes matches a block of <invoke> elements: Claude's <function_calls> (also with the antml
// prefix) and MiniMax's <minimax:tool_call>.
func (s *scanner) invokes(i int, open, closing string) (match, error) {
	var calls []Call
	for k := i + len(open); ; {
		k = skipSpace(s.text, k)
		rest := s.text[k:]
		if _, ok := openTag(rest, "invoke"); ok {
			end, c, err := s.invoke(k)
			if err != nil {
				return fail(open, i, err)
			}
			calls, k = append(calls, c), end
			continue
		}
		end, err := s.closeBlock(k, closing, len(calls))
		if err == nil {
			err = s.checkNames(calls)
		}
		if err != nil {
			return fail(open, i, err)
		}
		return match{end: end, calls: calls, call: true}, nil
	}
}

// closeBlock expects the closing tag of a block of n invokes at k.
func (s *scanner) closeBlock(k int, closing string, n int) (int, error) {
	rest := s.text[k:]
	switch {
	case strings.HasPrefix(rest, closing) && n > 0:
		return k + len(closing), nil
	case strings.HasPrefix(rest, closing):
		return 0, errors.New("no <invoke> in the block")
	case onlyEnd(rest):
		return 0, fmt.Errorf("missing %s (truncated output?)", closing)
	}
	return 0, fmt.Errorf("unexpected %s in the block", snippet(rest))
}

// openTag reports whether s starts with the opening tag <name or <name, and returns
// the prefix used, which the closing tag must repeat.
func openTag(s, name string) (string, bool) {
	for _, ns := range []string{"", antml} {
		t := "<" + ns + name
		if strings.HasPrefix(s, t) && len(s) > len(t) && (isSpace(s[len(t)]) || s[len(t)] == '>') {
			return ns, true
		}
	}
	return "", false
}

// invoke reads <invoke name="x"><parameter name="p">v</parameter>...</invoke> at k.
func (s *scanner) invoke(k int) (int, Call, error) {
	ns, _ := openTag(s.text[k:], "invoke")
	name, j, err := nameAttr(s.text, k+len("<"+ns+"invoke"))
	if err != nil {
		return 0, Call{}, fmt.Errorf("<invoke>: %w", err)
	}
	closing := "</" + ns + "invoke>"
	var params []param
	for j = skipSpace(s.text, j); !strings.HasPrefix(s.text[j:], closing); j = skipSpace(s.text, j) {
		pns, ok := openTag(s.text[j:], "parameter")
		if !ok {
			return 0, Call{}, unexpectedIn(s.text[j:], fmt.Sprintf("<invoke name=%q>", name))
		}
		var p param
		if p, j, err = namedParam(s.text, j, pns); err != nil {
			return 0, Call{}, err
		}
		params = append(params, p)
	}
	args, err := s.xmlArgs(name, params)
	return j + len(closing), Call{Name: name, Arguments: args}, err
}

// unexpectedIn reports text that does not belong in an element, or its end when it is missing.
func unexpectedIn(rest, element string) error {
	if onlyEnd(rest) {
		return fmt.Errorf("unclosed %s (truncated output?)", element)
	}
	return fmt.Errorf("unexpected %s in %s", snippet(rest), element)
}

// namedParam reads <parameter name="p">v</parameter> at j; the value is raw text up to the
// closing tag.
func namedParam(src string, j int, ns string) (param, int, error) {
	name, v, err := nameAttr(src, j+len("<"+ns+"parameter"))
	if err != nil {
		return param{}, 0, fmt.Errorf("<parameter>: %w", err)
	}
	closing := "</" + ns + "parameter>"
	e := strings.Index(src[v:], closing)
	if e < 0 {
		return param{}, 0, fmt.Errorf("unclosed <parameter name=%q>", name)
	}
	return param{name, strings.TrimSpace(src[v : v+e])}, v + e + len(closing), nil
}

// nameAttr reads ` name="x">` at src[j:], the one attribute these tags carry, and returns the
// name and the offset after '>'.
func nameAttr(src string, j int) (string, int, error) {
	k := skipSpace(src, j)
	if !strings.HasPrefix(src[k:], "name") {
		return "", 0, errors.New(`expected a name="..." attribute`)
	}
	k = skipSpace(src, k+len("name"))
	if k >= len(src) || src[k] != '=' {
		return "", 0, errors.New(`expected = after "name"`)
	}
	k = skipSpace(src, k+1)
	if k >= len(src) || (src[k] != '"' && src[k] != '\'') {
		return "", 0, errors.New("expected a quoted name")
	}
	e := strings.IndexByte(src[k+1:], src[k])
	if e < 0 {
		return "", 0, errors.New("unclosed name attribute")
	}
	name := src[k+1 : k+1+e]
	if k = skipSpace(src, k+2+e); k >= len(src) || src[k] != '>' {
		return "", 0, fmt.Errorf("expected > after name=%q", name)
	}
	if name == "" {
		return "", 0, errors.New("empty name")
	}
	return name, k + 1, nil
}

// qwenParams reads the Qwen3-Coder elements <parameter=p>v</parameter> up to </function>.
func qwenParams(src string, j int) ([]param, int, error) {
	var params []param
	for j = skipSpace(src, j); !strings.HasPrefix(src[j:], "</function>"); j = skipSpace(src, j) {
		if !strings.HasPrefix(src[j:], "<parameter=") {
			return nil, 0, unexpectedIn(src[j:], "<function=...>")
		}
		k := j + len("<parameter=")
		gt := strings.IndexByte(src[k:], '>')
		if gt < 0 {
			return nil, 0, errors.New("unclosed <parameter= tag")
		}
		p := param{name: strings.TrimSpace(src[k : k+gt])}
		var err error
		if p.value, j, err = element(src, k+gt+1, "</parameter>"); err != nil {
			return nil, 0, fmt.Errorf("<parameter=%s>: %w", p.name, err)
		}
		params = append(params, p)
	}
	return params, j + len("</function>"), nil
}

// glmParams reads GLM's <arg_key>k</arg_key><arg_value>v</arg_value> pairs at j.
func glmParams(src string, j int) ([]param, int, error) {
	var params []param
	for {
		k := skipSpace(src, j)
		if !strings.HasPrefix(src[k:], "<arg_key>") {
			return params, j, nil
		}
		var p param
		var err error
		if p.name, k, err = element(src, k+len("<arg_key>"), "</arg_key>"); err != nil {
			return nil, 0, fmt.Errorf("<arg_key>: %w", err)
		}
		if k = skipSpace(src, k); !strings.HasPrefix(src[k:], "<arg_value>") {
			return nil, 0, fmt.Errorf("<arg_key>%s</arg_key> without <arg_value>", p.name)
		}
		if p.value, j, err = element(src, k+len("<arg_value>"), "</arg_value>"); err != nil {
			return nil, 0, fmt.Errorf("<arg_value> of %q: %w", p.name, err)
		}
		params = append(params, p)
	}
}

// element returns the trimmed raw text from v up to closing, and the offset after closing.
func element(src string, v int, closing string) (string, int, error) {
	e := strings.Index(src[v:], closing)
	if e < 0 {
		return "", 0, fmt.Errorf("missing %s", closing)
	}
	return strings.TrimSpace(src[v : v+e]), v + e + len(closing), nil
}

// xmlArgs builds the arguments object from XML parameters in document order, typing each value
// by the tool's schema.
func (s *scanner) xmlArgs(tool string, params []param) (json.RawMessage, error) {
	props, err := s.properties(tool)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteByte('{')
	seen := make(map[string]bool, len(params))
	for n, p := range params {
		switch {
		case p.name == "":
			return nil, fmt.Errorf("tool %q: parameter without a name", tool)
		case seen[p.name]:
			return nil, fmt.Errorf("tool %q: duplicate parameter %q", tool, p.name)
		}
		seen[p.name] = true
		v, err := typedValue(p.value, schemaTypes(props[p.name]))
		if err != nil {
			return nil, fmt.Errorf("tool %q parameter %q: %w", tool, p.name, err)
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonString(p.name))
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// properties returns the "properties" of a tool's parameter schema, decoded once per Parse.
func (s *scanner) properties(tool string) (map[string]json.RawMessage, error) {
	if p, ok := s.props[tool]; ok {
		return p, nil
	}
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if raw, ok := s.opts.Schemas[tool]; ok {
		if err := json.Unmarshal(raw, &schema); err != nil {
			return nil, fmt.Errorf("schema of tool %q: %v", tool, err)
		}
	}
	if s.props == nil {
		s.props = make(map[string]map[string]json.RawMessage)
	}
	s.props[tool] = schema.Properties
	return schema.Properties, nil
}

// schemaTypes returns the JSON types a property schema allows: its "type" (a name or a list),
// or the types of its anyOf/oneOf branches. nil means untyped.
func schemaTypes(raw json.RawMessage) []string {
	var sch struct {
		Type  json.RawMessage   `json:"type"`
		AnyOf []json.RawMessage `json:"anyOf"`
		OneOf []json.RawMessage `json:"oneOf"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &sch) != nil {
		return nil
	}
	var one string
	var many []string
	switch {
	case json.Unmarshal(sch.Type, &one) == nil:
		return []string{one}
	case json.Unmarshal(sch.Type, &many) == nil:
		return many
	}
	var types []string
	for _, sub := range append(sch.AnyOf, sch.OneOf...) {
		types = append(types, schemaTypes(sub)...)
	}
	return types
}

var (
	integerText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`) })
	numberText  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`) })
)

// typedValue converts a raw XML value to the first of types it fits. A value stays a string
// when the schema allows strings or names no type this package converts to.
func typedValue(v string, types []string) (json.RawMessage, error) {
	known := false
	for _, t := range types {
		out, ok, isKnown := convert(v, t)
		if ok {
			return out, nil
		}
		known = known || isKnown
	}
	if !known || slices.Contains(types, "string") {
		return jsonString(v), nil
	}
	return nil, fmt.Errorf("value %s is not of type %s", snippet(v), strings.Join(types, " or "))
}

// convert converts v to JSON type t. known is false for "string" and for types it does not
// know, which leave the value a string.
func convert(v, t string) (out json.RawMessage, ok, known bool) {
	switch t {
	case "integer":
		return json.RawMessage(v), integerText().MatchString(v), true
	case "number":
		return json.RawMessage(v), numberText().MatchString(v), true
	case "boolean":
		return json.RawMessage(v), v == "true" || v == "false", true
	case "null":
		return json.RawMessage(v), v == "null", true
	case "array", "object":
		want := map[string]byte{"array": '[', "object": '{'}[t]
		if v == "" || v[0] != want || !json.Valid([]byte(v)) {
			return nil, false, true
		}
		var b bytes.Buffer
		_ = json.Compact(&b, []byte(v)) // valid, so it cannot fail
		return b.Bytes(), true, true
	}
	return nil, false, false
}

// jsonString encodes s as a JSON string without escaping <, > and &, which tool arguments
// often hold.
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
