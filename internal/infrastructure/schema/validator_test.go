package schema

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// errs is shorthand for expected failures: "path: message" strings.
func errs(list ...string) []string { return list }

func messages(fe []tool.FieldError) []string {
	var out []string
	for _, e := range fe {
		out = append(out, e.String())
	}
	return out
}

func decode(t *testing.T, s string) any {
	t.Helper()
	v, err := tool.DecodeJSON([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

const nested = `{
	"type": "object",
	"properties": {
		"a": {"type": "object", "properties": {"b": {"type": "integer"}}, "required": ["b"]},
		"n": {"type": "integer", "minimum": 1, "maximum": 10},
		"s": {"type": "string", "minLength": 2, "maxLength": 4, "pattern": "^[a-z]+$"},
		"e": {"enum": ["red", "green", 3]},
		"l": {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": 3},
		"x": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}
	},
	"required": ["a"],
	"additionalProperties": false
}`

func TestValidate(t *testing.T) {
	tests := []struct {
		name, schema, value string
		want                []string
	}{
		// The seed 003 traps: booleans are not integers, 1.0 is one.
		{"true is not an integer", `{"type":"integer"}`, `true`, errs("$: want integer, got boolean")},
		{"1.0 is an integer", `{"type":"integer"}`, `1.0`, nil},
		{"1e2 is an integer", `{"type":"integer"}`, `1e2`, nil},
		{"1.5 is not an integer", `{"type":"integer"}`, `1.5`, errs("$: want integer, got number")},
		{"an integer is a number", `{"type":"number"}`, `7`, nil},
		{"a numeric string is not a number", `{"type":"number"}`, `"7"`, errs("$: want number, got string")},
		{"2^64+1 stays exact", `{"type":"integer","maximum":18446744073709551616}`, `18446744073709551617`,
			errs("$: want <= 1.8446744073709552e+19, got 18446744073709551617")},
		{"huge exponent is an integer, cheaply", `{"type":"integer"}`, `1e999999999`, nil},
		{"null", `{"type":"null"}`, `null`, nil},
		{"type list", `{"type":["string","null"]}`, `3`, errs("$: want string or null, got integer")},

		{"nested ok", nested, `{"a":{"b":1},"n":5,"s":"abc","e":"red","l":["x"],"x":0.5}`, nil},
		{"nested path", nested, `{"a":{"b":true}}`, errs("$.a.b: want integer, got boolean")},
		{"every failure reported", nested, `{"a":{},"n":0,"s":"A","e":"blue","l":[],"x":1,"zz":1}`, errs(
			"$.a.b: is required",
			`$.e: want one of "red", "green", 3, got "blue"`,
			"$.l: want at least 1 items, got 0",
			"$.n: want >= 1, got 0",
			"$.s: want at least 2 characters, got 1",
			`$.s: want a string matching "^[a-z]+$", got "A"`,
			"$.x: want < 1, got 1",
			"$.zz: unknown property (allowed: a, e, l, n, s, x)",
		)},
		{"required at the root", nested, `{}`, errs("$.a: is required")},
		{"enum compares numbers by value", nested, `{"a":{"b":1},"e":3.0}`, nil},
		{"maximum", nested, `{"a":{"b":1},"n":11}`, errs("$.n: want <= 10, got 11")},
		{"exclusiveMinimum", nested, `{"a":{"b":1},"x":0}`, errs("$.x: want > 0, got 0")},
		{"maxLength counts characters", nested, `{"a":{"b":1},"s":"ééééé"}`,
			errs("$.s: want at most 4 characters, got 5", `$.s: want a string matching "^[a-z]+$", got "ééééé"`)},
		{"items with indexes", nested, `{"a":{"b":1},"l":["a",2,"c",true]}`, errs(
			"$.l: want at most 3 items, got 4", "$.l[1]: want string, got integer", "$.l[3]: want string, got boolean")},
		{"did you mean", nested, `{"a":{"b":1},"nn":2}`, errs(`$.nn: unknown property (did you mean "n"?)`)},
		{"not an object", nested, `[]`, errs("$: want object, got array")},

		{"additionalProperties as a schema", `{"type":"object","properties":{"id":{"type":"integer"}},"additionalProperties":{"type":"string"}}`,
			`{"id":1,"tag":"x","n":2}`, errs("$.n: want string, got integer")},
		{"additionalProperties true", `{"properties":{"id":{"type":"integer"}},"additionalProperties":true}`, `{"other":[1]}`, nil},
		{"patternProperties", `{"patternProperties":{"^x-":{"type":"string"}},"additionalProperties":false}`,
			`{"x-a":"ok","x-b":1,"y":2}`, errs("$.x-b: want string, got integer", "$.y: unknown property (none are allowed)")},
		{"odd keys are quoted", `{"properties":{"a b":{"type":"string"}}}`, `{"a b":1}`, errs(`$["a b"]: want string, got integer`)},
		{"minimum and maximum", `{"minimum":1.5,"maximum":2}`, `2.5`, errs("$: want <= 2, got 2.5")},
		{"minimum ignores strings", `{"minimum":1}`, `"0"`, nil},
		{"multipleOf", `{"multipleOf":0.1}`, `0.3`, nil},
		{"multipleOf fails", `{"multipleOf":3}`, `10`, errs("$: want a multiple of 3, got 10")},
		{"const", `{"const":{"a":[1,2]}}`, `{"a":[1.0,2]}`, nil},
		{"uniqueItems", `{"uniqueItems":true}`, `[1,{"a":1},1.0]`, errs("$: want unique items, but items 0 and 2 are equal")},
		{"prefixItems", `{"prefixItems":[{"type":"string"}],"items":{"type":"integer"}}`, `["a",1,"b"]`, errs("$[2]: want integer, got string")},
		{"draft-07 tuple items", `{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"type":"string"}],"additionalItems":false}`,
			`["a",1]`, errs("$[1]: no value is allowed here")},
		{"contains", `{"contains":{"type":"integer"},"minContains":2}`, `[1,"a"]`, errs("$: want at least 2 items matching contains, got 1")},
		{"min and max properties", `{"minProperties":2}`, `{"a":1}`, errs("$: want at least 2 properties, got 1")},
		{"dependentRequired", `{"dependentRequired":{"a":["b"]}}`, `{"a":1}`, errs(`$.b: is required when "a" is present`)},
		{"propertyNames", `{"propertyNames":{"maxLength":2}}`, `{"abc":1}`, errs("$.abc: property name: want at most 2 characters, got 3")},
		{"anyOf", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `true`,
			errs("$: matches none of the anyOf schemas: (1) want string, got boolean; (2) want integer, got boolean")},
		{"anyOf ok", `{"anyOf":[{"type":"string"},{"type":"integer"}]}`, `2`, nil},
		{"anyOf quoting its deepest failure whole", `{"anyOf":[{"items":{"anyOf":[{"items":{"type":"number"}},{"type":"null"}]}},{"type":"null"}]}`, `[["x"]]`,
			errs(`$: matches none of the anyOf schemas: (1) $[0]: matches none of the anyOf schemas: (1) $[0][0]: want number, got string; (2) want null, got array; (2) want null, got array`)},
		{"oneOf naming its deepest failure past the cut", `{"$defs":{"n":{"oneOf":[{"type":"array","items":{"$ref":"#/$defs/n"}},{"type":"number"}]}},"$ref":"#/$defs/n"}`,
			`[[[[[[[[[[[[[true]]]]]]]]]]]]]`, errs(`$: matches none of the oneOf schemas: (1) $[0]: matches none of the oneOf schemas: (1) $[0][0]: ` +
				`matches none of the oneOf schemas: (1) $[0][0][0]: matches none of the oneOf schemas: (1) $[0][0][0][0]: matches none of the oneOf schemas: ` +
				`(1) $[0][0][0][0][0]: matches none of the oneO...; (2) want number, got array; deepest: $[0][0][0][0][0][0][0][0][0][0][0][0][0]: ` +
				`matches none of the oneOf schemas: (1) want array, got boolean; (2) want number, got boolean`)},
		{"anyOf naming its deepest failure past the cut", `{"$defs":{"n":{"anyOf":[{"type":"array","items":{"$ref":"#/$defs/n"}},{"type":"number"}]}},"$ref":"#/$defs/n"}`,
			`[[[[[[[[[[[[["x"]]]]]]]]]]]]]`, errs(`$: matches none of the anyOf schemas: (1) $[0]: matches none of the anyOf schemas: (1) $[0][0]: ` +
				`matches none of the anyOf schemas: (1) $[0][0][0]: matches none of the anyOf schemas: (1) $[0][0][0][0]: matches none of the anyOf schemas: ` +
				`(1) $[0][0][0][0][0]: matches none of the anyO...; (2) want number, got array; deepest: $[0][0][0][0][0][0][0][0][0][0][0][0][0]: ` +
				`matches none of the anyOf schemas: (1) want array, got string; (2) want number, got string`)},
		{"oneOf twice", `{"oneOf":[{"type":"integer"},{"type":"number"}]}`, `2`, errs("$: matches oneOf schemas 1 and 2, want exactly one")},
		{"allOf", `{"allOf":[{"minimum":1},{"maximum":2}]}`, `3`, errs("$: want <= 2, got 3")},
		{"not", `{"not":{"type":"string"}}`, `"x"`, errs("$: must not match the schema under not")},
		{"if then else", `{"if":{"properties":{"k":{"const":"a"}}},"then":{"required":["a"]},"else":{"required":["b"]}}`,
			`{"k":"z"}`, errs("$.b: is required")},
		{"false schema", `false`, `1`, errs("$: no value is allowed here")},
		{"true schema", `true`, `{"anything":[1]}`, nil},
		{"empty schema", ``, `1`, nil},
		{"local ref", `{"$defs":{"pos":{"type":"integer","minimum":0}},"properties":{"n":{"$ref":"#/$defs/pos"}}}`,
			`{"n":-1}`, errs("$.n: want >= 0, got -1")},
		{"recursive ref", `{"type":"object","properties":{"name":{"type":"string"},"kids":{"type":"array","items":{"$ref":"#"}}}}`,
			`{"name":"a","kids":[{"name":"b","kids":[{"name":3}]}]}`, errs("$.kids[0].kids[0].name: want string, got integer")},
		{"anchor ref", `{"$defs":{"s":{"$anchor":"str","type":"string"}},"items":{"$ref":"#str"}}`, `["a",1]`, errs("$[1]: want string, got integer")},
		{"ref to itself consumes nothing", `{"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}`, `1`,
			errs("$: nested too deeply (more than 256 levels of values and references)")},
		{"fallback keyword", `{"type":"object","properties":{"a":{}},"unevaluatedProperties":false}`, `{"a":1,"b":2}`,
			[]string{"$: " + fallbackMessage(t, `{"type":"object","properties":{"a":{}},"unevaluatedProperties":false}`, `{"a":1,"b":2}`)}},
	}
	v := New()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := v.Validate(json.RawMessage(tc.schema), decode(t, tc.value))
			if err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if diff := cmp.Diff(tc.want, messages(got)); diff != "" {
				t.Errorf("Validate(%s, %s) errors (-want +got):\n%s", tc.schema, tc.value, diff)
			}
		})
	}
}

// fallbackMessage is what jsonschema-go says, for the keywords the walker leaves to it.
func fallbackMessage(t *testing.T, schema, value string) string {
	t.Helper()
	s, err := Compile(json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	if !s.fallback {
		t.Fatalf("schema %s should use the fallback", schema)
	}
	err = s.resolved.Validate(floats(decode(t, value)))
	if err == nil {
		t.Fatalf("jsonschema-go accepts %s", value)
	}
	return err.Error()
}

// TestGoValues covers values built in Go rather than decoded: float64 from plain
// json.Unmarshal, Go integers, typed maps and structs.
func TestGoValues(t *testing.T) {
	type point struct {
		X int `json:"x"`
	}
	schema := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"},"m":{"type":"object","properties":{"x":{"type":"integer","maximum":1}}}}}`)
	tests := []struct {
		name  string
		value any
		want  []string
	}{
		{"float64 1.0", map[string]any{"n": 1.0}, nil},
		{"float64 1.5", map[string]any{"n": 1.5}, errs("$.n: want integer, got number")},
		{"int64", map[string]any{"n": int64(3)}, nil},
		{"bool", map[string]any{"n": true}, errs("$.n: want integer, got boolean")},
		{"struct", map[string]any{"m": point{X: 2}}, errs("$.m.x: want <= 1, got 2")},
		{"typed map", map[string]int{"n": 2}, nil},
		{"pointer to struct", &point{X: 1}, nil},
		{"channel", map[string]any{"n": make(chan int)}, errs("$: the value is not JSON: json: unsupported type: chan int")},
	}
	v := New()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := v.Validate(schema, tc.value)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, messages(got)); diff != "" {
				t.Errorf("Validate(%v) (-want +got):\n%s", tc.value, diff)
			}
		})
	}
}

func TestBadSchemas(t *testing.T) {
	tests := []struct{ name, schema, want string }{
		{"not JSON", `{"type":`, "JSON Schema does not parse"},
		{"bad type", `{"type":"integr"}`, `unknown type "integr"`},
		{"bad pattern", `{"pattern":"("}`, "JSON Schema is not valid"},
		{"dangling ref", `{"$ref":"#/$defs/missing"}`, "JSON Schema is not valid"},
		{"remote ref", `{"$ref":"https://example.com/s.json"}`, "JSON Schema is not valid"},
	}
	v := New()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := v.Check(json.RawMessage(tc.schema))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check(%s) = %v, want an error containing %q", tc.schema, err, tc.want)
			}
			if k := fault.KindOf(err); k != fault.Invalid {
				t.Errorf("Check(%s) kind = %v, want invalid", tc.schema, k)
			}
			if _, err := v.Validate(json.RawMessage(tc.schema), 1); err == nil {
				t.Errorf("Validate with bad schema %s: no error", tc.schema)
			}
		})
	}
}

func TestCacheByBytes(t *testing.T) {
	v := New()
	schema := json.RawMessage(`{"type":"string"}`)
	a, err := v.Compile(schema)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := v.Compile(json.RawMessage(`{"type":"string"}`))
	if a != b {
		t.Error("Compile of identical bytes compiled twice")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if got, _ := v.Validate(schema, "x"); len(got) != 0 {
				t.Errorf("concurrent Validate = %v", got)
			}
		})
	}
	wg.Wait()
}

// TestUpstreamBugs pins the jsonschema-go behaviours this package works around, so that an
// upgrade that fixes them is noticed.
func TestUpstreamBugs(t *testing.T) {
	s, err := Compile(json.RawMessage(`{"type":"integer"}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.resolved.Validate(json.Number("1")); err == nil {
		t.Log("jsonschema-go now types json.Number as a number; the floats() conversion may go")
	}
	if got := s.Validate(json.Number("1")); len(got) != 0 {
		t.Errorf("Validate(json.Number 1) = %v, want valid", got)
	}
}

func BenchmarkValidate(b *testing.B) {
	v := New()
	schema := json.RawMessage(nested)
	value, _ := tool.DecodeJSON([]byte(`{"a":{"b":1},"n":5,"s":"abc","e":"red","l":["x","y"],"x":0.5}`))
	for b.Loop() {
		if errs, _ := v.Validate(schema, value); len(errs) != 0 {
			b.Fatal(errs)
		}
	}
}

// Schemas whose references branch: both branches of an anyOf, or both parts of an allOf,
// descend into the same value through the same definition.
const (
	branchingAnyOf = `{"$defs": {"n": {"anyOf": [
		{"type": "array", "items": {"$ref": "#/$defs/n"}},
		{"type": "array", "maxItems": 5, "items": {"$ref": "#/$defs/n"}},
		{"type": "number"}]}}, "$ref": "#/$defs/n"}`
	branchingAllOf = `{"$defs": {
		"n": {"allOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/b"}]},
		"a": {"type": ["array", "number"], "items": {"$ref": "#/$defs/n"}},
		"b": {"type": ["array", "number"], "items": {"$ref": "#/$defs/n"}}}, "$ref": "#/$defs/n"}`
	selfBranching = `{"$defs": {"n": {"anyOf": [{"$ref": "#/$defs/n"}, {"$ref": "#/$defs/n"}, {"type": "number"}]}}, "$ref": "#/$defs/n"}`
)

// TestBranchingReferencesAreValidatedOncePerPlace: the failures are the same as when every
// way is taken, and
// the work grows with the value's depth, not as 2^depth (19 nested arrays took 21 s against
// branchingAnyOf; arguments are what a model sends). Work is counted in allocations: each
// place is validated once, and naming it takes as many allocations as it is deep, so twice
// the depth allocates about four times as much.
func TestBranchingReferencesAreValidatedOncePerPlace(t *testing.T) {
	nest := func(d int, leaf string) any {
		return decode(t, strings.Repeat("[", d)+leaf+strings.Repeat("]", d))
	}
	tests := []struct {
		name, schema, leaf string
		compare            bool // with every way taken, which is feasible at small depths
	}{
		{"anyOf, invalid", branchingAnyOf, `"x"`, true},
		{"allOf, valid", branchingAllOf, `1`, true},
		{"allOf, invalid", branchingAllOf, `"x"`, true},
		// Two ways at each of 256 references deep, whatever the value.
		{"self-reference", selfBranching, `"x"`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Compile(json.RawMessage(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			for d := range 5 {
				if !tc.compare {
					break
				}
				v := nest(d, tc.leaf)
				every := &walker{s: s} // no failures kept: every way taken
				every.validate(s.root, v, nil, 0)
				sortErrors(every.errs)
				if got, want := messages(s.Validate(v)), messages(dedupe(every.errs)); !cmp.Equal(got, want) {
					t.Fatalf("failures at depth %d:\n%q\nwant, as when every way is taken:\n%q", d, got, want)
				}
			}
			work := func(d int) float64 {
				v := nest(d, tc.leaf)
				return testing.AllocsPerRun(1, func() { s.Validate(v) })
			}
			if small, big := work(60), work(120); big > 5*small {
				t.Errorf("%v allocations at depth 120, %v at 60: the work grows faster than the square of the depth", big, small)
			}
		})
	}
}

// TestBranchingReferencesBoundTheFallback: a schema that also uses a keyword left to
// jsonschema-go is checked by it too, and it takes every way (22 nested arrays: 17 s). Past
// maxFallbackWays the call is refused, saying why, instead; below, the fallback still runs and
// still finds what only it checks.
func TestBranchingReferencesBoundTheFallback(t *testing.T) {
	schema := strings.Replace(branchingAllOf, `"n": {`, `"n": {"unevaluatedProperties": false, `, 1)
	s, err := Compile(json.RawMessage(schema))
	if err != nil || !s.fallback {
		t.Fatalf("Compile: %v (fallback %v), want a schema that needs jsonschema-go", err, s.fallback)
	}
	nest := func(d int) any { return decode(t, strings.Repeat("[", d)+"1"+strings.Repeat("]", d)) }
	if got := s.Validate(nest(5)); len(got) != 0 {
		t.Errorf("5 levels: %v, want valid", got)
	}
	got := messages(s.Validate(nest(40)))
	if len(got) != 1 || !strings.Contains(got[0], "more than 65536 ways") {
		t.Errorf("40 levels: %q, want the refusal", got)
	}
	items := `{"$defs": {"item": {"type": "object", "properties": {"a": {}}, "unevaluatedProperties": false}},
		"type": "array", "items": {"$ref": "#/$defs/item"}}`
	long, err := Compile(json.RawMessage(items))
	if err != nil {
		t.Fatal(err)
	}
	if got := long.Validate(decode(t, "["+strings.TrimSuffix(strings.Repeat(`{"a": 1},`, 100_000), ",")+"]")); len(got) != 0 {
		t.Errorf("100,000 items each through a reference, one way each: %v, want valid", got)
	}
	strict, err := Compile(json.RawMessage(`{"type": "object", "properties": {"a": {}}, "unevaluatedProperties": false}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := strict.Validate(decode(t, `{"a": 1, "b": 2}`)); len(got) == 0 {
		t.Error("unevaluatedProperties: false let b through: the fallback did not run")
	}
}
