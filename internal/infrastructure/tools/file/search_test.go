package file

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func searchFixture(t *testing.T) *fixture {
	t.Helper()
	fx := newFixture(t, map[string]string{
		"go.mod":            "module x\n",
		"main.go":           "package main\n\nfunc main() {}\n",
		"src/a.go":          "package src\n\n// TODO: fix\nfunc A() {}\n",
		"src/sub/b.go":      "package sub\n\nfunc B() {} // TODO: later\n",
		"src/sub/c.txt":     "todo lower\n",
		"docs/guide.md":     "# Guide\nTODO: write\n",
		"bin/tool":          "\x7fELF\x00\x00TODO",
		".git/HEAD":         "ref: TODO\n",
		".git/config":       "[core] TODO\n",
		".env":              "SECRET=TODO\n",
		"node/.awf/x.yaml":  "TODO\n",
		"weird name [1].go": "package w // TODO\n",
	})
	symlink(t, "src/a.go", fx.path("link.go"))
	return fx
}

func TestListDir(t *testing.T) {
	fx := searchFixture(t)
	ts := toolset(t, Policy{WorkDir: fx.work})
	tests := []struct {
		path string
		want string
	}{
		{".", ".env  12 B\n.git/\nbin/\ndocs/\ngo.mod  9 B\nlink.go -> src/a.go\nmain.go  29 B\nnode/\nsrc/\nweird name [1].go  18 B\n"},
		{"src", "a.go  38 B\nsub/\n"},
		{"./src/../src/sub", "b.go  40 B\nc.txt  11 B\n"},
		{fx.path("docs"), "guide.md  20 B\n"},
	}
	for _, tc := range tests {
		got := wantOK(t, call(t, ts["list_dir"], map[string]any{"path": tc.path}), "list "+tc.path)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("list_dir(%q) mismatch (-want +got):\n%s", tc.path, diff)
		}
	}
	mkdir(t, fx.path("emptydir"))
	if got := wantOK(t, call(t, ts["list_dir"], map[string]any{"path": "emptydir"}), "empty"); got != "(empty directory)\n" {
		t.Errorf("list_dir(emptydir) = %q", got)
	}
	wantError(t, call(t, ts["list_dir"], map[string]any{"path": "main.go"}), "list a file", "main.go is not a directory")
	wantError(t, call(t, ts["list_dir"], map[string]any{"path": "nope"}), "list missing", "no such file")

	// With narrow read globs, only the way to allowed paths shows.
	narrow := toolset(t, Policy{WorkDir: fx.work, Read: []string{"src/sub/*.go", "docs/**"}})
	got := wantOK(t, call(t, narrow["list_dir"], map[string]any{"path": "."}), "narrow root")
	if diff := cmp.Diff("docs/\nsrc/\n", got); diff != "" {
		t.Errorf("narrow list_dir(.) mismatch (-want +got):\n%s", diff)
	}
	got = wantOK(t, call(t, narrow["list_dir"], map[string]any{"path": "src/sub"}), "narrow sub")
	if diff := cmp.Diff("b.go  40 B\n", got); diff != "" {
		t.Errorf("narrow list_dir(src/sub) mismatch (-want +got):\n%s", diff)
	}
	wantError(t, call(t, narrow["list_dir"], map[string]any{"path": "bin"}), "narrow bin", "outside the allowed read paths")
}

func TestListDirCap(t *testing.T) {
	fx := newFixture(t, nil)
	for i := range MaxListEntries + 5 {
		writeFile(t, fx.path(fmt.Sprintf("many/f%04d", i)), "")
	}
	r := call(t, toolset(t, Policy{WorkDir: fx.work})["list_dir"], map[string]any{"path": "many"})
	out := wantOK(t, r, "many")
	if n := strings.Count(out, "\n"); n != MaxListEntries+1 {
		t.Errorf("list_dir returned %d lines, want %d entries and a note", n, MaxListEntries+1)
	}
	if !r.Truncated || !strings.Contains(out, "[awf: listing stopped at 1000 of 1005 entries") {
		t.Errorf("cap note missing (truncated %v): %q", r.Truncated, out[len(out)-100:])
	}
}

func TestGlobTool(t *testing.T) {
	fx := searchFixture(t)
	ts := toolset(t, Policy{WorkDir: fx.work})
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"pattern": "**/*.go"}, "link.go\nmain.go\nsrc/a.go\nsrc/sub/b.go\nweird name [1].go\n"},
		{map[string]any{"pattern": "*.go", "path": "src"}, "src/a.go\n"},
		{map[string]any{"pattern": "**/*.{md,txt}"}, "docs/guide.md\nsrc/sub/c.txt\n"},
		{map[string]any{"pattern": "src/*"}, "src/a.go\nsrc/sub/\n"},
		{map[string]any{"pattern": "**/HEAD"}, "no paths match \"**/HEAD\" in .\n"},
		{map[string]any{"pattern": "**/x.yaml"}, "no paths match \"**/x.yaml\" in .\n"},
		{map[string]any{"pattern": "**/*.go", "path": "./src/../src/sub"}, "src/sub/b.go\n"},
	}
	for _, tc := range tests {
		got := wantOK(t, call(t, ts["glob"], tc.args), fmt.Sprint(tc.args))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("glob(%v) mismatch (-want +got):\n%s", tc.args, diff)
		}
	}
	for _, bad := range []map[string]any{
		{"pattern": "../*"},
		{"pattern": "/etc/*"},
		{"pattern": "[a"},
		{"pattern": "*", "path": "../outside"},
		{"pattern": "*", "path": "main.go"},
	} {
		wantError(t, call(t, ts["glob"], bad), fmt.Sprint(bad))
	}
}

func TestGlobCap(t *testing.T) {
	fx := newFixture(t, nil)
	for i := range MaxListEntries + 1 {
		writeFile(t, fx.path(fmt.Sprintf("d%d/f%04d.txt", i%3, i)), "")
	}
	r := call(t, toolset(t, Policy{WorkDir: fx.work})["glob"], map[string]any{"pattern": "**/*.txt"})
	out := wantOK(t, r, "cap")
	if n := strings.Count(out, "\n"); n != MaxListEntries+1 || !r.Truncated {
		t.Errorf("glob returned %d lines (truncated %v), want %d paths and a note", n, r.Truncated, MaxListEntries)
	}
}

func TestGrep(t *testing.T) {
	fx := searchFixture(t)
	ts := toolset(t, Policy{WorkDir: fx.work})
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"pattern": "TODO"}, "docs/guide.md:2: TODO: write\nsrc/a.go:3: // TODO: fix\nsrc/sub/b.go:3: func B() {} // TODO: later\nweird name [1].go:1: package w // TODO\n"},
		{map[string]any{"pattern": "(?i)todo", "path": "src"}, "src/a.go:3: // TODO: fix\nsrc/sub/b.go:3: func B() {} // TODO: later\nsrc/sub/c.txt:1: todo lower\n"},
		{map[string]any{"pattern": "TODO", "glob": "*.go"}, "src/a.go:3: // TODO: fix\nsrc/sub/b.go:3: func B() {} // TODO: later\nweird name [1].go:1: package w // TODO\n"},
		{map[string]any{"pattern": "TODO", "glob": "src/sub/*"}, "src/sub/b.go:3: func B() {} // TODO: later\n"},
		{map[string]any{"pattern": "TODO", "path": "src", "glob": "src/sub/*"}, "no matches for \"TODO\"\n"},
		{map[string]any{"pattern": "TODO", "path": "src", "glob": "sub/*"}, "src/sub/b.go:3: func B() {} // TODO: later\n"},
		{map[string]any{"pattern": "^func", "path": "src/sub/b.go"}, "src/sub/b.go:3: func B() {} // TODO: later\n"},
		{map[string]any{"pattern": "nothing-matches-this"}, "no matches for \"nothing-matches-this\"\n[awf: skipped 1 binary files]\n"},
		{map[string]any{"pattern": "ELF", "path": "bin"}, "no matches for \"ELF\"\n[awf: skipped 1 binary files]\n"},
	}
	for _, tc := range tests {
		got := wantOK(t, call(t, ts["grep"], tc.args), fmt.Sprint(tc.args))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("grep(%v) mismatch (-want +got):\n%s", tc.args, diff)
		}
	}
	wantError(t, call(t, ts["grep"], map[string]any{"pattern": "("}), "bad regexp", "bad pattern")
	wantError(t, call(t, ts["grep"], map[string]any{"pattern": "x", "path": ".env"}), "grep protected file", "protected")
	wantError(t, call(t, ts["grep"], map[string]any{"pattern": "x", "path": "/etc/passwd"}), "grep outside", "outside the allowed read paths")
}

func TestGrepCaps(t *testing.T) {
	fx := newFixture(t, nil)
	var b strings.Builder
	for range MaxGrepMatches + 10 {
		b.WriteString("match " + strings.Repeat("x", 500) + "\n")
	}
	writeFile(t, fx.path("many.txt"), b.String())
	r := call(t, toolset(t, Policy{WorkDir: fx.work})["grep"], map[string]any{"pattern": "match"})
	out := wantOK(t, r, "caps")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != MaxGrepMatches+1 {
		t.Fatalf("grep returned %d lines, want %d matches and a note", len(lines), MaxGrepMatches)
	}
	if want := "many.txt:1: match " + strings.Repeat("x", MaxGrepLineBytes-6) + "…"; lines[0] != want {
		t.Errorf("first line = %q, want it cut at %d bytes", lines[0], MaxGrepLineBytes)
	}
	if !r.Truncated || !strings.HasPrefix(lines[len(lines)-1], "[awf: stopped at 200 matches") {
		t.Errorf("cap note missing (truncated %v): %q", r.Truncated, lines[len(lines)-1])
	}
}

func TestGrepCanceled(t *testing.T) {
	fx := searchFixture(t)
	g, err := NewGrep(Policy{WorkDir: fx.work})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := contextWithCancel(t)
	cancel()
	wantError(t, g.Execute(ctx, invocation(map[string]any{"pattern": "TODO"})), "canceled", "canceled")
}

// TestWalksStayInRoot checks that glob and grep over a tree full of links never name a path
// outside the working directory or inside .git.
func TestWalksStayInRoot(t *testing.T) {
	fx := searchFixture(t)
	symlink(t, fx.outside, fx.path("src/out-dir"))
	symlink(t, "../..", fx.path("src/sub/up"))
	symlink(t, "/", fx.path("rootlink"))
	ts := toolset(t, Policy{WorkDir: fx.work})
	glob := wantOK(t, call(t, ts["glob"], map[string]any{"pattern": "**"}), "glob all")
	grep := wantOK(t, call(t, ts["grep"], map[string]any{"pattern": "."}), "grep all")
	for _, out := range []string{glob, grep} {
		for line := range strings.Lines(out) {
			p, _, _ := strings.Cut(strings.TrimSpace(line), ":")
			if strings.HasPrefix(p, "[awf:") {
				continue
			}
			if strings.HasPrefix(p, "/") || strings.HasPrefix(p, "..") || strings.Contains(p, ".git/") || strings.Contains(p, "TOP-SECRET") {
				t.Errorf("walk output leaves the root: %q", line)
			}
			if _, err := os.Lstat(fx.path(strings.TrimSuffix(p, "/"))); err != nil {
				t.Errorf("walk output names %q, which is not in the working directory: %v", p, err)
			}
		}
	}
	if strings.Contains(grep, "SECRET=") || strings.Contains(glob, ".env") {
		t.Errorf("protected content or names in walk output")
	}
}
