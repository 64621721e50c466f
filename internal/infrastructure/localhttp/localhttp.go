// Package localhttp holds what awf's local HTTP servers (awf mcp serve --http, awf ui) share
// to keep other machines and other web pages out: the listening address checked for loopback,
// and the Host and Origin of a request compared with the server's own.
package localhttp

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
)

// ListenAddr checks the address a server listens on, given by flag (for messages), and fills
// in the host: a bare port (":8080", "8080") listens on 127.0.0.1. Anything but a loopback
// address (127.x, ::1, localhost) is refused with a fault.Usage error that says risk (what
// anyone who reaches the server could do) unless allowRemote is set.
func ListenAddr(flag, addr string, allowRemote bool, risk string) (string, error) {
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fault.New(fault.Usage, "%s %s: want HOST:PORT or PORT: %v", flag, addr, err)
	}
	if port == "" {
		return "", fault.New(fault.Usage, "%s %s: no port (use 0 for any free port)", flag, addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if !allowRemote && !IsLoopback(host) {
		return "", fault.New(fault.Usage,
			"%s %s: %s is not a loopback address; %s (add --allow-remote to listen there anyway)",
			flag, addr, host, risk)
	}
	return net.JoinHostPort(host, port), nil
}

// IsLoopback reports whether host (a name or an address, without a port) is this machine:
// localhost, 127.0.0.0/8 or ::1.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// LoopbackHost reports whether a request's Host header names a loopback host (with or
// without a port). A page of another site that a DNS rebinding attack points at 127.0.0.1
// still sends its own name as Host, which this refuses.
func LoopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	return IsLoopback(strings.Trim(host, "[]"))
}

// SameOrigin reports whether origin (a request's Origin header) is the server reached as host
// (its Host header): the same host and port, or, both being loopback names, the same port
// (http://localhost:8765 for 127.0.0.1:8765). "null", file: pages and extensions are not.
func SameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false
	}
	if strings.EqualFold(u.Host, host) {
		return true
	}
	oh, op, err1 := net.SplitHostPort(u.Host)
	hh, hp, err2 := net.SplitHostPort(host)
	return err1 == nil && err2 == nil && op == hp && IsLoopback(oh) && IsLoopback(hh)
}

// ShutdownGrace is how long Serve waits, once its context ends, for requests to finish
// before it closes their connections.
const ShutdownGrace = 5 * time.Second

// Serve serves h on ln until ctx ends, then shuts down gracefully (ShutdownGrace at most).
// It returns an error only when serving stopped by itself.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownGrace)
	defer cancel()
	if err := hs.Shutdown(shutdown); err != nil {
		hs.Close()
	}
	<-done
	return nil
}
