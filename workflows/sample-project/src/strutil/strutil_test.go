package strutil

import (
	"slices"
	"testing"
)

func TestCapitalize(t *testing.T) {
	for in, want := range map[string]string{"": "", "ada": "Ada", "élan": "Élan", "Go": "Go"} {
		if got := Capitalize(in); got != want {
			t.Errorf("Capitalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWords(t *testing.T) {
	if got, want := Words("  hello   brave world "), []string{"hello", "brave", "world"}; !slices.Equal(got, want) {
		t.Errorf("Words = %q, want %q", got, want)
	}
}
