package httptool

import (
	"errors"
	"net/netip"
	"testing"
)

func TestCheckAddr(t *testing.T) {
	tests := []struct {
		addr string
		// blocked without AllowPrivate; with it, blocked only when always is set.
		blocked, always bool
	}{
		// Public addresses.
		{"8.8.8.8", false, false},
		{"93.184.215.14", false, false},
		{"2606:4700:4700::1111", false, false},
		{"::ffff:8.8.8.8", false, false},
		{"64:ff9b::808:808", false, false},          // NAT64 of 8.8.8.8
		{"2002:808:808::1", false, false},           // 6to4 of 8.8.8.8
		{"2001:0:808:808::f7f7:f7f7", false, false}, // Teredo, server 8.8.8.8, client 8.8.8.8
		// IPv4 special ranges.
		{"127.0.0.1", true, false},
		{"127.255.255.254", true, false},
		{"10.1.2.3", true, false},
		{"172.16.0.1", true, false},
		{"172.31.255.255", true, false},
		{"192.168.1.1", true, false},
		{"169.254.1.1", true, false},
		{"100.64.0.1", true, false},
		{"100.127.255.255", true, false},
		{"192.0.0.170", true, false},
		{"198.18.0.1", true, false},
		{"203.0.113.5", true, false},
		{"0.0.0.0", true, true},
		{"0.1.2.3", true, true},
		{"224.0.0.1", true, true},
		{"239.255.255.250", true, true},
		{"255.255.255.255", true, true},
		{"240.0.0.1", true, true},
		{"169.254.169.254", true, true}, // metadata: refused even with AllowPrivate
		{"169.254.170.2", true, true},
		{"100.100.100.200", true, true},
		{"168.63.129.16", true, true},
		// Neighbours of the ranges are public.
		{"172.32.0.1", false, false},
		{"100.128.0.1", false, false},
		{"11.0.0.1", false, false},
		{"192.169.0.1", false, false},
		// IPv6 special ranges.
		{"::1", true, false},
		{"::", true, true},
		{"fe80::1", true, false},
		{"fe80::1%eth0", true, false},
		{"fc00::1", true, false},
		{"fd12:3456::1", true, false},
		{"fec0::1", true, false},
		{"ff02::1", true, true},
		{"2001:db8::1", true, false},
		{"100::1", true, true},
		{"fd00:ec2::254", true, true},
		{"3fff::1", false, false},
		{"4000::1", true, true}, // outside global unicast
		// IPv4 spelt inside IPv6.
		{"::ffff:127.0.0.1", true, false},
		{"::ffff:7f00:1", true, false},
		{"::ffff:10.0.0.1", true, false},
		{"::ffff:169.254.169.254", true, true},
		{"::127.0.0.1", true, true}, // IPv4-compatible: deprecated, never
		{"::8.8.8.8", true, true},
		{"64:ff9b::7f00:1", true, false},           // NAT64 of 127.0.0.1
		{"64:ff9b::a00:1", true, false},            // NAT64 of 10.0.0.1
		{"64:ff9b::a9fe:a9fe", true, true},         // NAT64 of 169.254.169.254
		{"64:ff9b:1::a00:1", true, false},          // local-use NAT64
		{"2002:7f00:1::1", true, false},            // 6to4 of 127.0.0.1
		{"2002:c0a8:101::1", true, false},          // 6to4 of 192.168.1.1
		{"2002:a9fe:a9fe::1", true, true},          // 6to4 of metadata
		{"2001:0:7f00:1::1", true, false},          // Teredo server 127.0.0.1
		{"2001:0:808:808::80ff:fffe", true, false}, // Teredo client 127.0.0.1 (xor ff)
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			a := netip.MustParseAddr(tc.addr)
			err := CheckAddr(a, false)
			if got := err != nil; got != tc.blocked {
				t.Errorf("CheckAddr(%s, false) = %v, want blocked %v", tc.addr, err, tc.blocked)
			}
			var be *BlockedError
			if err != nil && (!errors.As(err, &be) || be.Reason == "") {
				t.Errorf("CheckAddr(%s, false) = %#v, want a *BlockedError with a reason", tc.addr, err)
			}
			errPriv := CheckAddr(a, true)
			if got := errPriv != nil; got != tc.always {
				t.Errorf("CheckAddr(%s, true) = %v, want blocked %v", tc.addr, errPriv, tc.always)
			}
		})
	}
}

func TestBlockedErrorMessage(t *testing.T) {
	err := CheckAddr(netip.MustParseAddr("::ffff:10.0.0.1"), false)
	if got, want := err.Error(), "address ::ffff:10.0.0.1 is IPv4-mapped private (RFC 1918); private and local addresses are not allowed"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	err = CheckAddr(netip.MustParseAddr("169.254.169.254"), true)
	if got, want := err.Error(), "address 169.254.169.254 is a cloud metadata endpoint and is never allowed"; got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
}

func BenchmarkCheckAddr(b *testing.B) {
	addrs := []netip.Addr{
		netip.MustParseAddr("93.184.215.14"),
		netip.MustParseAddr("127.0.0.1"),
		netip.MustParseAddr("2606:4700:4700::1111"),
		netip.MustParseAddr("64:ff9b::a00:1"),
	}
	for _, a := range addrs {
		b.Run(a.String(), func(b *testing.B) {
			for b.Loop() {
				_ = CheckAddr(a, false)
			}
		})
	}
}
