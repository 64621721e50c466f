package pathglob

import (
	"math/rand/v2"
	"path"
	"strings"
	"testing"
)

func isAny(s string) bool { return s == Any }

func matchOne(p, s string) bool {
	ok, err := path.Match(p, s)
	return err == nil && ok
}

func match(pat, p string) bool {
	return Match(strings.Split(pat, "/"), strings.Split(p, "/"), isAny, matchOne)
}

func TestMatch(t *testing.T) {
	tests := []struct {
		pat, path string
		want      bool
	}{
		{"a/b", "a/b", true},
		{"a/b", "a/c", false},
		{"a/*", "a/b", true},
		{"a/*", "a/b/c", false},
		{"**", "a/b/c", true},
		{"**/.env", ".env", true},
		{"**/.env", "x/y/.env", true},
		{"**/.env", "x/y/.env/z", false},
		{"a/**", "a", true},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/c", false},
		{"**/a/**/b", "x/a/y/z/b", true},
		{"**/a/**/b", "x/b/y/z/a", false},
	}
	for _, tc := range tests {
		if got := match(tc.pat, tc.path); got != tc.want {
			t.Errorf("Match(%q, %q) = %v, want %v", tc.pat, tc.path, got, tc.want)
		}
	}
}

// TestMatchIsTheBacktrackingMatch: on random patterns and paths over a small alphabet, Match
// answers as the plain recursive definition does.
func TestMatchIsTheBacktrackingMatch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"a", "b", "*", "?", "**", "[ab]"}
	names := []string{"a", "b", "ab", "c"}
	pick := func(from []string, n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = from[r.IntN(len(from))]
		}
		return out
	}
	for range 20_000 {
		pat, segs := pick(words, r.IntN(6)), pick(names, r.IntN(70)) // past the 64 that need no allocation
		if got, want := Match(pat, segs, isAny, matchOne), backtrack(pat, segs); got != want {
			t.Fatalf("Match(%q, %q) = %v, the recursive definition says %v", pat, segs, got, want)
		}
	}
}

// backtrack is the definition: "**" takes any number of segments, others one each.
func backtrack(pat, segs []string) bool {
	if len(pat) == 0 {
		return len(segs) == 0
	}
	if pat[0] == Any {
		for i := 0; i <= len(segs); i++ {
			if backtrack(pat[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	return len(segs) > 0 && matchOne(pat[0], segs[0]) && backtrack(pat[1:], segs[1:])
}

// TestManyDoubleStarsCostLittle: twelve "**" against a path 200 segments deep that does not
// match, which a backtracking match would not finish, take as many comparisons as their
// product.
func TestManyDoubleStarsCostLittle(t *testing.T) {
	pat := strings.Split(strings.Repeat("**/a/", 12)+"**/b/x", "/")
	segs := strings.Split(strings.Repeat("a/", 200)+"x", "/")
	calls := 0
	count := func(p, s string) bool { calls++; return matchOne(p, s) }
	if Match(pat, segs, isAny, count) {
		t.Fatal("matched")
	}
	if limit := len(pat) * len(segs); calls > limit {
		t.Errorf("%d comparisons, want at most %d (the pattern's segments times the path's)", calls, limit)
	}
}

func BenchmarkMatch(b *testing.B) {
	pat := strings.Split("**/node_modules/**/.env", "/")
	segs := strings.Split("home/user/project/node_modules/pkg/lib/.env", "/")
	for b.Loop() {
		if !Match(pat, segs, isAny, matchOne) {
			b.Fatal("no match")
		}
	}
}
