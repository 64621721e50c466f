package sample

import "testing"

func TestGreet(t *testing.T) {
	for in, want := range map[string]string{"": "Hello, world!", " ada ": "Hello, ada!"} {
		if got := Greet(in); got != want {
			t.Errorf("Greet(%q) = %q, want %q", in, got, want)
		}
	}
}
