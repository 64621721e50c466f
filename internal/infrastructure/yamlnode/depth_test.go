package yamlnode

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/goccy/go-yaml"

	"github.com/awf-dev/awf/internal/bom/bomtest"
)

func TestCheckDepthRefusesDeepNesting(t *testing.T) {
	deep := MaxDepth + 1
	tests := []struct {
		name      string
		doc       string
		line, col int
	}{
		{"flow lists", "x: " + strings.Repeat("[", deep) + strings.Repeat("]", deep), 1, 3 + MaxDepth - 1 + 1},
		{"flow maps", "x: " + strings.Repeat("{a: ", deep) + "1" + strings.Repeat("}", deep), 1, 3 + 4*(MaxDepth-1) + 1},
		{"compact block lists", strings.Repeat("- ", deep) + "x", 1, 2*MaxDepth + 1},
		{"flow inside an ignored extension key", "name: w\nx-note: " + strings.Repeat("[", 100000), 2, 0},
		{"after a document marker", "--- " + strings.Repeat("[", deep), 1, 0},
		{"mixed block and flow", "a:\n  - b: " + strings.Repeat("[", MaxDepth), 2, 0},
		{"block mappings by indentation", blockMaps(deep), deep, 0},
		{"tagged flow", "x: !!seq " + strings.Repeat("[", deep), 1, 0},
		{"brackets after a closed quote", `x: "q" ` + strings.Repeat("[", deep), 1, 0},
		{"brackets after a closed single quote in flow", `x: ['q'` + strings.Repeat("[", deep), 1, 0},
		{"multi-line flow", "x: [\n" + strings.Repeat("[\n", deep), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckDepth([]byte(tt.doc))
			var de *LimitError
			if !errors.As(err, &de) {
				t.Fatalf("CheckDepth = %v, want a *LimitError", err)
			}
			if tt.line != 0 && de.Line != tt.line {
				t.Errorf("line = %d, want %d", de.Line, tt.line)
			}
			if tt.col != 0 && de.Column != tt.col {
				t.Errorf("column = %d, want %d", de.Column, tt.col)
			}
			if !strings.Contains(err.Error(), "nested deeper than 256") {
				t.Errorf("message %q does not name the limit", err)
			}
		})
	}
}

func blockMaps(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat(" ", i) + "k:\n")
	}
	return b.String()
}

// Brackets that are text, not structure, do not count.
func TestCheckDepthSkipsText(t *testing.T) {
	many := strings.Repeat("[{", 1000)
	docs := map[string]string{
		"comment":              "a: 1 # " + many,
		"single quoted":        "a: '" + many + "'",
		"double quoted":        `a: "` + many + `\" "`,
		"multi-line quoted":    "a: \"x\n  " + many + "\n  y\"\nb: 1",
		"literal block":        "a: |\n  " + many + "\n  more\nb: [1]",
		"folded block in list": "- >-\n  " + many + "\n- x",
		"block in nested key":  "a:\n  b: |\n    " + many + "\nc: 1",
		"plain scalar":         "a: x" + many,
		"apostrophe in plain":  "a: it's " + many,
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			if err := CheckDepth([]byte(doc)); err != nil {
				t.Fatalf("CheckDepth: %v", err)
			}
		})
	}
}

// Every YAML file in the repository passes: the scanner does not refuse real files.
func TestCheckDepthPassesTheRepositorysYAML(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	n := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if ext := filepath.Ext(p); ext != ".yaml" && ext != ".yml" && ext != ".tool" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		if err := CheckDepth(data); err != nil {
			t.Errorf("%s: %v", p, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 20 {
		t.Fatalf("only %d YAML files found under %s", n, root)
	}
}

// At the limit itself the document is accepted and parses.
func TestCheckDepthAcceptsTheLimit(t *testing.T) {
	doc := "x: " + strings.Repeat("[", MaxDepth-1) + strings.Repeat("]", MaxDepth-1)
	if err := CheckDepth([]byte(doc)); err != nil {
		t.Fatalf("CheckDepth at the limit: %v", err)
	}
	var v any
	if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatalf("the parser refuses what the scanner passed: %v", err)
	}
}

func FuzzCheckDepth(f *testing.F) {
	f.Add([]byte("a:\n  - [1, {b: 'c'}]\n  - |\n    text [\n"))
	f.Add([]byte("--- [\n\"x\n\" ]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = CheckDepth(data) // must not panic
	})
}

func BenchmarkCheckDepth(b *testing.B) {
	data := []byte("name: w\nx-note: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000))
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		_ = CheckDepth(data)
	}
}

func TestCheckRefusesBillionLaughs(t *testing.T) {
	var b strings.Builder
	b.WriteString("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 'b'; i <= 'i'; i++ {
		fmt.Fprintf(&b, "%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	err := Check([]byte(b.String()))
	var le *LimitError
	if !errors.As(err, &le) || !strings.Contains(le.Msg, "aliases expand") {
		t.Fatalf("Check = %v, want an alias limit error", err)
	}
	if le.Line < 5 {
		t.Errorf("line %d: the limit is crossed on a later line", le.Line)
	}
}

func TestCheckAcceptsOrdinaryAnchors(t *testing.T) {
	doc := "defaults: &d {retries: 3, timeout: 10s, env: {A: 1, B: 2}}\n" +
		"steps:\n" + strings.Repeat("  - {name: s, <<: *d}\n", 500)
	if err := Check([]byte(doc)); err != nil {
		t.Fatalf("Check: %v", err)
	}
}

func TestCheckRefusesBytesThatAreNotUTF8(t *testing.T) {
	err := Check([]byte("name: caf\xc3\xa9\nsteps:\n  - name: \"\xe9t\xe9\"\n"))
	var le *LimitError
	if !errors.As(err, &le) || le.Line != 3 || le.Column != 12 || !strings.Contains(le.Msg, "0xe9") {
		t.Fatalf("Check = %v, want line 3, column 12, byte 0xe9", err)
	}
	if err := Check([]byte("name: caf\xc3\xa9 \xf0\x9f\x98\x80\n")); err != nil {
		t.Fatalf("Check of valid UTF-8: %v", err)
	}
}

// CheckFile returns the bytes to parse without the byte order mark a file may start with, and
// finds what is past a limit at the same position with or without it; a UTF-16 file is
// refused at 1:1 naming the file.
func TestCheckFileByteOrderMark(t *testing.T) {
	bomtest.Test(t, []bomtest.Case{
		{Name: "valid", Doc: "name: a\nsteps: []\n"},
		{Name: "not UTF-8 on line 2", Doc: "name: a\nx: caf\xe9\n", Err: "in.yaml:2:7: byte 0xe9 is not UTF-8"},
		{Name: "too deep on line 1", Doc: "x: " + strings.Repeat("[", MaxDepth+1) + "\n", Err: fmt.Sprintf("in.yaml:1:%d: ", 3+MaxDepth)},
	}, func(t *testing.T, data []byte) (string, error) {
		data, err := CheckFile("in.yaml", data)
		return string(data), err
	})
}
