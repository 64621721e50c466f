package localhttp

import "testing"

func TestSameOrigin(t *testing.T) {
	cases := []struct {
		origin, host string
		want         bool
	}{
		{"http://127.0.0.1:8765", "127.0.0.1:8765", true},
		{"http://localhost:8765", "127.0.0.1:8765", true},
		{"http://[::1]:8765", "localhost:8765", true},
		{"http://LOCALHOST:8765", "localhost:8765", true},
		{"http://10.0.0.5:8765", "10.0.0.5:8765", true}, // --allow-remote, reached by its own address
		{"http://127.0.0.1:9999", "127.0.0.1:8765", false},
		{"http://evil.example:8765", "127.0.0.1:8765", false},
		{"http://10.0.0.5:8765", "127.0.0.1:8765", false},
		{"null", "127.0.0.1:8765", false},
		{"file://", "127.0.0.1:8765", false},
		{"chrome-extension://abc", "127.0.0.1:8765", false},
		{"%zz", "127.0.0.1:8765", false},
	}
	for _, c := range cases {
		if got := SameOrigin(c.origin, c.host); got != c.want {
			t.Errorf("SameOrigin(%q, %q) = %v, want %v", c.origin, c.host, got, c.want)
		}
	}
}

func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"127.0.0.1:8765": true, "localhost:8765": true, "LOCALHOST": true, "[::1]:8765": true, "127.9.9.9": true,
		"evil.example:8765": false, "10.0.0.5:8765": false, "": false, "127.0.0.1.evil.example:80": false, "[::ffff:7f00:1]:1": true,
	} {
		if got := LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}
