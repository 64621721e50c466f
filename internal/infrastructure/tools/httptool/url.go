package httptool

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/awf-dev/awf/internal/domain/fault"
)

// checkURL parses and checks a URL: http or https, a host, no user information, a host in the
// allowlist, and an IP-literal host that passes the address guard. Numeric hosts in
// non-standard spellings (2130706433, 0x7f.1, 127.1) are refused: other resolvers read them
// as addresses.
func (t *Tool) checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("bad URL: %w", err)
	}
	if s := strings.ToLower(u.Scheme); s != "http" && s != "https" {
		return nil, refusedf(ruleURL, "URL scheme %q is not allowed; use http or https", u.Scheme)
	}
	if u.Opaque != "" || u.Host == "" {
		return nil, fmt.Errorf("URL %q has no host; write it as %s://host/path", raw, u.Scheme)
	}
	if u.User != nil {
		return nil, refusedf(ruleURL, "URLs with user information (user:password@) are refused; send credentials in a header")
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" {
		return nil, fmt.Errorf("URL %q has no host", raw)
	}
	port := u.Port()
	if port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("URL port %q is not a port number", port)
		}
	} else if strings.EqualFold(u.Scheme, "https") {
		port = "443"
	} else {
		port = "80"
	}
	for i := 0; i < len(host); i++ {
		if host[i] >= utf8.RuneSelf {
			return nil, fmt.Errorf("host %q is not ASCII; use its punycode (xn--) form", host)
		}
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if ip.Zone() != "" {
			return nil, refusedf(ruleURL, "zoned IPv6 addresses (%s) are refused", host)
		}
		if err := t.check(ip); err != nil {
			return nil, fault.Wrap(fault.Denied, err)
		}
		host = ip.String()
	} else if numericHost(host) {
		return nil, refusedf(ruleURL, "host %q looks like an IPv4 address in a non-standard spelling; write it as a dotted quad (a.b.c.d)", host)
	}
	if !t.hostAllowed(host, port) {
		var raw []string
		for _, h := range t.hosts {
			raw = append(raw, h.raw)
		}
		return nil, refusedf(ruleHosts, "host %q is not in the allowed hosts [%s]", net.JoinHostPort(host, port), strings.Join(raw, " "))
	}
	return u, nil
}

// numericHost reports whether a host that did not parse as an IP address still ends in a
// number: WHATWG URL parsing and getaddrinfo treat such hosts as IPv4 addresses.
func numericHost(host string) bool {
	last := host[strings.LastIndexByte(host, '.')+1:]
	if last == "" {
		return false
	}
	if strings.HasPrefix(last, "0x") {
		return true
	}
	for i := 0; i < len(last); i++ {
		if last[i] < '0' || last[i] > '9' {
			return false
		}
	}
	return true
}

// hostAllowed applies the allowlist; an empty list allows any host.
func (t *Tool) hostAllowed(host, port string) bool {
	if len(t.hosts) == 0 {
		return true
	}
	for _, h := range t.hosts {
		if h.match(host, port) {
			return true
		}
	}
	return false
}

// precheck resolves a host name before the request, to refuse with a clear message when
// every address is refused. It is for the message only: the dialer's Control hook checks the
// address actually connected to, whatever the resolver answers then.
func (t *Tool) precheck(ctx context.Context, host string) error {
	if _, err := netip.ParseAddr(host); err == nil {
		return nil // checked in checkURL
	}
	ips, err := t.lookup(ctx, host)
	if err != nil {
		return err
	}
	var first error
	for _, ip := range ips {
		err := t.check(ip)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return fault.Wrap(fault.Denied, fmt.Errorf("host %s resolves only to refused addresses: %w", host, first))
}
