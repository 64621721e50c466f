package netproxy

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func client(t *testing.T, p *Proxy) *http.Client {
	t.Helper()
	u, _ := url.Parse(fmt.Sprintf("http://127.0.0.1:%d", p.Port()))
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}}
}

func TestProxy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") }))
	defer srv.Close()
	tls := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secure") }))
	defer tls.Close()
	host := strings.TrimPrefix(srv.URL, "http://")

	tests := []struct {
		name    string
		hosts   []string
		url     string
		want    string // body, or "" for a refusal
		refusal string
	}{
		{"literal loopback allowed", []string{"127.0.0.1"}, srv.URL, "hello", ""},
		{"host:port pattern", []string{host}, srv.URL, "hello", ""},
		{"other host refused", []string{"api.example.com"}, srv.URL, "", "403"},
		{"loopback by name refused by the guard", []string{"localhost"}, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1), "", "502"},
		{"wrong port", []string{"127.0.0.1:1"}, srv.URL, "", "403"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Start(tc.hosts)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			resp, err := client(t, p).Get(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if tc.want != "" && (resp.StatusCode != 200 || string(body) != tc.want) {
				t.Errorf("GET %s via %v = %d %q, want %q", tc.url, tc.hosts, resp.StatusCode, body, tc.want)
			}
			if tc.refusal != "" && !strings.HasPrefix(resp.Status, tc.refusal) {
				t.Errorf("GET %s via %v = %s %q, want %s", tc.url, tc.hosts, resp.Status, body, tc.refusal)
			}
		})
	}

	t.Run("CONNECT tunnel", func(t *testing.T) {
		p, err := Start([]string{"127.0.0.1"})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		c := client(t, p)
		c.Transport.(*http.Transport).TLSClientConfig = tls.Client().Transport.(*http.Transport).TLSClientConfig
		resp, err := c.Get(tls.URL)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "secure" {
			t.Errorf("tunnelled GET = %q", body)
		}
	})
	t.Run("CONNECT refused", func(t *testing.T) {
		p, err := Start([]string{"api.example.com"})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		c := client(t, p)
		c.Transport.(*http.Transport).TLSClientConfig = tls.Client().Transport.(*http.Transport).TLSClientConfig
		if _, err := c.Get(tls.URL); err == nil || !strings.Contains(err.Error(), "Forbidden") {
			t.Errorf("tunnel to a host not allowed: err = %v", err)
		}
	})
}

func TestMatches(t *testing.T) {
	tests := []struct {
		pat, host, port string
		want            bool
	}{
		{"*", "x.com", "443", true},
		{"api.x.com", "api.x.com", "443", true},
		{"api.x.com", "evil.com", "443", false},
		{"*.x.com", "a.b.x.com", "443", true},
		{"*.x.com", "x.com", "443", false},
		{"*.x.com", "evilx.com", "443", false},
		{"x.com:8443", "x.com", "8443", true},
		{"x.com:8443", "x.com", "443", false},
	}
	for _, tc := range tests {
		if got := matches(tc.pat, tc.host, tc.port); got != tc.want {
			t.Errorf("matches(%q, %q, %q) = %v, want %v", tc.pat, tc.host, tc.port, got, tc.want)
		}
	}
}

func TestPoolReuses(t *testing.T) {
	var pl Pool
	defer pl.Close()
	a, err := pl.Port([]string{"a.com"})
	b, _ := pl.Port([]string{"a.com"})
	c, _ := pl.Port([]string{"b.com"})
	if err != nil || a != b || a == c {
		t.Errorf("ports %d %d %d, err %v", a, b, c, err)
	}
}
