package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
