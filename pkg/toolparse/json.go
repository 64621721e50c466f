package toolparse

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// decodeJSON reads one JSON value at src[i] and returns it with the offset after it.
func decodeJSON(src string, i int) (json.RawMessage, int, error) {
	dec := json.NewDecoder(strings.NewReader(src[i:]))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		if se, ok := errors.AsType[*json.SyntaxError](err); ok {
			return nil, 0, fmt.Errorf("invalid JSON: %v (at offset %d)", se, i+int(se.Offset))
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, 0, errors.New("truncated JSON")
		}
		return nil, 0, fmt.Errorf("invalid JSON: %v", err)
	}
	return bytes.TrimSpace(raw), i + int(dec.InputOffset()), nil
}

// startsJSONCall reports whether src[i] opens an object with a key or an array of objects:
// a cheap test that keeps the scanner from decoding every brace in prose.
func startsJSONCall(src string, i int) bool {
	k := skipSpace(src, i+1)
	if k >= len(src) {
		return false
	}
	if src[i] == '{' {
		return src[k] == '"' || src[k] == '\'' // single quotes: a broken call, not prose
	}
	return src[k] == '{'
}

// unmarkedJSON matches call-shaped JSON written without a marker. It is a call only when it
// converts and names allowed tools; otherwise it is prose, unless the output starts with it
// (or it follows a call) and it looks like a call to an allowed tool.
func (s *scanner) unmarkedJSON(i int) (match, error) {
	if !startsJSONCall(s.text, i) || s.dead[i] {
		return match{}, nil
	}
	raw, end, err := decodeJSON(s.text, i)
	if err != nil { // the value may run on into prose, so look at all of it
		if s.strict(i) && s.looksLikeCall(s.text[i:]) {
			return fail("JSON call", i, err)
		}
		s.markDead(i)
		return match{}, nil
	}
	calls, err := callsFromJSON(raw, false)
	if err != nil {
		if s.strict(i) && s.looksLikeCall(string(raw)) {
			return fail("JSON call", i, err)
		}
		return match{end: end}, nil
	}
	if !s.allAllowed(calls) {
		return match{end: end}, nil
	}
	return match{end: end, calls: calls, call: true}, nil
}

// markDead records the '{' and '[' that the broken JSON value at i leaves open where it fails.
// A value starting at one of them fails the same way, so the scanner does not decode it again:
// without this, deeply nested broken JSON would take quadratic time.
func (s *scanner) markDead(i int) {
	dec := json.NewDecoder(strings.NewReader(s.text[i:]))
	var open []int
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			open = append(open, i+int(dec.InputOffset())-1)
		case json.Delim('}'), json.Delim(']'):
			if len(open) <= 1 {
				return // the value closed: its failure was not in its structure
			}
			open = open[:len(open)-1]
		}
	}
	if s.dead == nil {
		s.dead = make(map[int]bool, len(open))
	}
	for _, o := range open {
		s.dead[o] = true
	}
}

var (
	firstKey = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*\[?\s*\{\s*["']([^"']*)["']`) })
	callKeys = []string{"name", "arguments", "parameters", "tool_calls", "function_call", "function", "type", "id", "role", "content"}
	nameKey  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`["']name["']\s*:\s*["']([^"'\\]*)["']`) })
	callKey  = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`["'](arguments|parameters|tool_calls|function_call|function)["']\s*:`)
	})
)

// looksLikeCall reports whether JSON text (perhaps broken, perhaps running on into prose) opens
// with a call key and names an allowed tool. With no tool list a "name" alone is too common in
// data, so a call key must be there too.
func (s *scanner) looksLikeCall(frag string) bool {
	first := firstKey().FindStringSubmatch(frag)
	if first == nil || !slices.Contains(callKeys, first[1]) {
		return false
	}
	m := nameKey().FindStringSubmatch(frag)
	if m == nil {
		return false
	}
	if len(s.opts.Tools) > 0 {
		return s.allowed[m[1]]
	}
	return callKey().MatchString(frag)
}

// wrappedJSON matches a tag that holds JSON calls, like <function_call>{...}</function_call>.
func (s *scanner) wrappedJSON(i int, open, closing string) (match, error) {
	k := skipSpace(s.text, i+len(open))
	if k >= len(s.text) || (s.text[k] != '{' && s.text[k] != '[') {
		return fail(open, i, errors.New("expected a JSON call"))
	}
	end, calls, err := jsonSeq(s.text, k, true)
	if err == nil {
		end, err = s.closeWrap(end, closing, true)
	}
	if err == nil {
		err = s.checkNames(calls)
	}
	if err != nil {
		return fail(open, i, err)
	}
	return match{end: end, calls: calls, call: true}, nil
}

// jsonSeq reads JSON calls at src[k] separated by space, ';' or ','. It returns the offset
// after the last one.
func jsonSeq(src string, k int, marked bool) (int, []Call, error) {
	var calls []Call
	for {
		raw, end, err := decodeJSON(src, k)
		if err != nil {
			return 0, nil, err
		}
		cs, err := callsFromJSON(raw, marked)
		if err != nil {
			return 0, nil, err
		}
		calls = append(calls, cs...)
		next := skipSeps(src, end)
		if next >= len(src) || (src[next] != '{' && src[next] != '[') {
			return end, calls, nil
		}
		k = next
	}
}

// callsFromJSON converts one JSON value into calls: a call object, an envelope or an array of
// call objects. marked says a marker preceded it, so a missing "arguments" means {}.
func callsFromJSON(raw json.RawMessage, marked bool) ([]Call, error) {
	if len(raw) > 0 && raw[0] == '[' {
		return callsFromArray(raw, marked)
	}
	f, err := objectFields(raw)
	if err != nil {
		return nil, err
	}
	if _, ok := f["tool_calls"]; ok {
		return envelope(f, "tool_calls", marked)
	}
	if _, ok := f["function_call"]; ok {
		return envelope(f, "function_call", marked)
	}
	c, err := callFromEntry(f, marked)
	if err != nil {
		return nil, err
	}
	return []Call{c}, nil
}

func callsFromArray(raw json.RawMessage, marked bool) ([]Call, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, errors.New("empty list of calls")
	}
	calls := make([]Call, 0, len(items))
	for n, item := range items {
		f, err := objectFields(item)
		if err == nil {
			var c Call
			c, err = callFromEntry(f, marked)
			calls = append(calls, c)
		}
		if err != nil {
			return nil, fmt.Errorf("call %d: %w", n+1, err)
		}
	}
	return calls, nil
}

// envelope converts {"tool_calls":[...]} or {"function_call":{...}}, as an OpenAI assistant
// message holds them.
func envelope(f map[string]json.RawMessage, key string, marked bool) ([]Call, error) {
	if err := onlyKeys(f, key, "role", "content"); err != nil {
		return nil, err
	}
	if c, ok := f["content"]; ok && string(c) != "null" && string(c) != `""` {
		return nil, fmt.Errorf("%s envelope with content", key)
	}
	if key == "tool_calls" {
		return callsFromArray(f[key], marked)
	}
	g, err := objectFields(f[key])
	if err != nil {
		return nil, fmt.Errorf("function_call: %w", err)
	}
	c, err := callFromEntry(g, marked)
	if err != nil {
		return nil, err
	}
	return []Call{c}, nil
}

// callFromEntry converts a flat call {"name","arguments"} or a typed one
// {"type":"function","function":{...}}, each with an optional "id".
func callFromEntry(f map[string]json.RawMessage, marked bool) (Call, error) {
	if err := onlyKeys(f, "id", "type", "function", "name", "arguments", "parameters"); err != nil {
		return Call{}, err
	}
	if t, ok := f["type"]; ok && string(t) != `"function"` {
		return Call{}, fmt.Errorf(`"type" is %s, want "function"`, t)
	}
	id, err := optString(f, "id")
	if err != nil {
		return Call{}, err
	}
	if fn, ok := f["function"]; ok {
		if f, err = functionFields(f, fn); err != nil {
			return Call{}, err
		}
	}
	name, err := optString(f, "name")
	if err != nil {
		return Call{}, err
	}
	if name == "" {
		return Call{}, errors.New("missing tool name")
	}
	args, err := argsFrom(f, marked)
	if err != nil {
		return Call{}, fmt.Errorf("tool %q: %w", name, err)
	}
	return Call{ID: id, Name: name, Arguments: args}, nil
}

// functionFields returns the fields of a typed entry's "function" object.
func functionFields(entry map[string]json.RawMessage, fn json.RawMessage) (map[string]json.RawMessage, error) {
	for _, k := range []string{"name", "arguments", "parameters"} {
		if _, ok := entry[k]; ok {
			return nil, fmt.Errorf("both %q and \"function\"", k)
		}
	}
	f, err := objectFields(fn)
	if err != nil {
		return nil, fmt.Errorf("function: %w", err)
	}
	return f, onlyKeys(f, "name", "arguments", "parameters")
}

// argsFrom returns the compact arguments object of a call's fields.
func argsFrom(f map[string]json.RawMessage, marked bool) (json.RawMessage, error) {
	a, hasA := f["arguments"]
	p, hasP := f["parameters"]
	switch {
	case hasA && hasP:
		return nil, errors.New(`both "arguments" and "parameters"`)
	case hasP:
		a = p
	case !hasA && marked:
		return json.RawMessage("{}"), nil
	case !hasA:
		return nil, errors.New("missing arguments")
	}
	if len(a) > 0 && a[0] == '"' {
		var str string
		if err := json.Unmarshal(a, &str); err != nil {
			return nil, err
		}
		if !json.Valid([]byte(str)) {
			return nil, fmt.Errorf("arguments string is not valid JSON: %s", snippet(str))
		}
		a = []byte(str)
	}
	return compactObject(a)
}

// compactObject re-encodes a JSON object without insignificant space, keeping key order and
// number text.
func compactObject(raw []byte) (json.RawMessage, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, fmt.Errorf("invalid JSON arguments: %v", err)
	}
	if b.Len() == 0 || b.Bytes()[0] != '{' {
		return nil, fmt.Errorf("arguments are not a JSON object: %s", snippet(b.String()))
	}
	return b.Bytes(), nil
}

// objectFields decodes a JSON object's members, rejecting duplicate keys, which would make the
// call ambiguous.
func objectFields(raw []byte) (map[string]json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, fmt.Errorf("expected a JSON object, got %s", snippet(string(raw)))
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	f := make(map[string]json.RawMessage)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := f[key]; dup {
			return nil, fmt.Errorf("duplicate key %q", key)
		}
		f[key] = v
	}
	return f, nil
}

// onlyKeys fails on a key outside keys, so data that merely has a "name" is not a call.
func onlyKeys(f map[string]json.RawMessage, keys ...string) error {
	var bad []string
	for k := range f {
		if !slices.Contains(keys, k) {
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return fmt.Errorf("unexpected key %q", bad[0])
	}
	return nil
}

// optString returns the string member key, "" when absent, or an error for another type.
func optString(f map[string]json.RawMessage, key string) (string, error) {
	v, ok := f[key]
	if !ok {
		return "", nil
	}
	var str string
	if err := json.Unmarshal(v, &str); err != nil {
		return "", fmt.Errorf("%q is not a string", key)
	}
	return str, nil
}
