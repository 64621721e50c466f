package httptool

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// hostPattern is one entry of the host allowlist.
type hostPattern struct {
	raw    string
	host   string // exact host, lower case, or the suffix (".example.com") for a wildcard
	suffix bool   // "*.example.com": any subdomain, at any depth, not example.com itself
	any    bool   // "*": any host
	port   string // "" for any port
}

// parseHostPattern parses "example.com", "*.example.com", "example.com:8443", "10.0.0.5",
// "[::1]:8080" or "*".
func parseHostPattern(s string) (hostPattern, error) {
	raw := s
	s = strings.ToLower(strings.TrimSpace(s))
	if s == "" {
		return hostPattern{}, fmt.Errorf("empty host pattern")
	}
	if strings.Contains(s, "://") || strings.ContainsAny(s, "/?#@ ") {
		return hostPattern{}, fmt.Errorf("host pattern %q must be a host name with an optional port, like api.example.com or *.example.com:443", raw)
	}
	hp := hostPattern{raw: raw}
	host := s
	if h, port, err := net.SplitHostPort(s); err == nil {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return hostPattern{}, fmt.Errorf("host pattern %q: bad port %q", raw, port)
		}
		host, hp.port = h, port
	} else if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		host = s[1 : len(s)-1]
	}
	if trimmed := strings.TrimSuffix(host, "."); trimmed != host && strings.HasPrefix(trimmed, "*") && !strings.HasPrefix(trimmed, "*.") {
		return hostPattern{}, fmt.Errorf("host pattern %q: a wildcard needs a domain after it (*.example.com)", raw)
	}
	host = strings.TrimSuffix(host, ".")
	switch {
	case host == "*":
		hp.any = true
	case strings.HasPrefix(host, "*."):
		hp.suffix, hp.host = true, host[1:]
		if strings.Contains(hp.host[1:], "*") || hp.host == "." {
			return hostPattern{}, fmt.Errorf("host pattern %q: a wildcard may only be the first label", raw)
		}
	case strings.Contains(host, "*"):
		return hostPattern{}, fmt.Errorf("host pattern %q: a wildcard may only be the first label (*.example.com)", raw)
	default:
		if a, err := netip.ParseAddr(host); err == nil {
			host = a.String()
		}
		hp.host = host
	}
	return hp, nil
}

// match reports whether the normalised host (lower case, no trailing dot, IP literals in
// netip form) and port match the pattern.
func (hp hostPattern) match(host, port string) bool {
	if hp.port != "" && hp.port != port {
		return false
	}
	switch {
	case hp.any:
		return true
	case hp.suffix:
		return strings.HasSuffix(host, hp.host) && len(host) > len(hp.host)
	default:
		return host == hp.host
	}
}
