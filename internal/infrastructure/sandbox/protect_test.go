package sandbox

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestProtectMatches(t *testing.T) {
	ws := t.TempDir()
	for _, f := range []string{".env", ".ENV.local", "a/b/.env", "a/.env.prod", "a/env", "keys/x/id.pem", "keys/id.txt", ".git/config", ".git/x/.env", ".awf/runs/r",
		"vendor/lib/.git/hooks/post-merge", "vendor/lib/.git/config", "vendor/lib/.git/objects/x", ".git/modules/sub/hooks/pre-commit", ".git/modules/sub/config"} {
		p := filepath.Join(ws, f)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, nil, 0o644))
	}
	pats := []string{ws + "/keys/**/*.pem", ws + "/missing"}
	for _, p := range DefaultProtect {
		pats = append(pats, filepath.Join(ws, p))
	}
	got, truncated := ProtectMatches(pats)
	for i := range got {
		got[i] = strings.TrimPrefix(got[i], ws+"/")
	}
	want := []string{".ENV.local", ".awf", ".env", ".git/config", ".git/modules/sub/config", ".git/modules/sub/hooks",
		"a/.env.prod", "a/b/.env", "keys/x/id.pem", "vendor/lib/.git/config", "vendor/lib/.git/hooks"}
	if diff := cmp.Diff(want, got); diff != "" || truncated {
		t.Errorf("protectMatches (-want +got), truncated %v:\n%s", truncated, diff)
	}
}

// TestProtectIndexSkipsHiddenDirectories: a directory a static pattern hides whole (.awf,
// where awf's state changes at every step) is not walked for the other patterns: nothing in
// it can be reached, and reading it again at every call would cost as much as it holds.
func TestProtectIndexSkipsHiddenDirectories(t *testing.T) {
	ws := t.TempDir()
	for _, f := range []string{".awf/runs/r.yaml", ".awf/runs/sub/.env", "a/.env"} {
		p := filepath.Join(ws, f)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, nil, 0o644))
	}
	var pats []string
	for _, p := range DefaultProtect {
		pats = append(pats, filepath.Join(ws, p))
	}
	idx := new(ProtectIndex)
	got, _ := idx.Matches(ws, pats)
	if want := []string{filepath.Join(ws, ".awf"), filepath.Join(ws, "a/.env")}; !slices.Equal(got, want) {
		t.Errorf("Matches = %v, want %v", got, want)
	}
	if idx.reads != 2 { // ws and a
		t.Errorf("the walk read %d directories, want 2: not .awf nor beneath it", idx.reads)
	}
}

func TestMatchSegments(t *testing.T) {
	for _, tc := range []struct {
		pat, path string
		want      bool
	}{
		{"/w/**/.env", "/w/.env", true},
		{"/w/**/.env", "/w/a/b/.env", true},
		{"/w/**/.env", "/w/a/.envx", false},
		{"/w/src/**", "/w/src", true},
		{"/w/src/**", "/w/src/a/b", true},
		{"/w/src/**", "/w/srcx", false},
		{"/w/**/*.pem", "/w/k.pem", true},
		{"/w/[", "/w/[", false}, // a bad pattern matches nothing
	} {
		if got := matchSegments(splitPath(tc.pat), splitPath(tc.path)); got != tc.want {
			t.Errorf("matchSegments(%q, %q) = %v, want %v", tc.pat, tc.path, got, tc.want)
		}
	}
	if got := caseFold("/w/.env[.]x"); got != "/[wW]/.[eE][nN][vV][.][xX]" {
		t.Errorf("caseFold = %q", got)
	}
}

// BenchmarkProtectMatches measures the walk for the default protected patterns over Go's
// own source tree (about 13000 entries), as a workspace of that size costs every tool call.
func BenchmarkProtectMatches(b *testing.B) {
	ws := "/usr/local/go/src"
	if _, err := os.Stat(ws); err != nil {
		b.Skip("needs a Go source tree at " + ws)
	}
	var pats []string
	for _, p := range DefaultProtect {
		pats = append(pats, filepath.Join(ws, p))
	}
	for b.Loop() {
		ProtectMatches(pats)
	}
}

// BenchmarkProtectIndex is BenchmarkProtectMatches through one index, as the calls of a run
// walk the workspace: unchanged directories are checked (lstat), not read.
func BenchmarkProtectIndex(b *testing.B) {
	ws := "/usr/local/go/src"
	if _, err := os.Stat(ws); err != nil {
		b.Skip("needs a Go source tree at " + ws)
	}
	var pats []string
	for _, p := range DefaultProtect {
		pats = append(pats, filepath.Join(ws, p))
	}
	var idx ProtectIndex
	idx.Matches(ws, pats)
	for b.Loop() {
		idx.Matches(ws, pats)
	}
}

// BenchmarkResolveExec measures the resolution of an exec allowlist of git, make and ls.
func BenchmarkResolveExec(b *testing.B) {
	s := &Spec{Commands: []string{"git", "make", "ls"}, Write: []string{b.TempDir()}}
	for b.Loop() {
		ResolveExec(s, "/usr/local/bin:/usr/bin:/bin")
	}
}

func TestSafeGitConfig(t *testing.T) {
	in := `[core]
	repositoryformatversion = 1
	bare = false
	hooksPath = /tmp/evil
	fsmonitor = /tmp/evil
	pager = sh -c evil
[extensions]
	objectFormat = sha256
	refStorage = reftable
[remote "origin"]
	url = https://u:token@example.com/r.git
[include]
	path = /tmp/evil.cfg
[credential]
	helper = store
[core] # trailing
	sshCommand = evil
`
	want := "[core]\n\trepositoryformatversion = 1\n\tbare = false\n[extensions]\n\tobjectformat = sha256\n\trefstorage = reftable\n"
	if got := string(safeGitConfig([]byte(in))); got != want {
		t.Errorf("safeGitConfig =\n%s\nwant\n%s", got, want)
	}
}

// TestProtectIndexFindsLaterFiles walks a workspace again and again with one index, as a run's
// calls do: whatever an earlier call created (a .env deep in new directories, in an old
// directory whose timestamps it then set back, in place of a directory it moved away) is
// found by the next walk, what was removed is no longer reported, and directories that did
// not change are not read again.
func TestProtectIndexFindsLaterFiles(t *testing.T) {
	for _, statOnly := range []bool{true, false} {
		t.Run(map[bool]string{true: "lstat", false: "watched"}[statOnly], func(t *testing.T) {
			testProtectIndexFindsLaterFiles(t, statOnly)
		})
	}
}

func testProtectIndexFindsLaterFiles(t *testing.T, statOnly bool) {
	ws := t.TempDir()
	write := func(rel string) {
		t.Helper()
		p := filepath.Join(ws, rel)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, nil, 0o644))
	}
	pats := []string{filepath.Join(ws, "**/.env")}
	// Directories made by the test are seconds old for the index: their records are
	// trusted (a just-changed directory is always read again).
	idx := ProtectIndex{now: func() time.Time { return time.Now().Add(2 * racyWindow) }, statOnly: statOnly, eager: !statOnly}
	defer idx.Close()
	check := func(reads int, want ...string) {
		t.Helper()
		before := idx.reads
		got, truncated := idx.Matches(ws, pats)
		for i := range got {
			got[i] = strings.TrimPrefix(got[i], ws+"/")
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" || truncated {
			t.Errorf("Matches (-want +got), truncated %v:\n%s", truncated, diff)
		}
		if idx.reads-before != reads {
			t.Errorf("the walk read %d directories, want %d", idx.reads-before, reads)
		}
	}
	write("src/a/b/main.go")
	write("src/a/c/x.go")
	check(5) // ws, src, a, b, c
	stats, skips := idx.stats, idx.skips
	check(0)
	if n := idx.stats - stats; !statOnly && n != 0 {
		t.Errorf("a walk of unchanged watched directories made %d lstat calls, want none", n)
	}
	if !statOnly && idx.skips == skips {
		t.Error("nothing changed in a watched workspace, and it was walked again")
	}

	write("new/deep/er/.env") // a new directory tree
	check(4, "new/deep/er/.env")

	write("src/a/b/.env") // in an old directory, whose timestamps are then set back
	old := time.Now().Add(-time.Hour)
	must(t, os.Chtimes(filepath.Join(ws, "src/a/b"), old, old))
	check(1, "new/deep/er/.env", "src/a/b/.env")

	// A directory moved away and another put in its place; a tree removed.
	must(t, os.Rename(filepath.Join(ws, "src/a/c"), filepath.Join(ws, "moved")))
	write("src/a/c/.env")
	must(t, os.RemoveAll(filepath.Join(ws, "new")))
	check(4, "src/a/b/.env", "src/a/c/.env") // ws, a, the new c, moved
}

// TestProtectMatchesThroughLinkedRoot: a working directory reached through a symbolic link is
// walked (the links beneath it are not followed).
func TestProtectMatchesThroughLinkedRoot(t *testing.T) {
	real, base := t.TempDir(), t.TempDir()
	must(t, os.MkdirAll(filepath.Join(real, "a/b"), 0o755))
	must(t, os.WriteFile(filepath.Join(real, "a/b/.env"), nil, 0o644))
	must(t, os.Symlink(real, filepath.Join(base, "out")))
	must(t, os.Symlink(filepath.Join(base, "out"), filepath.Join(real, "a/loop")))
	ws := filepath.Join(base, "out")
	got, _ := ProtectMatches([]string{filepath.Join(ws, "**/.env")})
	if want := []string{filepath.Join(ws, "a/b/.env")}; !slices.Equal(got, want) {
		t.Errorf("matches = %q, want %q", got, want)
	}
}

// TestProtectIndexRacyDirectory: a directory changed less than racyWindow before it was read
// is read again by the next walk, even unchanged, since a change in the same clock tick
// would leave its timestamps as they were.
func TestProtectIndexRacyDirectory(t *testing.T) {
	ws := t.TempDir()
	idx := ProtectIndex{statOnly: true} // a watched directory is read again on an event only
	pats := []string{filepath.Join(ws, "**/.env")}
	idx.Matches(ws, pats)
	before := idx.reads
	idx.Matches(ws, pats)
	if idx.reads == before {
		t.Error("a directory created just now was trusted without being read again")
	}
}

// TestPatternIndexMatchesAsEveryPattern compares the index with trying every pattern, on
// random patterns (literal, glob and ** segments, backslashes, upper case) and paths built
// from the same segments.
func TestPatternIndexMatchesAsEveryPattern(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	segs := []string{"a", "B", "src", ".git", "x?", "*.go", "[ab]", "**", `q\*`, "q*", `b\c`, "bc", "main.go", "hooks", "A", "Été", "été"}
	pick := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = segs[rng.IntN(len(segs))]
		}
		return out
	}
	for round := range 2000 {
		var pats [][]string
		for range rng.IntN(6) {
			pats = append(pats, splitPath(strings.ToLower("/"+strings.Join(pick(1+rng.IntN(4)), "/"))))
		}
		x := indexPatterns(pats)
		var buf []byte // reused across paths, as a walk does
		for range 20 {
			p := "/" + strings.Join(pick(rng.IntN(5)), "/")
			if got, want := x.matchAny(p, &buf), everyPattern(pats, p); got != want {
				t.Fatalf("round %d: %q against %q: index %v, every pattern %v", round, p, pats, got, want)
			}
		}
	}
}

// everyPattern is what patternIndex.matchAny stands for: p tried against every pattern.
func everyPattern(pats [][]string, p string) bool {
	return slices.ContainsFunc(pats, func(pat []string) bool {
		return matchSegments(pat, splitPath(strings.ToLower(p)))
	})
}

// TestRootSetCoversAsWithin compares rootSet.covers with trying within against every root.
func TestRootSetCoversAsWithin(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	parts := []string{"", "a", "ab", "a-b", "b", "/", "a/b", "c"}
	path := func() string {
		var b strings.Builder
		for range rng.IntN(4) {
			b.WriteString("/" + parts[rng.IntN(len(parts))])
		}
		if b.Len() == 0 || rng.IntN(8) == 0 {
			return strings.TrimPrefix(b.String(), "/") // relative, or empty, too
		}
		return b.String()
	}
	for round := range 5000 {
		var roots []string
		for range rng.IntN(5) {
			roots = append(roots, path())
		}
		p := path()
		want := slices.ContainsFunc(roots, func(r string) bool { return within(p, r) })
		if got := rootsOf(roots).covers(p); got != want {
			t.Fatalf("round %d: %q within %q: set %v, every root %v", round, p, roots, got, want)
		}
	}
}
