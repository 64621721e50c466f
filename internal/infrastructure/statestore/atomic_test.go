package statestore

import "testing"

func TestIsTempOf(t *testing.T) {
	tests := []struct {
		name, target string
		want         bool
	}{
		{".r.yaml.123.tmp", "r.yaml", true},
		{".r.yaml.x.yaml.123.tmp", "r.yaml", false}, // run "r.yaml.x"'s
		{".r.yaml..tmp", "r.yaml", false},
		{".r.yaml.123", "r.yaml", false},
		{"r.yaml.123.tmp", "r.yaml", false},
		{".rr.yaml.1.tmp", "r.yaml", false},
	}
	for _, tc := range tests {
		if got := isTempOf(tc.name, tc.target); got != tc.want {
			t.Errorf("isTempOf(%q, %q) = %v, want %v", tc.name, tc.target, got, tc.want)
		}
	}
}
