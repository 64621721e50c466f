package file

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadFile(t *testing.T) {
	lines := ""
	for i := 1; i <= 10; i++ {
		lines += fmt.Sprintf("line %d\n", i)
	}
	fx := newFixture(t, map[string]string{
		"src/main.go":  "package main\n",
		"src/ten.txt":  lines,
		"src/nonl.txt": "a\nb",
		"empty.txt":    "",
		"utf8.txt":     "héllo wörld ✓\n",
	})
	read := toolset(t, Policy{WorkDir: fx.work})["read_file"]
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"plain", map[string]any{"path": "src/main.go"}, "package main\n"},
		{"dot dot that stays inside", map[string]any{"path": "./src/../src/main.go"}, "package main\n"},
		{"absolute inside", map[string]any{"path": fx.path("src/main.go")}, "package main\n"},
		{"utf8", map[string]any{"path": "utf8.txt"}, "héllo wörld ✓\n"},
		{"empty", map[string]any{"path": "empty.txt"}, ""},
		{"offset", map[string]any{"path": "src/ten.txt", "offset": 9.0}, "line 9\nline 10\n"},
		{"offset and limit", map[string]any{"path": "src/ten.txt", "offset": 2.0, "limit": 2.0},
			"line 2\nline 3\n[awf: showed lines 2-3; the file continues, continue with offset=4]"},
		{"limit to the end exactly", map[string]any{"path": "src/ten.txt", "offset": 9.0, "limit": 2.0}, "line 9\nline 10\n"},
		{"json number", map[string]any{"path": "src/ten.txt", "offset": json.Number("10")}, "line 10\n"},
		{"last line without newline", map[string]any{"path": "src/nonl.txt", "offset": 2.0}, "b"},
		{"null offset is absent", map[string]any{"path": "src/main.go", "offset": nil}, "package main\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := wantOK(t, call(t, read, tc.args), tc.name)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("read_file(%v) mismatch (-want +got):\n%s", tc.args, diff)
			}
		})
	}
}

func TestReadFileErrors(t *testing.T) {
	fx := newFixture(t, map[string]string{
		"src/main.go":   "package main\n",
		"src/ten.txt":   "1\n2\n3\n",
		"image.png":     "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
		"latin1.txt":    "caf\xe9 au lait\n",
		"README.md":     "# hi\n",
		"docs/guide.md": "guide\n",
	})
	read := toolset(t, Policy{WorkDir: fx.work})["read_file"]
	tests := []struct {
		name      string
		args      map[string]any
		fragments []string
	}{
		{"missing with suggestion", map[string]any{"path": "src/mian.go"}, []string{"read_file: src/mian.go: no such file", "did you mean src/main.go?"}},
		{"missing without suggestion", map[string]any{"path": "src/zzzzzzzz.go"}, []string{"no such file"}},
		{"binary NUL", map[string]any{"path": "image.png"}, []string{"image.png is a binary file (16 bytes)"}},
		{"binary invalid utf8", map[string]any{"path": "latin1.txt"}, []string{"latin1.txt is a binary file"}},
		{"directory", map[string]any{"path": "docs"}, []string{"docs is a directory (use list_dir or glob)"}},
		{"offset past end", map[string]any{"path": "src/ten.txt", "offset": 7.0}, []string{"offset 7 is past the end of the file (3 lines)"}},
		{"missing path", map[string]any{}, []string{`missing required argument "path"`}},
		{"empty path", map[string]any{"path": ""}, []string{"path is empty"}},
		{"path not a string", map[string]any{"path": 3.0}, []string{`argument "path" must be a string, got a number`}},
		{"fractional offset", map[string]any{"path": "README.md", "offset": 1.5}, []string{`argument "offset" must be an integer`}},
		{"negative limit", map[string]any{"path": "README.md", "limit": -1.0}, []string{"must be positive"}},
		{"unknown argument", map[string]any{"path": "README.md", "encoding": "utf8"}, []string{"unknown argument encoding"}},
		{"parent is a file", map[string]any{"path": "README.md/x"}, []string{"not a directory"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, call(t, read, tc.args), tc.name, tc.fragments...)
		})
	}
}

func TestReadFileTruncation(t *testing.T) {
	var b strings.Builder
	for i := 1; i <= 100; i++ {
		fmt.Fprintf(&b, "line %03d\n", i) // 9 bytes a line
	}
	fx := newFixture(t, map[string]string{"big.txt": b.String(), "long.txt": strings.Repeat("é", 100) + "\nnext\n"})
	read := toolset(t, Policy{WorkDir: fx.work, MaxReadBytes: 50})["read_file"]

	r := call(t, read, map[string]any{"path": "big.txt"})
	got := wantOK(t, r, "big")
	want := "line 001\nline 002\nline 003\nline 004\nline 005\n[awf: output truncated at 50 bytes after line 5; continue with offset=6]"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("truncated read mismatch (-want +got):\n%s", diff)
	}
	if !r.Truncated {
		t.Error("Truncated = false, want true")
	}
	// Following the note continues where the output stopped.
	got = wantOK(t, call(t, read, map[string]any{"path": "big.txt", "offset": 6.0, "limit": 1.0}), "continue")
	if !strings.HasPrefix(got, "line 006\n") {
		t.Errorf("continuing at offset 6 gave %q, want line 006 first", got)
	}

	// One line longer than the cap is cut on a rune boundary.
	got = wantOK(t, call(t, read, map[string]any{"path": "long.txt"}), "long")
	head, note, _ := strings.Cut(got, "\n")
	if head != strings.Repeat("é", 25) {
		t.Errorf("long line head = %q, want 25 é (50 bytes, whole runes)", head)
	}
	if note != "[awf: line 1 is longer than 50 bytes and was cut; continue with offset=2]" {
		t.Errorf("long line note = %q", note)
	}
}

func TestLooksBinary(t *testing.T) {
	tests := []struct {
		name  string
		head  []byte
		atEOF bool
		want  bool
	}{
		{"text", []byte("hello\n"), true, false},
		{"nul", []byte("a\x00b"), true, true},
		{"invalid", []byte("caf\xe9!"), true, true},
		{"rune cut by head", []byte("ab\xc3"), false, false},
		{"rune cut by eof", []byte("ab\xc3"), true, true},
		{"empty", nil, true, false},
	}
	for _, tc := range tests {
		if got := looksBinary(tc.head, tc.atEOF); got != tc.want {
			t.Errorf("%s: looksBinary(%q, %v) = %v, want %v", tc.name, tc.head, tc.atEOF, got, tc.want)
		}
	}
}

func TestReadFileMeta(t *testing.T) {
	fx := newFixture(t, nil)
	ts := toolset(t, Policy{WorkDir: fx.work})
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read_file", map[string]any{"path": "./src/../src/main.go"}, "read src/main.go"},
		{"read_file", map[string]any{"path": "a.go", "offset": 10.0, "limit": 50.0}, "read a.go lines 10-59"},
		{"read_file", map[string]any{"path": "a.go", "offset": 10.0}, "read a.go from line 10"},
		{"read_file", map[string]any{"path": fx.path("x/y.go")}, "read x/y.go"},
		{"write_file", map[string]any{"path": "src/a.go", "content": strings.Repeat("x", 120)}, "write 120 bytes to src/a.go"},
		{"write_file", map[string]any{"path": "log.txt", "content": "hi", "append": true}, "append 2 bytes to log.txt"},
		{"list_dir", map[string]any{"path": "src"}, "list src"},
		{"list_dir", map[string]any{}, "list ."},
		{"glob", map[string]any{"pattern": "**/*.go"}, "glob **/*.go in ."},
		{"grep", map[string]any{"pattern": "func main", "path": "src", "glob": "*.go"}, `grep "func main" in src (*.go)`},
		{"read_file", map[string]any{"path": "/etc/passwd"}, "read /etc/passwd"},
	}
	for _, tc := range tests {
		m, ok := ts[tc.tool].(interface{ Meta(map[string]any) string })
		if !ok {
			t.Fatalf("%s has no Meta", tc.tool)
		}
		if got := m.Meta(tc.args); got != tc.want {
			t.Errorf("%s.Meta(%v) = %q, want %q", tc.tool, tc.args, got, tc.want)
		}
	}
}

func TestSchemasAreStrict(t *testing.T) {
	fx := newFixture(t, nil)
	wantParams := map[string][]string{
		"read_file":  {"limit", "offset", "path"},
		"write_file": {"append", "content", "path"},
		"list_dir":   {"path"},
		"glob":       {"path", "pattern"},
		"grep":       {"glob", "path", "pattern"},
	}
	for name, tl := range toolset(t, Policy{WorkDir: fx.work}) {
		var s struct {
			Type                 string                    `json:"type"`
			Properties           map[string]map[string]any `json:"properties"`
			Required             []string                  `json:"required"`
			AdditionalProperties *bool                     `json:"additionalProperties"`
		}
		if err := json.Unmarshal(tl.Parameters(), &s); err != nil {
			t.Fatalf("%s: schema is not JSON: %v", name, err)
		}
		if s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties {
			t.Errorf("%s: schema type %q additionalProperties %v, want object and false", name, s.Type, s.AdditionalProperties)
		}
		var got []string
		for p, spec := range s.Properties {
			got = append(got, p)
			if d, _ := spec["description"].(string); d == "" {
				t.Errorf("%s: property %s has no description", name, p)
			}
		}
		if diff := cmp.Diff(wantParams[name], got, cmpSorted); diff != "" {
			t.Errorf("%s: parameters mismatch (-want +got):\n%s", name, diff)
		}
		if len(s.Required) == 0 {
			t.Errorf("%s: no required parameters", name)
		}
		if d := tl.Description(toolContext(fx.work)); !strings.Contains(d, fx.work) {
			t.Errorf("%s: description %q does not name the working directory", name, d)
		}
	}
}

func TestFileMode(t *testing.T) {
	// os.WriteFile in the fixture honours the umask; make sure a created file is readable.
	fx := newFixture(t, nil)
	wantOK(t, call(t, toolset(t, Policy{WorkDir: fx.work})["write_file"], map[string]any{"path": "n.txt", "content": "x"}), "write")
	fi, err := os.Stat(fx.path("n.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o600 != 0o600 {
		t.Errorf("new file mode %v, want owner read and write", fi.Mode())
	}
}
