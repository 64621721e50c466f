package mcp

import (
	"fmt"
	"net/http"

	"github.com/awf-dev/awf/internal/infrastructure/localhttp"
)

// checkOrigin refuses, with 403, a request whose Origin header names another origin than the
// server's own, as the MCP spec requires of streamable HTTP servers: a web page the user visits
// must not drive the tools. Clients that are not browsers send no Origin and pass.
func checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if origin := r.Header.Get("Origin"); origin != "" && !localhttp.SameOrigin(origin, r.Host) {
			http.Error(w, fmt.Sprintf("Forbidden: Origin %q is not this server's", origin), http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
