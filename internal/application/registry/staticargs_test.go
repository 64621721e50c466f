package registry_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/infrastructure/schema"
)

func TestStaticArgs(t *testing.T) {
	params := json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":1},"tags":{"type":"array"},"s":{"type":"string","minLength":3}},"required":["n"],"additionalProperties":false}`)
	tests := []struct {
		name string
		args map[string]string
		want []tool.FieldError
	}{
		{"literals convert", map[string]string{"n": "2", "tags": `["a"]`, "s": "abc"}, nil},
		{"wrong literal", map[string]string{"n": "two"}, []tool.FieldError{{Path: "$.n", Message: "want integer, got string"}}},
		{"constraint on a literal", map[string]string{"n": "0"}, []tool.FieldError{{Path: "$.n", Message: "want >= 1, got 0"}}},
		{"templated values are the run's", map[string]string{"n": "{{ inputs.n }}", "s": "{{ x }}"}, nil},
		{"templated unknown name", map[string]string{"n": "1", "z": "{{ x }}"}, []tool.FieldError{{Path: "$.z", Message: `unknown property (did you mean "n"?)`}}},
		{"missing required", map[string]string{"s": "abcd"}, []tool.FieldError{{Path: "$.n", Message: "is required"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := registry.StaticArgs(schema.New(), params, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b []tool.FieldError) bool { return len(a) == 0 && len(b) == 0 || cmp.Equal(a, b) })); diff != "" {
				t.Errorf("StaticArgs (-want +got):\n%s", diff)
			}
		})
	}
}
