package mcp

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// checkOrigin refuses, with 403, a request whose Origin header names another origin than the
// server's own, as the MCP spec requires of streamable HTTP servers: a web page the user visits
// must not drive the tools. Clients that are not browsers send no Origin and pass.
func checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !sameOrigin(origin, r.Host) {
			http.Error(w, fmt.Sprintf("Forbidden: Origin %q is not this server's", origin), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// sameOrigin reports whether origin is the server reached as host: the same host and port, or,
// both being loopback names, the same port (http://localhost:8765 for 127.0.0.1:8765).
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return false // "null", a file: page, an extension
	}
	if strings.EqualFold(u.Host, host) {
		return true
	}
	oh, op, err1 := net.SplitHostPort(u.Host)
	hh, hp, err2 := net.SplitHostPort(host)
	return err1 == nil && err2 == nil && op == hp && isLoopback(oh) && isLoopback(hh)
}
