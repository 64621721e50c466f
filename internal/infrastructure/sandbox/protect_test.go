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
	for _, f := range []string{".env", ".ENV.local", "a/b/.env", "a/.env.prod", "a/env", "keys/x/id.pem", "keys/id.txt", ".git/config", ".git/x/.env", ".awf/runs/r"} {
		p := filepath.Join(ws, f)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, nil, 0o644))
	}
	pats := []string{ws + "/**/.env", ws + "/**/.env.*", ws + "/.git/config", ws + "/.awf", ws + "/keys/**/*.pem", ws + "/missing"}
	got, truncated := ProtectMatches(pats)
	for i := range got {
		got[i] = strings.TrimPrefix(got[i], ws+"/")
	}
	want := []string{".ENV.local", ".awf", ".env", ".git/config", "a/.env.prod", "a/b/.env", "keys/x/id.pem"}
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
