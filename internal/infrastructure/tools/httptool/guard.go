package httptool

import (
	"fmt"
	"net/netip"
	"sync"
)

// BlockedError says why an address may not be connected to. The dialer returns it from its
// Control hook, so it is found with errors.As in what the request returns.
type BlockedError struct {
	Addr netip.Addr
	// Reason names the address class: "loopback", "private (RFC 1918)", "cloud metadata", ...
	Reason string
	// Always is set for classes that AllowPrivate does not open (unspecified, multicast,
	// broadcast, metadata endpoints).
	Always bool
}

func (e *BlockedError) Error() string {
	if e.Always {
		return fmt.Sprintf("address %s is %s and is never allowed", e.Addr, e.Reason)
	}
	return fmt.Sprintf("address %s is %s; private and local addresses are not allowed", e.Addr, e.Reason)
}

// rangeClass is a special-purpose range and how it is treated.
type rangeClass struct {
	prefix netip.Prefix
	reason string
	always bool // refused even with AllowPrivate
}

func p(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// addrRanges are the address classes classify checks, parsed on first use (ranges): package
// initialisation runs in every awf process, and most never make a request.
type addrRanges struct {
	// metadata are cloud metadata and host-agent endpoints: refused even with AllowPrivate,
	// since reaching them from a tool leaks the machine's credentials.
	metadata []netip.Prefix
	// ipv4Special are the IPv4 ranges that are not the public internet (IANA special-purpose
	// registry), in order of specificity where they overlap.
	ipv4Special []rangeClass
	// ipv6Special are the IPv6 ranges checked before the global-unicast rule. Ranges that
	// embed an IPv4 address (mapped, NAT64, 6to4, Teredo) are handled in classify.
	ipv6Special []rangeClass

	ipv4Compatible, nat64, sixToFour, teredo, globalUnicast netip.Prefix
}

var ranges = sync.OnceValue(func() *addrRanges {
	return &addrRanges{
		metadata: []netip.Prefix{
			p("169.254.169.254/32"), // AWS, GCP, Azure, OpenStack, ...
			p("169.254.170.2/32"),   // AWS ECS task credentials
			p("100.100.100.200/32"), // Alibaba Cloud
			p("168.63.129.16/32"),   // Azure wire server
			p("fd00:ec2::254/128"),  // AWS over IPv6
		},
		ipv4Special: []rangeClass{
			{p("0.0.0.0/8"), "unspecified (\"this network\")", true},
			{p("10.0.0.0/8"), "private (RFC 1918)", false},
			{p("100.64.0.0/10"), "shared carrier-grade NAT space (RFC 6598)", false},
			{p("127.0.0.0/8"), "loopback", false},
			{p("169.254.0.0/16"), "link-local", false},
			{p("172.16.0.0/12"), "private (RFC 1918)", false},
			{p("192.0.0.0/24"), "IETF protocol assignments", false},
			{p("192.0.2.0/24"), "documentation (TEST-NET-1)", false},
			{p("192.88.99.0/24"), "6to4 relay anycast", false},
			{p("192.168.0.0/16"), "private (RFC 1918)", false},
			{p("198.18.0.0/15"), "benchmarking", false},
			{p("198.51.100.0/24"), "documentation (TEST-NET-2)", false},
			{p("203.0.113.0/24"), "documentation (TEST-NET-3)", false},
			{p("224.0.0.0/4"), "multicast", true},
			{p("240.0.0.0/4"), "reserved or broadcast", true},
		},
		ipv6Special: []rangeClass{
			{p("::/128"), "unspecified", true},
			{p("::1/128"), "loopback", false},
			{p("64:ff9b:1::/48"), "local-use NAT64 (RFC 8215)", false},
			{p("100::/64"), "discard-only", true},
			{p("2001:db8::/32"), "documentation", false},
			{p("2001:10::/28"), "ORCHID", true},
			{p("2001:20::/28"), "ORCHIDv2", true},
			{p("fc00::/7"), "unique local (ULA)", false},
			{p("fe80::/10"), "link-local", false},
			{p("fec0::/10"), "site-local (deprecated)", false},
			{p("ff00::/8"), "multicast", true},
		},
		ipv4Compatible: p("::/96"),
		nat64:          p("64:ff9b::/96"),
		sixToFour:      p("2002::/16"),
		teredo:         p("2001::/32"),
		globalUnicast:  p("2000::/3"),
	}
})

// CheckAddr returns a *BlockedError when addr may not be connected to, or nil. Without
// allowPrivate it refuses every address that is not on the public internet: loopback,
// RFC 1918, link-local, carrier-grade NAT, ULA, documentation and other special ranges, and
// the same addresses spelt as IPv4-mapped, IPv4-compatible, NAT64, 6to4 or Teredo IPv6. Even
// with allowPrivate it refuses unspecified, multicast, broadcast and reserved addresses and
// cloud metadata endpoints. Zoned (scoped) addresses count as link-local.
func CheckAddr(addr netip.Addr, allowPrivate bool) error {
	reason, always := classify(addr)
	if reason == "" || (allowPrivate && !always) {
		return nil
	}
	return &BlockedError{Addr: addr, Reason: reason, Always: always}
}

// classify names the non-public class of addr ("" for a public address) and whether it is
// refused even with AllowPrivate.
func classify(addr netip.Addr) (reason string, always bool) {
	if !addr.IsValid() {
		return "invalid", true
	}
	rs := ranges()
	for _, m := range rs.metadata {
		if m.Contains(addr.WithZone("")) || (addr.Is4In6() && m.Contains(addr.Unmap())) {
			return "a cloud metadata endpoint", true
		}
	}
	if addr.Zone() != "" {
		return "scoped (zoned) link-local", false
	}
	if addr.Is4In6() {
		return classify4(addr.Unmap(), "IPv4-mapped ")
	}
	if addr.Is4() {
		return classify4(addr, "")
	}
	for _, r := range rs.ipv6Special {
		if r.prefix.Contains(addr) {
			return r.reason, r.always
		}
	}
	b := addr.As16()
	switch {
	case rs.ipv4Compatible.Contains(addr):
		return "an IPv4-compatible IPv6 address (deprecated)", true
	case rs.nat64.Contains(addr):
		return classifyEmbedded(netip.AddrFrom4([4]byte(b[12:16])), "NAT64 of ")
	case rs.sixToFour.Contains(addr):
		return classifyEmbedded(netip.AddrFrom4([4]byte(b[2:6])), "6to4 of ")
	case rs.teredo.Contains(addr):
		if r, a := classifyEmbedded(netip.AddrFrom4([4]byte(b[4:8])), "Teredo server "); r != "" {
			return r, a
		}
		client := [4]byte{b[12] ^ 0xff, b[13] ^ 0xff, b[14] ^ 0xff, b[15] ^ 0xff}
		return classifyEmbedded(netip.AddrFrom4(client), "Teredo client ")
	case !rs.globalUnicast.Contains(addr):
		return "outside IPv6 global unicast space", true
	}
	return "", false
}

func classify4(addr netip.Addr, spelling string) (string, bool) {
	for _, r := range ranges().ipv4Special {
		if r.prefix.Contains(addr) {
			return spelling + r.reason, r.always
		}
	}
	return "", false
}

// classifyEmbedded classifies an IPv4 address carried inside an IPv6 one.
func classifyEmbedded(v4 netip.Addr, spelling string) (string, bool) {
	for _, m := range ranges().metadata {
		if m.Contains(v4) {
			return spelling + "a cloud metadata endpoint", true
		}
	}
	if r, a := classify4(v4, ""); r != "" {
		return spelling + r + " (" + v4.String() + ")", a
	}
	return "", false
}
