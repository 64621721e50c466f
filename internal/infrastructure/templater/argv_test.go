package templater

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/ports"
)

// TestCommandArgv: a bound command records each simple command's words with the values in
// place, whatever they hold, and keeps the source of words that are not static.
func TestCommandArgv(t *testing.T) {
	tests := []struct {
		tmpl  string
		scope ports.Scope
		want  [][]string
	}{
		{"go test {{p}} -run {{r}}", ports.Scope{"p": "./...", "r": "Test X; rm -rf /"}, [][]string{{"go", "test", "./...", "-run", "Test X; rm -rf /"}}},
		{"rg '{{x}}' dir && echo \"a {{x}} b\"", ports.Scope{"x": "$(id)"}, [][]string{{"rg", "$(id)", "dir"}, {"echo", "a $(id) b"}}},
		{"echo $HOME {{x}} *.go", ports.Scope{"x": "`id`"}, [][]string{{"echo", "$HOME", "`id`", "*.go"}}},
		{"ls a\\ b", nil, [][]string{{"ls", "a b"}}},
		// A large bound value is recorded by its head and size, never copied whole.
		{"printf '%s' \"{{big}}\"", ports.Scope{"big": strings.Repeat("x", 10<<20)},
			[][]string{{"printf", "%s", strings.Repeat("x", 256) + "... (10485760 bytes)"}}},
		{"echo \"{{e}}\"", ports.Scope{"e": strings.Repeat("é", 600)},
			[][]string{{"echo", strings.Repeat("é", 128) + "... (1200 bytes)"}}},
	}
	for _, tc := range tests {
		b, err := New().Command(tc.tmpl, tc.scope)
		if err != nil {
			t.Fatalf("Command(%q): %v", tc.tmpl, err)
		}
		if diff := cmp.Diff(tc.want, b.Argv); diff != "" {
			t.Errorf("Command(%q).Argv (-want +got):\n%s", tc.tmpl, diff)
		}
	}
}
