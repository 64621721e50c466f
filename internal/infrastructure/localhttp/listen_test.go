package localhttp

import (
	"testing"

	"github.com/awf-dev/awf/internal/domain/fault"
)

func TestListenAddr(t *testing.T) {
	tests := []struct {
		addr   string
		remote bool
		want   string
		ok     bool
	}{
		{"8080", false, "127.0.0.1:8080", true},
		{":8080", false, "127.0.0.1:8080", true},
		{"127.0.0.1:0", false, "127.0.0.1:0", true},
		{"127.0.0.9:7000", false, "127.0.0.9:7000", true},
		{"localhost:7000", false, "localhost:7000", true},
		{"[::1]:7000", false, "[::1]:7000", true},
		{"[::ffff:127.0.0.1]:7000", false, "[::ffff:127.0.0.1]:7000", true},
		{"0.0.0.0:7000", false, "", false},
		{"[::]:7000", false, "", false},
		{"192.168.1.5:7000", false, "", false},
		{"example.com:7000", false, "", false},
		{"0.0.0.0:7000", true, "0.0.0.0:7000", true},
		{"127.0.0.1:", false, "", false},
		{"a:b:c", false, "", false},
	}
	for _, tc := range tests {
		got, err := ListenAddr("--http", tc.addr, tc.remote, "risk")
		if !tc.ok {
			if err == nil || fault.KindOf(err) != fault.Usage {
				t.Errorf("ListenAddr(%q, %v) = %q, %v; want a usage error", tc.addr, tc.remote, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ListenAddr(%q, %v) = %q, %v; want %q", tc.addr, tc.remote, got, err, tc.want)
		}
	}
}
