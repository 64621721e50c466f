package tool

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSubstitute(t *testing.T) {
	vars := map[string]string{"input": "text", "lang": "fr", "out-1": "x"}
	tests := []struct {
		tmpl, want, err string
		names           []string
	}{
		{"{input}", "text", "", []string{"input"}},
		{"translate {input} to {lang}, {lang}!", "translate text to fr, fr!", "", []string{"input", "lang"}},
		{"{out-1}", "x", "", []string{"out-1"}},
		{`{"a": 1, "b": [2]}`, `{"a": 1, "b": [2]}`, "", nil},
		{"{{input}} and }} and {{", "{input} and } and {", "", nil},
		{"{ input }", "{ input }", "", nil},
		{"{1x} {} {", "{1x} {} {", "", nil},
		{"no braces", "no braces", "", nil},
		{"{lnag}", "", `unknown variable {lnag} (known: input, lang, out-1); did you mean "lang"?`, []string{"lnag"}},
		{"{input}{nope}", "", "unknown variable {nope} (known: input, lang, out-1)", []string{"input", "nope"}},
	}
	for _, tc := range tests {
		got, err := Substitute(tc.tmpl, vars)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("Substitute(%q) error = %v, want %q", tc.tmpl, err, tc.err)
			}
		} else if err != nil || got != tc.want {
			t.Errorf("Substitute(%q) = %q, %v; want %q", tc.tmpl, got, err, tc.want)
		}
		if names := Variables(tc.tmpl); !cmp.Equal(names, tc.names) {
			t.Errorf("Variables(%q) = %v, want %v", tc.tmpl, names, tc.names)
		}
	}
}

func TestArgText(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{nil, ""},
		{"a b", "a b"},
		{json.Number("1.50"), "1.50"},
		{true, "true"},
		{2.5, "2.5"},
		{1e21, "1e+21"},
		{float64(3), "3"},
		{[]any{"x", json.Number("1")}, `["x",1]`},
		{map[string]any{"k": "v"}, `{"k":"v"}`},
		{7, "7"},
	}
	for _, tc := range tests {
		if got := ArgText(tc.v); got != tc.want {
			t.Errorf("ArgText(%#v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestStepArg(t *testing.T) {
	tests := []struct {
		arg   StepArg
		whole string
		ok    bool
	}{
		{TextArg("{n}"), "n", true},
		{TextArg("{n} "), "", false},
		{TextArg("{{n}}"), "", false},
		{TextArg("x{n}"), "", false},
		{ListArg("{n}"), "", false},
	}
	for _, tc := range tests {
		if w, ok := tc.arg.Whole(); w != tc.whole || ok != tc.ok {
			t.Errorf("%+v.Whole() = %q, %v; want %q, %v", tc.arg, w, ok, tc.whole, tc.ok)
		}
	}
}

func TestLookup(t *testing.T) {
	ctx := map[string]any{
		"user":  map[string]any{"profile": map[string]any{"name": "Ada"}, "tags": []any{"a", map[string]any{"k": 1}}},
		"count": 3,
	}
	tests := []struct {
		path string
		want any
		err  string
	}{
		{"count", 3, ""},
		{"user.profile.name", "Ada", ""},
		{"user.tags.1.k", 1, ""},
		{"user.profile.nmae", nil, `no value at user.profile.nmae (user.profile has: name); did you mean "name"?`},
		{"usr", nil, `no value at usr (the context has: count, user); did you mean "user"?`},
		{"user.tags.5", nil, "no value at user.tags.5: user.tags is a list of 2 items"},
		{"count.x", nil, "no value at count.x: count is a number"},
		{"user.profile.name.first", nil, "no value at user.profile.name.first: user.profile.name is a string"},
		{"", nil, "empty path"},
	}
	for _, tc := range tests {
		got, err := Lookup(ctx, tc.path)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("Lookup(%q) error = %v, want %q", tc.path, err, tc.err)
			}
			continue
		}
		if err != nil || !cmp.Equal(got, tc.want) {
			t.Errorf("Lookup(%q) = %v, %v; want %v", tc.path, got, err, tc.want)
		}
	}
}

func TestChainStepStore(t *testing.T) {
	ctx := map[string]any{"a": 1}
	if err := (ChainStep{OutputKey: "k"}).Store(ctx, "v"); err != nil || ctx["k"] != "v" {
		t.Errorf("Store(output_key) = %v, %v", err, ctx)
	}
	if err := (ChainStep{Merge: true}).Store(ctx, map[string]any{"b": 2}); err != nil || ctx["b"] != 2 {
		t.Errorf("Store(merge) = %v, %v", err, ctx)
	}
	if err := (ChainStep{Merge: true}).Store(ctx, []any{1}); err == nil || err.Error() != "merge: the result is a list, not an object; set output_key instead" {
		t.Errorf("Store(merge list) = %v", err)
	}
	if err := (ChainStep{}).Store(ctx, "v"); err == nil || err.Error() != "the result (a string) needs a place: set output_key, or merge: true for an object" {
		t.Errorf("Store(nowhere) = %v", err)
	}
	args, err := ChainStep{}.MapInput(ctx)
	if err != nil || !cmp.Equal(args, ctx) {
		t.Errorf("MapInput with no mapping = %v, %v; want the whole context", args, err)
	}
}

func TestParseRef(t *testing.T) {
	tests := []struct {
		in, owner, name, constraint, err string
	}{
		{"official/summarize@^1.0.0", "official", "summarize", "^1.0.0", ""},
		{"summarize", "", "summarize", "", ""},
		{" a.b/c-d ", "a.b", "c-d", "", ""},
		{"x@", "", "", "", `tool reference "x@": empty version constraint after @`},
		{"a/b/c", "", "", "", `tool reference "a/b/c": bad name "b/c" (letters, digits, _ and -)`},
		{"has space", "", "", "", `tool reference "has space": bad name "has space" (letters, digits, _ and -)`},
	}
	for _, tc := range tests {
		o, n, c, err := ParseRef(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("ParseRef(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || o != tc.owner || n != tc.name || c != tc.constraint {
			t.Errorf("ParseRef(%q) = %q %q %q %v", tc.in, o, n, c, err)
		}
	}
	d, err := ParseDependency("acme/x@~1.2")
	if err != nil || d.String() != "acme/x@~1.2" || d.Ref != "acme/x" {
		t.Errorf("ParseDependency = %+v, %v", d, err)
	}
	m := &Manifest{Dependencies: []Dependency{d}}
	if got := m.Pinned("acme/x"); got != "acme/x@~1.2" {
		t.Errorf("Pinned(acme/x) = %q", got)
	}
	if got := m.Pinned("acme/x@2"); got != "acme/x@2" {
		t.Errorf("Pinned(acme/x@2) = %q", got)
	}
}

func TestObjectSchemaAndDefaults(t *testing.T) {
	params := []Param{
		{Name: "arguments", Type: "array<string>", Required: true, Description: "args"},
		{Name: "n", Type: "integer", Default: 3, HasDefault: true, Enum: []any{1, 3}},
		{Name: "s"},
	}
	want := `{"additionalProperties":false,"properties":{"arguments":{"description":"args","items":{"type":"string"},"type":"array"},` +
		`"n":{"default":3,"enum":[1,3],"type":"integer"},"s":{"type":"string"}},"required":["arguments"],"type":"object"}`
	if got := string(ObjectSchema(params)); got != want {
		t.Errorf("ObjectSchema =\n%s\nwant\n%s", got, want)
	}
	if got := string(ObjectSchema(nil)); got != `{"additionalProperties":false,"properties":{},"type":"object"}` {
		t.Errorf("ObjectSchema(nil) = %s", got)
	}
	given := map[string]any{"s": "x"}
	if got := Defaults(params, given); !cmp.Equal(got, map[string]any{"s": "x", "n": 3}) || len(given) != 1 {
		t.Errorf("Defaults = %v (given now %v)", got, given)
	}
	for typ, ok := range map[string]bool{"": true, "object": true, "array<integer>": true, "array<>": false, "list": false, "array<x>": false} {
		if err := CheckType(typ); (err == nil) != ok {
			t.Errorf("CheckType(%q) = %v, want ok=%v", typ, err, ok)
		}
	}
}

func TestDecodeArgs(t *testing.T) {
	tests := []struct {
		in   string
		want map[string]any
		err  string
	}{
		{`{"n": 1.0, "big": 123456789012345678901234567890}`, map[string]any{"n": json.Number("1.0"), "big": json.Number("123456789012345678901234567890")}, ""},
		{``, map[string]any{}, ""},
		{`null`, map[string]any{}, ""},
		{`[1]`, nil, "arguments must be a JSON object, got a list"},
		{`{"a":1} {"b":2}`, nil, "arguments are not valid JSON: unexpected data after the JSON value"},
		{`{"a":`, nil, "arguments are not valid JSON: unexpected EOF"},
	}
	for _, tc := range tests {
		got, err := DecodeArgs([]byte(tc.in))
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("DecodeArgs(%q) error = %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !cmp.Equal(got, tc.want) {
			t.Errorf("DecodeArgs(%q) = %v, %v", tc.in, got, err)
		}
	}
}
