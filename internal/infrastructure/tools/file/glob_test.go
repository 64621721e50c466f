package file

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		pattern string
		name    string
		want    bool
	}{
		{"**", "", true},
		{"**", "a", true},
		{"**", "a/b/c", true},
		{"src/**", "src", true},
		{"src/**", "src/a.go", true},
		{"src/**", "src/a/b/c.go", true},
		{"src/**", "srcx/a.go", false},
		{"src/**", "other/src/a.go", false},
		{"**/*.go", "a.go", true},
		{"**/*.go", "x/y/a.go", true},
		{"**/*.go", "x/y/a.goo", false},
		{"src/*.go", "src/a.go", true},
		{"src/*.go", "src/sub/a.go", false},
		{"src/*", "src/.hidden", true},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/c", false},
		{"a/**/b/**/c", "a/1/b/2/3/c", true},
		{"a/**/b/**/c", "a/1/c/2/3/b", false},
		{"?.txt", "a.txt", true},
		{"?.txt", "ab.txt", false},
		{"[ab].txt", "b.txt", true},
		{"[ab].txt", "c.txt", false},
		{"[!ab].txt", "c.txt", true},
		{"{src,docs}/**", "docs/x.md", true},
		{"{src,docs}/**", "lib/x.md", false},
		{"src/{a,b{1,2}}.go", "src/b2.go", true},
		{"src/{a,b{1,2}}.go", "src/b3.go", false},
		{"src/{,x}a.go", "src/a.go", true},
		{`lit\*.go`, "lit*.go", true},
		{`lit\*.go`, "litx.go", false},
		{`a\{b,c\}`, "a{b,c}", true},
		{"/abs/**", "/abs/x", true},
		{"/abs/**", "/other/x", false},
		{"a/./b", "a/b", true},
		{"a**b", "aXYb", true},
		{"a**b", "aX/Yb", false},
	}
	for _, tc := range tests {
		t.Run(tc.pattern+"~"+tc.name, func(t *testing.T) {
			g, err := compileGlob(tc.pattern, false)
			if err != nil {
				t.Fatalf("compileGlob(%q): %v", tc.pattern, err)
			}
			if got := g.Match(tc.name); got != tc.want {
				t.Errorf("compileGlob(%q).Match(%q) = %v, want %v", tc.pattern, tc.name, got, tc.want)
			}
		})
	}
}

func TestGlobFold(t *testing.T) {
	g, err := compileGlob("/w/**/.env", true)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"/w/.env", "/w/.ENV", "/w/a/B/.Env"} {
		if !g.Match(name) {
			t.Errorf("folded Match(%q) = false, want true", name)
		}
	}
	if g.Match("/w/.envrc") {
		t.Errorf("folded Match(%q) = true, want false", "/w/.envrc")
	}
}

func TestGlobCouldContain(t *testing.T) {
	tests := []struct {
		pattern string
		dir     string
		want    bool
	}{
		{"src/**", "", true},
		{"src/**", "src", true},
		{"src/**", "src/a", true},
		{"src/**", "docs", false},
		{"src/*.go", "src", true},
		{"src/*.go", "src/sub", false},
		{"src/*.go", "", true},
		{"a/b/c", "a", true},
		{"a/b/c", "a/b", true},
		{"a/b/c", "a/b/c", false},
		{"a/b/c", "a/x", false},
		{"**/*.go", "deep/er/still", true},
		{"{src,docs}/x", "docs", true},
		{"{src,docs}/x", "lib", false},
	}
	for _, tc := range tests {
		t.Run(tc.pattern+"~"+tc.dir, func(t *testing.T) {
			g, err := compileGlob(tc.pattern, false)
			if err != nil {
				t.Fatal(err)
			}
			if got := g.CouldContain(tc.dir); got != tc.want {
				t.Errorf("compileGlob(%q).CouldContain(%q) = %v, want %v", tc.pattern, tc.dir, got, tc.want)
			}
		})
	}
}

func TestGlobStaticPrefixes(t *testing.T) {
	tests := []struct {
		pattern string
		want    []string
	}{
		{"/w/src/**", []string{"/w/src"}},
		{"/w/src/*.go", []string{"/w/src"}},
		{"/w/**", []string{"/w"}},
		{"/w/{a,b}/x/**", []string{"/w/a/x", "/w/b/x"}},
		{"/w/a[1]/x", []string{"/w"}},
		{`/w/a\[1\]/x`, []string{"/w/a[1]/x"}},
		{"/w/file.txt", []string{"/w/file.txt"}},
		{"**", []string{"/"}},
	}
	for _, tc := range tests {
		g, err := compileGlob(tc.pattern, false)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, g.StaticPrefixes()); diff != "" {
			t.Errorf("compileGlob(%q).StaticPrefixes() mismatch (-want +got):\n%s", tc.pattern, diff)
		}
	}
}

func TestGlobErrors(t *testing.T) {
	for _, p := range []string{"", "{a,b", "a}", "[a", "a\x00b", "{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"} {
		if _, err := compileGlob(p, false); err == nil {
			t.Errorf("compileGlob(%q) = nil error, want an error", p)
		}
	}
}

func TestEscapeGlob(t *testing.T) {
	dir := "/tmp/a[1]{x,y}*?"
	g, err := compileGlob(escapeGlob(dir)+"/**", false)
	if err != nil {
		t.Fatal(err)
	}
	if !g.Match(dir + "/f") {
		t.Errorf("escaped dir glob does not match %q", dir+"/f")
	}
	if g.Match("/tmp/a1x/f") {
		t.Errorf("escaped dir glob matches %q as a pattern", "/tmp/a1x/f")
	}
	if diff := cmp.Diff([]string{dir}, g.StaticPrefixes()); diff != "" {
		t.Errorf("StaticPrefixes mismatch (-want +got):\n%s", diff)
	}
}

func FuzzGlobMatch(f *testing.F) {
	for _, s := range []string{"**/a/**/b", "{a,b}/*", "a/b"} {
		f.Add(s, "a/x/b")
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		g, err := compileGlob(pattern, false)
		if err != nil {
			return
		}
		m := g.Match(name)
		// A path matching the pattern is below each of its parents' "could contain" answer.
		segs := splitSegments(name)
		if m && len(segs) > 0 {
			parent := ""
			for _, s := range segs[:len(segs)-1] {
				parent += "/" + s
			}
			if !g.CouldContain(parent) {
				t.Errorf("Match(%q, %q) but not CouldContain(%q)", pattern, name, parent)
			}
		}
	})
}

func TestGlobRoots(t *testing.T) {
	tests := []struct {
		pattern string
		want    []string
	}{
		{"/w/src/**", []string{"/w/src"}},
		{"/w/file.txt", []string{"/w"}},
		{"/w/{a.txt,src/**}", []string{"/w", "/w/src"}},
		{"/", []string{"/"}},
	}
	for _, tc := range tests {
		g, err := compileGlob(tc.pattern, false)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, g.Roots()); diff != "" {
			t.Errorf("compileGlob(%q).Roots() mismatch (-want +got):\n%s", tc.pattern, diff)
		}
	}
}
