package yamlnode

import (
	"testing"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

func TestKind(t *testing.T) {
	tests := []struct {
		src, want string
	}{
		{"a: 1\nb: 2", "a mapping"},
		{"a: 1", "a mapping"},
		{"- x", "a list"},
		{"[x, y]", "a list"},
		{"word", "a string"},
		{`"1"`, "a string"},
		{"|\n  text\n", "a string"},
		{"12", "an integer"},
		{"1.5", "a number"},
		{".inf", "a number"},
		{".nan", "a number"},
		{"true", "a boolean"},
		{"null", "null"},
		{"~", "null"},
		{"!!str 1", "a tag"},
	}
	for _, tc := range tests {
		f, err := parser.ParseBytes([]byte(tc.src), 0)
		if err != nil {
			t.Fatalf("parse %q: %v", tc.src, err)
		}
		if got := Kind(f.Docs[0].Body); got != tc.want {
			t.Errorf("Kind(%q) = %q, want %q", tc.src, got, tc.want)
		}
	}
	if got := Kind(nil); got != "nothing" {
		t.Errorf("Kind(nil) = %q, want %q", got, "nothing")
	}
	var typedNil *ast.SequenceNode
	if got := Kind(typedNil); got != "a list" {
		t.Errorf("Kind(typed nil list) = %q, want %q", got, "a list")
	}
}
