package mcp

import (
	"fmt"
	"net"

	"github.com/awf-dev/awf/internal/infrastructure/localhttp"
)

// ListenAddr checks the address `awf mcp serve --http` listens on (see localhttp.ListenAddr):
// anything but a loopback address is refused unless allowRemote is set, since the server runs
// tools on this machine for whoever reaches it.
func ListenAddr(addr string, allowRemote bool) (string, error) {
	return localhttp.ListenAddr("--http", addr, allowRemote, "anyone who reaches it could run tools on this machine")
}

// URL returns the http:// URL of a listening address, for messages ("serving on ...").
func URL(addr net.Addr) string {
	return fmt.Sprintf("http://%s/", addr.String())
}
