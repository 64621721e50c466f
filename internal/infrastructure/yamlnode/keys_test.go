package yamlnode

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// keys is a block mapping of n keys at column indent, each with the value format gives.
func keys(n, indent int, format string) string {
	var b strings.Builder
	pad := strings.Repeat(" ", indent)
	for i := range n {
		fmt.Fprintf(&b, "%sk%d:"+format+"\n", pad, i)
	}
	return b.String()
}

// quoted puts each key of a keys document between q quotes.
func quoted(doc, q string) string {
	var b strings.Builder
	for line := range strings.Lines(doc) {
		indent := len(line) - len(strings.TrimLeft(line, " "))
		key, rest, _ := strings.Cut(line[indent:], ":")
		b.WriteString(line[:indent] + q + key + q + ":" + rest)
	}
	return b.String()
}

func TestCheckRefusesWideMappings(t *testing.T) {
	over := MaxMappingKeys + 1
	tests := []struct {
		name      string
		doc       string
		line, col int
	}{
		{"top level", keys(over, 0, " v"), over, 1},
		{"nested", "x-a:\n" + keys(over, 2, " v"), over + 1, 3},
		{"values that are lists at the key's column", "m:\n" + keys(over, 2, "\n  - v"), 2 * over, 3},
		{"values that are mappings", keys(over, 0, "\n  a: 1"), 2*over - 1, 1},
		{"after a document marker", "---\n" + keys(over, 0, " v"), over + 1, 1},
		{"double-quoted keys", quoted(keys(over, 0, " v"), `"`), over, 1},
		{"single-quoted keys", "m:\n" + quoted(keys(over, 2, " v"), "'"), over + 1, 3},
		{"explicit keys", strings.Repeat("? k\n: v\n", over), 2*over - 1, 1},
		{"keys with comments and blank lines between", strings.ReplaceAll(keys(over, 0, " v # c"), "\n", "\n\n"), 2*over - 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Check([]byte(tt.doc))
			var le *LimitError
			if !errors.As(err, &le) {
				t.Fatalf("Check = %v, want a *LimitError", err)
			}
			if le.Line != tt.line || le.Column != tt.col {
				t.Errorf("at %d:%d, want %d:%d", le.Line, le.Column, tt.line, tt.col)
			}
			if !strings.Contains(err.Error(), "more than 5000 keys") {
				t.Errorf("message %q does not name the limit", err)
			}
			if err := CheckWritten([]byte(tt.doc)); err != nil {
				t.Errorf("CheckWritten = %v, want nil: files awf writes may be wide", err)
			}
		})
	}
}

func TestCheckAcceptsWhatIsNotOneWideMapping(t *testing.T) {
	for name, doc := range map[string]string{
		"as many keys as allowed":       keys(MaxMappingKeys, 0, " v"),
		"two mappings side by side":     "a:\n" + keys(MaxMappingKeys, 2, " v") + "b:\n" + keys(MaxMappingKeys, 2, " v"),
		"a long list of mappings":       strings.Repeat("- name: s\n  type: shell\n", 3*MaxMappingKeys),
		"a long list of scalars":        strings.Repeat("- v\n", 3*MaxMappingKeys),
		"a long list of quoted scalars": strings.Repeat("- \"v: w\"\n", 3*MaxMappingKeys),
		"quoted values":                 keys(MaxMappingKeys, 0, ` "a: b"`),
		"keys in a block scalar":        "text: |\n" + keys(3*MaxMappingKeys, 2, " v"),
		"documents, each allowed":       strings.Repeat("---\n"+keys(MaxMappingKeys, 0, " v"), 2),
	} {
		t.Run(name, func(t *testing.T) {
			if err := Check([]byte(doc)); err != nil {
				t.Errorf("Check = %v, want nil", err)
			}
		})
	}
}
