package shorten

import "testing"

func TestTo(t *testing.T) {
	tests := []struct {
		s    string
		most int
		want string
	}{
		{"short", 10, "short"},
		{"exactly ten", 11, "exactly ten"},
		{"a longer text", 8, "a longer..."},
		{"héllo", 2, "h..."}, // é takes bytes 1 and 2: not cut in half
		{"", 0, ""},
	}
	for _, tc := range tests {
		if got := To(tc.s, tc.most); got != tc.want {
			t.Errorf("To(%q, %d) = %q, want %q", tc.s, tc.most, got, tc.want)
		}
	}
}
