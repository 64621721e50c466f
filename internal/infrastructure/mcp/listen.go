package mcp

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
)

// ListenAddr checks the address `awf mcp serve --http` listens on and fills in the host: a
// bare port (":8080", "8080") listens on 127.0.0.1. Anything but a loopback address (127.x,
// ::1, localhost) is refused with a fault.Usage error unless allowRemote is set: the server
// runs tools on this machine for whoever reaches it.
func ListenAddr(addr string, allowRemote bool) (string, error) {
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fault.New(fault.Usage, "--http %s: want HOST:PORT or PORT: %v", addr, err)
	}
	if port == "" {
		return "", fault.New(fault.Usage, "--http %s: no port (use 0 for any free port)", addr)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if !allowRemote && !isLoopback(host) {
		return "", fault.New(fault.Usage,
			"--http %s: %s is not a loopback address; anyone who reaches it could run tools on this machine (add --allow-remote to listen there anyway)",
			addr, host)
	}
	return net.JoinHostPort(host, port), nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// URL returns the http:// URL of a listening address, for messages ("serving on ...").
func URL(addr net.Addr) string {
	return fmt.Sprintf("http://%s/", addr.String())
}
