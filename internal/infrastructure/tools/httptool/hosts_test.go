package httptool

import "testing"

func TestHostPatterns(t *testing.T) {
	tests := []struct {
		pattern    string
		host, port string
		want       bool
	}{
		{"api.example.com", "api.example.com", "443", true},
		{"api.example.com", "api.example.com", "8080", true},
		{"API.Example.COM.", "api.example.com", "443", true},
		{"api.example.com", "example.com", "443", false},
		{"api.example.com", "evilapi.example.com", "443", false},
		{"api.example.com", "api.example.com.evil.net", "443", false},
		{"*.example.com", "a.example.com", "443", true},
		{"*.example.com", "a.b.example.com", "443", true},
		{"*.example.com", "example.com", "443", false},
		{"*.example.com", "evilexample.com", "443", false},
		{"*.example.com", "example.com.evil.net", "443", false},
		{"example.com:8443", "example.com", "8443", true},
		{"example.com:8443", "example.com", "443", false},
		{"*.example.com:443", "x.example.com", "443", true},
		{"*.example.com:443", "x.example.com", "80", false},
		{"10.0.0.5", "10.0.0.5", "80", true},
		{"[::1]:8080", "::1", "8080", true},
		{"[::1]:8080", "::1", "80", false},
		{"[0:0::1]", "::1", "80", true},
		{"*", "anything.at.all", "1", true},
	}
	for _, tc := range tests {
		hp, err := parseHostPattern(tc.pattern)
		if err != nil {
			t.Fatalf("parseHostPattern(%q): %v", tc.pattern, err)
		}
		if got := hp.match(tc.host, tc.port); got != tc.want {
			t.Errorf("parseHostPattern(%q).match(%q, %q) = %v, want %v", tc.pattern, tc.host, tc.port, got, tc.want)
		}
	}
}

func TestHostPatternErrors(t *testing.T) {
	for _, p := range []string{"", "https://example.com", "example.com/path", "a.*.com", "*example.com", "example.com:0", "example.com:http", "user@example.com", "*.", "*.*.com"} {
		if _, err := parseHostPattern(p); err == nil {
			t.Errorf("parseHostPattern(%q) = nil error, want an error", p)
		}
	}
}
