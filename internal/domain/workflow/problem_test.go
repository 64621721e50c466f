package workflow

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestSuggestIsTheNearest compares Suggest with the plain rule it stands for, on random names
// near each other (shared letters, transpositions, other lengths, upper case, non-ASCII): the
// first candidate at the least distance, when that distance is within the limit.
func TestSuggestIsTheNearest(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	letters := []rune("abcdeéABC_-")
	word := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteRune(letters[rng.IntN(len(letters))])
		}
		return b.String()
	}
	for i := range 20_000 {
		got := word(rng.IntN(12))
		candidates := make([]string, rng.IntN(8))
		for j := range candidates {
			candidates[j] = word(rng.IntN(12))
			if r := []rune(got); rng.IntN(3) == 0 && len(r) > 1 { // a near miss: got transposed
				k := rng.IntN(len(r) - 1)
				r[k], r[k+1] = r[k+1], r[k]
				candidates[j] = string(r)
			}
		}
		if s, want := Suggest(got, candidates), plainSuggest(got, candidates); s != want {
			t.Fatalf("case %d: Suggest(%q, %q) = %q, want %q", i, got, candidates, s, want)
		}
	}
}

func TestSuggest(t *testing.T) {
	tests := []struct {
		got        string
		candidates []string
		want       string
	}{
		{"comand", []string{"command", "commands"}, "command"},
		{"Comand", []string{"comand"}, "comand"},
		{"tiemout", []string{"timeout", "time"}, "timeout"},
		{"x", []string{"y", "xy"}, "y"},
		{"shell", []string{"read_file", "write_file"}, ""},
		{"implementation", []string{"implementatoin_step", "implementaton"}, "implementaton"},
		{"naïve", []string{"naive"}, "naive"},
		{"", []string{"a", "bb"}, "a"},
		{"a", nil, ""},
	}
	for _, tc := range tests {
		if got := Suggest(tc.got, tc.candidates); got != tc.want {
			t.Errorf("Suggest(%q, %q) = %q, want %q", tc.got, tc.candidates, got, tc.want)
		}
	}
}

// TestHinterSpendsItsBudget: a hinter compares at most its budget of candidates, and a list
// too long for what is left does not use up the rest.
func TestHinterSpendsItsBudget(t *testing.T) {
	h := &Hinter{left: 5}
	if got := h.DidYouMean("featur", []string{"feature", "a", "b"}); got != `did you mean "feature"?` {
		t.Fatalf("first list: %q", got)
	}
	if got := h.DidYouMean("tset", []string{"test", "b", "c"}); got != "" {
		t.Errorf("a list past the 2 left: %q, want no hint", got)
	}
	if got := h.DidYouMean("tset", []string{"test"}); got != `did you mean "test"?` {
		t.Errorf("a list within the 2 left: %q", got)
	}
	if h.left != 1 {
		t.Errorf("%d left, want 1", h.left)
	}
}

// BenchmarkSuggestManySteps is the case that made validation quadratic: a name that is
// nowhere near any of a long workflow's step names.
func BenchmarkSuggestManySteps(b *testing.B) {
	names := make([]string, 8000)
	for i := range names {
		names[i] = fmt.Sprintf("s%d", i)
	}
	for b.Loop() {
		Suggest("nope4711", names)
	}
}

// plainSuggest is the rule Suggest follows, measured in full on every candidate.
func plainSuggest(got string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := plainDistance(strings.ToLower(got), strings.ToLower(c))
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if limit := max(1, min(3, len(got)/3)); bestD < 0 || bestD > limit {
		return ""
	}
	return best
}

// plainDistance is the optimal string alignment distance, the whole table.
func plainDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
