package workflow

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/fault"
)

func TestCoerce(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	tests := []struct {
		name string
		in   Input
		give any
		want any
		err  string
	}{
		{"string", Input{Name: "s"}, "hello", "hello", ""},
		{"string from number", Input{Name: "s", Type: TypeString}, int64(42), "42", ""},
		{"string from float", Input{Name: "s"}, 1.5, "1.5", ""},
		{"string from bool", Input{Name: "s"}, true, "true", ""},
		{"string from list", Input{Name: "s"}, []any{"a"}, nil, `input "s": ["a"] is not a string`},
		{"integer text", Input{Name: "count", Type: TypeInteger}, "42", int64(42), ""},
		{"integer text spaces", Input{Name: "count", Type: TypeInteger}, " -7 ", int64(-7), ""},
		{"integer typed", Input{Name: "count", Type: TypeInteger}, 42, int64(42), ""},
		{"integer whole float", Input{Name: "count", Type: TypeInteger}, 3.0, int64(3), ""},
		{"integer bad", Input{Name: "count", Type: TypeInteger}, "abc", nil, `input "count": "abc" is not an integer`},
		{"integer fraction", Input{Name: "count", Type: TypeInteger}, 2.5, nil, `input "count": 2.5 is not an integer`},
		{"number text", Input{Name: "r", Type: TypeNumber}, "1.5", 1.5, ""},
		{"number int", Input{Name: "r", Type: TypeNumber}, int64(2), 2.0, ""},
		{"number bad", Input{Name: "r", Type: TypeNumber}, "NaN", nil, `input "r": "NaN" is not a number`},
		{"boolean true", Input{Name: "b", Type: TypeBoolean}, "yes", true, ""},
		{"boolean TRUE", Input{Name: "b", Type: TypeBoolean}, "TRUE", true, ""},
		{"boolean 0", Input{Name: "b", Type: TypeBoolean}, "0", false, ""},
		{"boolean off", Input{Name: "b", Type: TypeBoolean}, "off", false, ""},
		{"boolean typed", Input{Name: "b", Type: TypeBoolean}, false, false, ""},
		{"boolean int", Input{Name: "b", Type: TypeBoolean}, int64(1), true, ""},
		{"boolean bad", Input{Name: "b", Type: TypeBoolean}, "maybe", nil, `input "b": "maybe" is not a boolean (use true or false)`},
		{"array json", Input{Name: "a", Type: TypeArray}, `["x", 1]`, []any{"x", 1.0}, ""},
		{"array typed", Input{Name: "a", Type: TypeArray}, []any{"x"}, []any{"x"}, ""},
		{"array strings", Input{Name: "a", Type: TypeArray}, []string{"x"}, []any{"x"}, ""},
		{"array bad json", Input{Name: "a", Type: TypeArray}, `{"k": 1}`, nil, `input "a": "{\"k\": 1}" is not a JSON array such as ["a", "b"]`},
		{"object json", Input{Name: "o", Type: TypeObject}, `{"k": "v"}`, map[string]any{"k": "v"}, ""},
		{"object typed", Input{Name: "o", Type: TypeObject}, map[string]any{"k": 1}, map[string]any{"k": 1}, ""},
		{"object bad", Input{Name: "o", Type: TypeObject}, "null", nil, `input "o": "null" is not a JSON object such as {"key": "value"}`},
		{"nil", Input{Name: "s"}, nil, nil, `input "s": a value is needed`},
		{"enum ok", Input{Name: "e", Enum: []any{"low", "high"}}, "high", "high", ""},
		{"enum bad", Input{Name: "e", Enum: []any{"low", "high"}}, "mid", nil, `input "e": "mid" is not one of "low", "high"`},
		{"enum integer text", Input{Name: "e", Type: TypeInteger, Enum: []any{int64(1), int64(2)}}, "2", int64(2), ""},
		{"pattern ok", Input{Name: "t", Pattern: `^[A-Z]+-\d+$`}, "AWF-12", "AWF-12", ""},
		{"pattern bad", Input{Name: "t", Pattern: `^[A-Z]+-\d+$`}, "awf-12", nil, `input "t": "awf-12" does not match the pattern ^[A-Z]+-\d+$`},
		{"min", Input{Name: "n", Type: TypeInteger, Min: f(1)}, "0", nil, `input "n": 0 is less than the minimum 1`},
		{"max", Input{Name: "n", Type: TypeNumber, Max: f(10)}, "10.5", nil, `input "n": 10.5 is more than the maximum 10`},
		{"in bounds", Input{Name: "n", Type: TypeInteger, Min: f(1), Max: f(10)}, "10", int64(10), ""},
		{"string length", Input{Name: "s", Min: f(3)}, "ab", nil, `input "s": "ab" has length 2, less than the minimum 3`},
		{"array length", Input{Name: "a", Type: TypeArray, Max: f(1)}, `[1, 2]`, nil, `input "a": [1,2] has number of items 2, more than the maximum 1`},
		{"unknown type", Input{Name: "x", Type: "date"}, "2024", nil, `input "x": unknown type "date"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.in.Coerce(tc.give)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("Coerce(%#v) error = %v, want %q", tc.give, err, tc.err)
				}
				if k := fault.KindOf(err); k != fault.Usage {
					t.Errorf("Coerce(%#v) error kind = %v, want usage", tc.give, k)
				}
				return
			}
			if err != nil {
				t.Fatalf("Coerce(%#v) error = %v", tc.give, err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Coerce(%#v) (-want +got):\n%s", tc.give, diff)
			}
		})
	}
}

func TestResolveInputs(t *testing.T) {
	w := &Workflow{Inputs: []Input{
		{Name: "feature", Required: true},
		{Name: "count", Type: TypeInteger, Default: int64(3), HasDefault: true},
		{Name: "verbose", Type: TypeBoolean},
		{Name: "ticket", Required: true, Pattern: `^T-\d+$`},
		{Name: "path", Type: TypeString, Required: true, Implicit: true},
		{Name: "tags", Type: TypeArray},
	}}
	tests := []struct {
		name        string
		given       map[string]any
		wantValues  map[string]any
		wantMissing []string
		wantErr     string
	}{
		{
			name:        "defaults and missing",
			given:       map[string]any{"feature": "login"},
			wantValues:  map[string]any{"feature": "login", "count": int64(3), "verbose": false, "tags": []any{}},
			wantMissing: []string{"ticket", "path"},
		},
		{
			name:       "all given",
			given:      map[string]any{"feature": "x", "count": "7", "verbose": "yes", "ticket": "T-1", "path": ".", "tags": `["a"]`},
			wantValues: map[string]any{"feature": "x", "count": int64(7), "verbose": true, "ticket": "T-1", "path": ".", "tags": []any{"a"}},
		},
		{
			name:        "nil counts as not given",
			given:       map[string]any{"feature": nil, "ticket": "T-2", "path": "."},
			wantValues:  map[string]any{"count": int64(3), "verbose": false, "ticket": "T-2", "path": ".", "tags": []any{}},
			wantMissing: []string{"feature"},
		},
		{
			name:        "every error together",
			given:       map[string]any{"featur": "x", "zzz": 1, "yyy": 2, "count": "many", "ticket": "X-1"},
			wantValues:  map[string]any{"verbose": false, "tags": []any{}},
			wantMissing: []string{"feature", "path"},
			// The declared inputs are listed once, for the first unknown one without a hint.
			wantErr: "unknown input \"featur\" (did you mean \"feature\"?)\n" +
				"unknown input \"yyy\" (the workflow declares feature, count, verbose, ticket, path, tags)\n" +
				"unknown input \"zzz\" (not declared: see above)\n" +
				"input \"count\": \"many\" is not an integer\n" +
				"input \"ticket\": \"X-1\" does not match the pattern ^T-\\d+$",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			values, missing, err := w.ResolveInputs(tc.given)
			if tc.wantErr == "" && err != nil {
				t.Fatalf("ResolveInputs(%v) error = %v", tc.given, err)
			}
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("ResolveInputs(%v) error =\n%v\nwant\n%s", tc.given, err, tc.wantErr)
				}
				if k := fault.KindOf(err); k != fault.Usage {
					t.Errorf("ResolveInputs error kind = %v, want usage", k)
				}
			}
			if diff := cmp.Diff(tc.wantValues, values); diff != "" {
				t.Errorf("ResolveInputs(%v) values (-want +got):\n%s", tc.given, diff)
			}
			if diff := cmp.Diff(tc.wantMissing, missing); diff != "" {
				t.Errorf("ResolveInputs(%v) missing (-want +got):\n%s", tc.given, diff)
			}
		})
	}
}

func TestResolveInputsNoneDeclared(t *testing.T) {
	_, _, err := (&Workflow{}).ResolveInputs(map[string]any{"x": "1"})
	want := `unknown input "x": the workflow declares no inputs`
	if err == nil || err.Error() != want {
		t.Errorf("ResolveInputs = %v, want %q", err, want)
	}
	var fe *fault.Error
	if !errors.As(err, &fe) {
		t.Errorf("ResolveInputs error %T is not a *fault.Error", err)
	}
}
