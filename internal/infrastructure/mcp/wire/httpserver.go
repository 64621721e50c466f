package wire

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"

	"github.com/awf-dev/awf/internal/infrastructure/localhttp"
)

// Handler serves clients over streamable HTTP, statelessly: each POST carries one message
// and a request is answered on its own, with application/json (which the spec allows in place
// of an SSE stream), and no Mcp-Session-Id. A client of any version of Versions works: one
// that sends initialize (the server answers it, and every later request stands alone) and one
// of the stateless protocol, which sends none. The server asks clients nothing, so nothing
// needs a session: GET (a stream of the server's own messages) and DELETE are answered with
// 405. A request that reached a loopback address under a Host that is not a loopback name (DNS
// rebinding) is refused with 403.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(s.serveHTTP)
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && local != nil {
		host, _, err := net.SplitHostPort(local.String())
		if err == nil && localhttp.IsLoopback(host) && !localhttp.LoopbackHost(r.Host) {
			http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
			return
		}
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "Method Not Allowed: this server is stateless and sends nothing of its own accord", http.StatusMethodNotAllowed)
		return
	}
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/json" {
		http.Error(w, "Content-Type must be application/json", http.StatusUnsupportedMediaType)
		return
	}
	if !acceptsJSON(r.Header.Values("Accept")) {
		http.Error(w, "Accept must allow application/json", http.StatusNotAcceptable)
		return
	}
	if v := r.Header.Get(headerProtocolVersion); v != "" && !supported(v) && v < Version20260728 {
		http.Error(w, fmt.Sprintf("Bad Request: unsupported protocol version %q (supported: %s)", v, strings.Join(Versions, ", ")),
			http.StatusBadRequest)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxMessage))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			http.Error(w, "the message is longer than 16 MiB", http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	m, derr := decode(body)
	if derr != nil {
		var id json.RawMessage
		if m != nil && m.Method != "" {
			id = m.ID
		}
		writeJSON(w, http.StatusBadRequest, encodeResponse(id, nil, derr))
		return
	}
	if !m.isRequest() {
		// A notification (initialized, cancelled: the client's closing the request cancels
		// it here) or a response: nothing to answer.
		w.WriteHeader(http.StatusAccepted)
		return
	}
	ss := &session{srv: s}
	res, rerr := ss.handle(r.Context(), m)
	writeJSON(w, http.StatusOK, encodeResponse(m.ID, res, rerr))
}

func writeJSON(w http.ResponseWriter, status int, data []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

// acceptsJSON reports whether an Accept header allows application/json; no header does.
func acceptsJSON(values []string) bool {
	if len(values) == 0 {
		return true
	}
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			mt, _, _ := mime.ParseMediaType(strings.TrimSpace(part))
			if mt == "application/json" || mt == "application/*" || mt == "*/*" {
				return true
			}
		}
	}
	return false
}
