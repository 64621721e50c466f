package webui

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/awf-dev/awf/internal/infrastructure/localhttp"
)

// securityHeaders keep what the pages show from acting: scripts and styles only from the
// server itself (so markup that escaped anyway could run nothing), no framing, no referrer (a
// run's id stays here) and no caching of run data.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
		"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
	"X-Content-Type-Options": "nosniff",
	"Referrer-Policy":        "no-referrer",
	"X-Frame-Options":        "DENY",
	"Cache-Control":          "no-store",
}

// guard lets a request through only when it names a loopback Host (unless AllowRemote: a
// page of another site rebound to 127.0.0.1 by DNS still sends its own name), carries no
// Origin but the server's own (another page's scripts), is not what a page of another site
// or port embeds or fetches (foreignFetch), is a GET or HEAD (the viewer changes
// nothing) and holds the token: in the URL, which sets a cookie and redirects to the URL
// without it, or in that cookie.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range securityHeaders {
			w.Header().Set(k, v)
		}
		if !s.cfg.AllowRemote && !localhttp.LoopbackHost(r.Host) {
			refuse(w, http.StatusForbidden, fmt.Sprintf("Host %q is not a loopback name: awf ui answers only at 127.0.0.1, [::1] or localhost", r.Host))
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !localhttp.SameOrigin(origin, r.Host) {
			refuse(w, http.StatusForbidden, fmt.Sprintf("Origin %q is not this server's", origin))
			return
		}
		if why := foreignFetch(r.Header); why != "" {
			refuse(w, http.StatusForbidden, why)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			refuse(w, http.StatusMethodNotAllowed, "awf ui is read-only: only GET and HEAD")
			return
		}
		name := cookieName(r.Host)
		if tok := r.URL.Query().Get("token"); tok != "" {
			if !s.tokenOK(tok) {
				refuse(w, http.StatusForbidden, "wrong token: open the URL awf ui printed when it started")
				return
			}
			http.SetCookie(w, &http.Cookie{Name: name, Value: s.cfg.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			http.Redirect(w, r, withoutToken(r.URL), http.StatusSeeOther)
			return
		}
		c, err := r.Cookie(name)
		if err != nil || !s.tokenOK(c.Value) {
			refuse(w, http.StatusForbidden, "no token: open the URL awf ui printed when it started (it holds a token)")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// tokenOK compares tok with the server's token in constant time.
func (s *Server) tokenOK(tok string) bool {
	return subtle.ConstantTimeCompare([]byte(tok), []byte(s.cfg.Token)) == 1
}

// cookieName is per port: browsers share cookies between the ports of a host, and two awf ui
// servers must not overwrite each other's.
func cookieName(host string) string {
	if _, port, err := net.SplitHostPort(host); err == nil && port != "" {
		return "awf_ui_" + port
	}
	return "awf_ui"
}

// withoutToken is u's path and query without the token parameter, as a path on this server:
// a path that starts with "//" would name another host in the Location header.
func withoutToken(u *url.URL) string {
	q := u.Query()
	q.Del("token")
	out := url.URL{Path: "/" + strings.TrimLeft(u.Path, "/"), RawQuery: q.Encode()}
	return out.String()
}

// foreignFetch says why a request that a browser made for a page of another site, or of
// another port of this host, is refused ("" when it is not one): an image, script, frame or
// fetch of that page. Browsers send the SameSite cookie along when the page is only on
// another port (cookies do not tell ports apart), and such requests, though their answers
// stay unreadable, still tell that page whether a run exists and how big it is. Following a
// link to the viewer (a top-level navigation) is let through: the token or cookie decides.
// Requests without Sec-Fetch-Site (other clients, older browsers) are judged as before.
func foreignFetch(h http.Header) string {
	switch h.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		if h.Get("Sec-Fetch-Mode") == "navigate" && h.Get("Sec-Fetch-Dest") == "document" {
			return ""
		}
		return fmt.Sprintf("a request of another site's page (Sec-Fetch-Site %s, Sec-Fetch-Dest %s): awf ui answers only its own pages",
			h.Get("Sec-Fetch-Site"), h.Get("Sec-Fetch-Dest"))
	}
	return ""
}

// refuse answers a refused request with a plain text reason.
func refuse(w http.ResponseWriter, code int, why string) {
	http.Error(w, http.StatusText(code)+": "+why, code)
}
