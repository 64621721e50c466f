package loader

import (
	"math"
	"testing"
)

// structuredInput: JSON without templates; one expression building the same value with them;
// strings quoted as expr reads them; mixed text and templates, template keys and values JSON
// cannot hold are errors.
func TestStructuredInput(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want string
		err  bool
	}{
		{[]any{"a", int64(1), true, nil, 2.5}, `["a",1,true,null,2.5]`, false},
		{map[string]any{"b": []any{}, "a": map[string]any{"x": "<&>"}}, `{"a":{"x":"<&>"},"b":[]}`, false},
		{[]any{"{{ inputs.x }}", "it's \"q\"\n"}, `{{ [(inputs.x), "it's \"q\"\n"] }}`, false},
		{map[string]any{"k": "{{.inputs.depth}}", "n": int64(-3)}, `{{ {"k": (inputs.depth), "n": -3} }}`, false},
		{[]any{"x {{ a }}"}, "", true},
		{[]any{"{{ a }} {{ b }}"}, "", true},
		{map[string]any{"{{ k }}": "{{ v }}"}, "", true},
		{[]any{math.Inf(1)}, "", true},
	} {
		got, err := structuredInput(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("structuredInput(%#v) = %q, %v; want %q (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}
