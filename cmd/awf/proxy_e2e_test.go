package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/awf-dev/awf/internal/domain/state"
)

// TestProcessHostAllowlistThroughProxy: a tool process reaches a host the policy allows only
// through awf's filtering proxy; a host not allowed is refused by the proxy, and a direct
// connection (bypassing the proxy) is refused by the sandbox.
func TestProcessHostAllowlistThroughProxy(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		io.WriteString(w, "through the proxy")
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	tests := []struct {
		name      string
		allow     string
		fetchOK   bool
		wantHits  int64
		fetchText string
	}{
		{"allowed host", host, true, 1, "through the proxy"},
		{"host not allowed", "api.example.com", false, 0, "403"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			hits.Store(0)
			e := newEnv(t)
			e.copy(filepath.Join("..", "..", "testdata", "e2e", "security", "proxy.yaml"), "proxy.yaml")
			res := e.runJSON(0, "run", "proxy.yaml", "-i", "url="+srv.URL, "-i", "allow="+tc.allow, "--yes")
			s := e.state(res.RunID)
			fetch := s.States["fetch"]
			if ok := fetch.Status == state.Completed; ok != tc.fetchOK ||
				!strings.Contains(fetch.Output+fetch.Error, tc.fetchText) {
				t.Errorf("fetch: status %s, output %q, error %q; want ok=%v with %q", fetch.Status, fetch.Output, fetch.Error, tc.fetchOK, tc.fetchText)
			}
			if d := s.States["direct"]; d.Status != state.Failed {
				t.Errorf("direct connection bypassing the proxy: status %s, output %q", d.Status, d.Output)
			}
			if got := hits.Load(); got != tc.wantHits {
				t.Errorf("server saw %d requests, want %d", got, tc.wantHits)
			}
		})
	}
}
