package httptool

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/infrastructure/tools/internal/tooltest"
)

// fakeResolver answers from a table; a name with several answers gives them in turn (the last
// one repeats), so a test can change the answer between the check and the connect.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][]string
	calls   map[string]int
}

func newResolver(answers map[string][]string) *fakeResolver {
	return &fakeResolver{answers: answers, calls: map[string]int{}}
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	host = strings.TrimSuffix(strings.ToLower(host), ".") // as DNS does
	seq, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	i := min(r.calls[host], len(seq)-1)
	r.calls[host]++
	return []netip.Addr{netip.MustParseAddr(seq[i])}, nil
}

func (r *fakeResolver) count(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[host]
}

// server is an httptest server counting its hits.
type server struct {
	*httptest.Server
	hits atomic.Int64
}

func newServer(t *testing.T, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// newServerOn starts a counting server on a chosen loopback address.
func newServerOn(t *testing.T, addr string, h http.HandlerFunc) *server {
	t.Helper()
	l, err := net.Listen("tcp", addr+":0")
	if err != nil {
		t.Skipf("listen on %s: %v", addr, err)
	}
	s := &server{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	}))
	s.Listener.Close()
	s.Listener = l
	s.Start()
	t.Cleanup(s.Close)
	return s
}

func (s *server) port() string {
	_, port, _ := net.SplitHostPort(s.Listener.Addr().String())
	return port
}

func hello(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprint(w, "hello")
}

func newTool(t *testing.T, p Policy) *Tool {
	t.Helper()
	tl, err := New(p)
	if err != nil {
		t.Fatalf("New(%+v): %v", p, err)
	}
	return tl
}

// treatAsPublic makes the tool's guard treat one loopback address as public, so a test server
// there plays an internet host while the rest of the guard stays as it is.
func treatAsPublic(tl *Tool, public string) {
	pub := netip.MustParseAddr(public)
	tl.check = func(a netip.Addr) error {
		if a == pub {
			return nil
		}
		return CheckAddr(a, tl.allowPrivate)
	}
}

// do, wantOK and wantError are the shared tool assertions (tooltest).
var (
	do        = tooltest.Call
	wantOK    = tooltest.WantOK
	wantError = tooltest.WantError
)

func TestLoopbackRefusedUnlessAllowed(t *testing.T) {
	srv := newServer(t, hello)
	res := newResolver(map[string][]string{"api.test": {"127.0.0.1"}})
	byIP := srv.URL + "/x"
	byName := "http://api.test:" + srv.port() + "/x"

	strict := newTool(t, Policy{Resolver: res})
	wantError(t, do(t, strict, map[string]any{"url": byIP}), "IP literal", "address 127.0.0.1 is loopback")
	wantError(t, do(t, strict, map[string]any{"url": byName}), "name to loopback", "api.test resolves only to refused addresses", "loopback")
	if n := srv.hits.Load(); n != 0 {
		t.Fatalf("server was hit %d times, want 0", n)
	}

	open := newTool(t, Policy{Resolver: res, AllowPrivate: true})
	for _, u := range []string{byIP, byName} {
		got := wantOK(t, do(t, open, map[string]any{"url": u}), u)
		want := "HTTP/1.1 200 OK\ncontent-type: text/plain\ncontent-length: 5\n\nhello"
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("GET %s mismatch (-want +got):\n%s", u, diff)
		}
	}
}

// TestConnectTimeGuard: the name resolves to a public address when checked, then to loopback
// when the transport connects. The dialer's Control hook refuses the connection.
func TestConnectTimeGuard(t *testing.T) {
	srv := newServer(t, hello)
	res := newResolver(map[string][]string{"rebind.test": {"93.184.215.14", "127.0.0.1"}})
	tl := newTool(t, Policy{Resolver: res})
	r := do(t, tl, map[string]any{"url": "http://rebind.test:" + srv.port() + "/"})
	wantError(t, r, "rebinding", "connection refused by the address guard", "address 127.0.0.1 is loopback")
	if n := res.count("rebind.test"); n != 2 {
		t.Errorf("resolver called %d times, want 2 (check, then connect)", n)
	}
	if n := srv.hits.Load(); n != 0 {
		t.Fatalf("server was hit %d times, want 0", n)
	}
}

// TestControlHook calls the dialer's hook directly with the addresses a socket might connect to.
func TestControlHook(t *testing.T) {
	tl := newTool(t, Policy{})
	for _, addr := range []string{"127.0.0.1:80", "[::1]:443", "[::ffff:127.0.0.1]:80", "169.254.169.254:80", "10.0.0.1:22", "[fe80::1%lo]:80"} {
		if err := tl.control("tcp", addr, nil); err == nil {
			t.Errorf("control(%q) = nil, want refused", addr)
		}
	}
	if err := tl.control("tcp", "93.184.215.14:443", nil); err != nil {
		t.Errorf("control(public) = %v, want nil", err)
	}
	if err := tl.control("tcp", "not-an-address", nil); err == nil {
		t.Error("control(garbage) = nil, want an error")
	}
}

func TestURLChecks(t *testing.T) {
	res := newResolver(map[string][]string{"localhost": {"127.0.0.1"}, "api.example.com": {"93.184.215.14"}})
	tl := newTool(t, Policy{Resolver: res, Hosts: []string{"api.example.com", "*.cdn.example.com", "localhost"}})
	tests := []struct {
		url  string
		want string
	}{
		{"http://user:pass@api.example.com/", "user information"},
		{"http://user@api.example.com/", "user information"},
		{"ftp://api.example.com/", `scheme "ftp" is not allowed`},
		{"file:///etc/passwd", `scheme "file" is not allowed`},
		{"gopher://api.example.com/", "not allowed"},
		{"http:api.example.com", "has no host"},
		{"//api.example.com/x", `scheme "" is not allowed`},
		{"http:///x", "has no host"},
		{"http://evil.com/", `host "evil.com:80" is not in the allowed hosts`},
		{"http://api.example.com.evil.com/", "not in the allowed hosts"},
		{"http://cdn.example.com/", "not in the allowed hosts"},
		{"http://localhost/", "localhost resolves only to refused addresses"},
		{"http://127.0.0.1/", "loopback"},
		{"http://[::1]/", "loopback"},
		{"http://[::ffff:127.0.0.1]/", "IPv4-mapped loopback"},
		{"http://[::ffff:7f00:1]/", "IPv4-mapped loopback"},
		{"http://[0:0:0:0:0:ffff:7f00:0001]/", "IPv4-mapped loopback"},
		{"http://[64:ff9b::7f00:1]/", "NAT64 of loopback"},
		{"http://[2002:7f00:1::]/", "6to4 of loopback"},
		{"http://[fe80::1%25eth0]/", "zoned"},
		{"http://[::]/", "unspecified"},
		{"http://0.0.0.0/", "unspecified"},
		{"http://169.254.169.254/latest/meta-data/", "cloud metadata"},
		{"http://2130706433/", "non-standard spelling"},
		{"http://0x7f000001/", "non-standard spelling"},
		{"http://0x7f.1/", "non-standard spelling"},
		{"http://127.1/", "non-standard spelling"},
		{"http://017700000001/", "non-standard spelling"},
		{"http://%31%32%37.0.0.1/", "bad URL"},
		{"http://api.example.com:99999/", "not a port number"},
		{"http://ÀPI.example.com/", "not ASCII"},
		{"not a url", "scheme"},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			wantError(t, do(t, tl, map[string]any{"url": tc.url}), tc.url, tc.want)
		})
	}
}

func TestAllowlistEndToEnd(t *testing.T) {
	srv := newServer(t, hello)
	res := newResolver(map[string][]string{
		"api.example.com": {"127.0.0.1"}, "v1.cdn.example.com": {"127.0.0.1"}, "evil.test": {"127.0.0.1"},
	})
	tl := newTool(t, Policy{Resolver: res, AllowPrivate: true, Hosts: []string{"api.example.com", "*.cdn.example.com:" + srv.port()}})
	for _, host := range []string{"api.example.com", "v1.cdn.example.com", "API.EXAMPLE.COM."} {
		wantOK(t, do(t, tl, map[string]any{"url": "http://" + host + ":" + srv.port() + "/"}), host)
	}
	wantError(t, do(t, tl, map[string]any{"url": "http://evil.test:" + srv.port() + "/"}), "evil", "not in the allowed hosts")
	wantError(t, do(t, tl, map[string]any{"url": "http://v1.cdn.example.com:1/"}), "wrong port", "not in the allowed hosts")
	if n := srv.hits.Load(); n != 3 {
		t.Errorf("server hits = %d, want 3", n)
	}
}

func TestRedirects(t *testing.T) {
	target := newServer(t, hello)
	res := newResolver(map[string][]string{
		"api.example.com": {"127.0.0.1"}, "evil.test": {"127.0.0.1"},
	})
	var redirectTo atomic.Value
	origin := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/loop" {
			http.Redirect(w, r, "/loop", http.StatusFound)
			return
		}
		http.Redirect(w, r, redirectTo.Load().(string), http.StatusFound)
	})
	tl := newTool(t, Policy{Resolver: res, AllowPrivate: true, Hosts: []string{"api.example.com"}})
	from := "http://api.example.com:" + origin.port()

	redirectTo.Store("http://evil.test:" + target.port() + "/")
	wantError(t, do(t, tl, map[string]any{"url": from + "/go"}), "to disallowed host", "redirect to http://evil.test:", "refused", "not in the allowed hosts")
	redirectTo.Store("http://user:pw@api.example.com:" + target.port() + "/")
	wantError(t, do(t, tl, map[string]any{"url": from + "/go"}), "to userinfo", "user information")
	redirectTo.Store("file:///etc/passwd")
	wantError(t, do(t, tl, map[string]any{"url": from + "/go"}), "to file", "refused")
	wantError(t, do(t, tl, map[string]any{"url": from + "/loop"}), "loop", "stopped after 5 redirects")
	if n := target.hits.Load(); n != 0 {
		t.Errorf("target hit %d times through refused redirects", n)
	}
	// An allowed redirect is followed.
	redirectTo.Store("http://api.example.com:" + target.port() + "/final")
	wantOK(t, do(t, tl, map[string]any{"url": from + "/go"}), "allowed redirect")
	if n := target.hits.Load(); n != 1 {
		t.Errorf("target hits = %d, want 1", n)
	}
	none := newTool(t, Policy{Resolver: res, AllowPrivate: true, MaxRedirects: -1})
	wantError(t, do(t, none, map[string]any{"url": from + "/go"}), "no redirects", "stopped after 0 redirects")
}

// TestRedirectToLoopback: a "public" server (127.0.0.2, treated as public by the test hook)
// redirects to loopback, by IP literal and by a name that resolves to it. Both are refused,
// the first by the URL check of the hop, the second by the connect-time guard.
func TestRedirectToLoopback(t *testing.T) {
	internal := newServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "internal secrets") })
	var redirectTo atomic.Value
	public := newServerOn(t, "127.0.0.2", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, redirectTo.Load().(string), http.StatusFound)
	})
	res := newResolver(map[string][]string{"public.test": {"127.0.0.2"}, "sneaky.test": {"127.0.0.1"}})
	tl := newTool(t, Policy{Resolver: res})
	treatAsPublic(tl, "127.0.0.2")
	from := "http://public.test:" + public.port() + "/"

	redirectTo.Store("http://127.0.0.1:" + internal.port() + "/")
	wantError(t, do(t, tl, map[string]any{"url": from}), "redirect to 127.0.0.1", "redirect to http://127.0.0.1:", "loopback")
	redirectTo.Store("http://[::ffff:127.0.0.1]:" + internal.port() + "/")
	wantError(t, do(t, tl, map[string]any{"url": from}), "redirect to mapped", "loopback")
	redirectTo.Store("http://sneaky.test:" + internal.port() + "/")
	wantError(t, do(t, tl, map[string]any{"url": from}), "redirect to a name", "connection refused by the address guard", "loopback")
	if n := internal.hits.Load(); n != 0 {
		t.Fatalf("internal server hit %d times", n)
	}
	if n := public.hits.Load(); n != 3 {
		t.Errorf("public server hits = %d, want 3", n)
	}
}

func TestNoProxyFromEnvironment(t *testing.T) {
	proxy := newServer(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "via proxy") })
	t.Setenv("HTTP_PROXY", proxy.URL)
	t.Setenv("http_proxy", proxy.URL)
	t.Setenv("HTTPS_PROXY", proxy.URL)
	t.Setenv("NO_PROXY", "")
	srv := newServer(t, hello)
	res := newResolver(map[string][]string{"api.example.com": {"127.0.0.1"}})
	tl := newTool(t, Policy{Resolver: res, AllowPrivate: true})
	got := wantOK(t, do(t, tl, map[string]any{"url": "http://api.example.com:" + srv.port() + "/"}), "direct")
	if !strings.HasSuffix(got, "hello") || proxy.hits.Load() != 0 {
		t.Errorf("request went through the environment's proxy (proxy hits %d): %q", proxy.hits.Load(), got)
	}
}

func TestHeadersAndMethods(t *testing.T) {
	var seen atomic.Value
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		seen.Store(fmt.Sprintf("%s %s host=%s auth=%s body=%s", r.Method, r.URL.Path, r.Host, r.Header.Get("Authorization"), b))
		w.WriteHeader(http.StatusCreated)
	})
	tl := newTool(t, Policy{AllowPrivate: true})
	u := srv.URL + "/items"
	wantOK(t, do(t, tl, map[string]any{"url": u, "method": "post", "body": `{"a":1}`, "headers": map[string]any{"Authorization": "Bearer x", "Host": srv.Listener.Addr().String()}}), "post")
	if got, want := seen.Load(), "POST /items host="+srv.Listener.Addr().String()+" auth=Bearer x body={\"a\":1}"; got != want {
		t.Errorf("server saw %q, want %q", got, want)
	}
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"url": u, "headers": map[string]any{"Host": "internal.corp"}}, `Host header "internal.corp" differs from the URL's host`},
		{map[string]any{"url": u, "headers": map[string]any{"Transfer-Encoding": "chunked"}}, "is not allowed (hop-by-hop"},
		{map[string]any{"url": u, "headers": map[string]any{"connection": "close"}}, "is not allowed"},
		{map[string]any{"url": u, "headers": map[string]any{"Proxy-Authorization": "x"}}, "is not allowed"},
		{map[string]any{"url": u, "headers": map[string]any{"Content-Length": "1"}}, "is not allowed"},
		{map[string]any{"url": u, "headers": map[string]any{"X-A": "1\r\nHost: evil"}}, "line break"},
		{map[string]any{"url": u, "headers": map[string]any{"Bad Name": "1"}}, "not a valid HTTP token"},
		{map[string]any{"url": u, "headers": map[string]any{"X-N": 1.0}}, "value must be a string"},
		{map[string]any{"url": u, "headers": "X-A: 1"}, `"headers" must be an object`},
		{map[string]any{"url": u, "method": "CONNECT"}, `method "CONNECT" is not allowed`},
		{map[string]any{"url": u, "method": "TRACE"}, `method "TRACE" is not allowed`},
		{map[string]any{"url": u, "timeout": -1.0}, "positive number of seconds"},
		{map[string]any{"url": u, "timeout": "5"}, "must be a number of seconds"},
		{map[string]any{"url": u, "follow": true}, "unknown argument follow"},
		{map[string]any{}, `missing required argument "url"`},
	}
	for _, tc := range tests {
		wantError(t, do(t, tl, tc.args), fmt.Sprint(tc.args), tc.want)
	}
	getOnly := newTool(t, Policy{AllowPrivate: true, Methods: []string{"GET"}})
	wantError(t, do(t, getOnly, map[string]any{"url": u, "method": "DELETE"}), "delete", `method "DELETE" is not allowed (allowed: GET)`)
}

func TestResponses(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, strings.Repeat("é", 1000)) // 2000 bytes
		case "/missing":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `{"error":"not found"}`)
		case "/binary":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"))
		case "/slow":
			<-r.Context().Done()
		case "/moved":
			w.Header().Set("Location", "/elsewhere")
			w.WriteHeader(http.StatusTeapot)
		}
	})
	tl := newTool(t, Policy{AllowPrivate: true, MaxResponseBytes: 1001})
	r := do(t, tl, map[string]any{"url": srv.URL + "/big"})
	got := wantOK(t, r, "big")
	want := "HTTP/1.1 200 OK\ncontent-type: text/plain\ncontent-length: 2000\n\n" + strings.Repeat("é", 500) + "\n[awf: body truncated at 1001 bytes]\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("capped body mismatch (-want +got):\n%s", diff)
	}
	if !r.Truncated {
		t.Error("Truncated = false, want true")
	}
	got = wantOK(t, do(t, tl, map[string]any{"url": srv.URL + "/missing"}), "404 is a result")
	if want := "HTTP/1.1 404 Not Found\ncontent-type: application/json\ncontent-length: 21\n\n{\"error\":\"not found\"}"; got != want {
		t.Errorf("404 output = %q, want %q", got, want)
	}
	got = wantOK(t, do(t, tl, map[string]any{"url": srv.URL + "/binary"}), "binary")
	if !strings.Contains(got, "[awf: binary body (image/png), 16 bytes read, not shown]") {
		t.Errorf("binary output = %q", got)
	}
	got = wantOK(t, do(t, tl, map[string]any{"url": srv.URL + "/moved"}), "location")
	if !strings.Contains(got, "HTTP/1.1 418 I'm a teapot\n") || !strings.Contains(got, "location: /elsewhere\n") {
		t.Errorf("location output = %q", got)
	}
	got = wantOK(t, do(t, tl, map[string]any{"url": srv.URL + "/missing", "method": "HEAD"}), "head")
	if !strings.HasSuffix(got, "content-length: 21\n\n") {
		t.Errorf("HEAD output = %q", got)
	}
	wantError(t, do(t, tl, map[string]any{"url": srv.URL + "/slow", "timeout": 0.05}), "timeout", "timed out after 50ms")
	wantError(t, do(t, tl, map[string]any{"url": "http://nonexistent.invalid/"}), "dns", "resolve nonexistent.invalid")
}

// TestPolicyTimeoutCoversTheBody: the policy's timeout bounds the whole exchange, a body that
// trickles after prompt headers included.
func TestPolicyTimeoutCoversTheBody(t *testing.T) {
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "1000")
		w.WriteHeader(http.StatusOK)
		for {
			w.Write([]byte("x"))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
	tl := newTool(t, Policy{AllowPrivate: true, Timeout: 200 * time.Millisecond})
	wantError(t, do(t, tl, map[string]any{"url": srv.URL}), "slow body", "reading the response body: timed out after 200ms")
}

func TestConnectionErrorIsResult(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	tl := newTool(t, Policy{AllowPrivate: true})
	wantError(t, do(t, tl, map[string]any{"url": "http://" + addr + "/"}), "refused", "GET http://"+addr+"/", "connection refused")
}

func TestMetaSchemaAnnotations(t *testing.T) {
	tl := newTool(t, Policy{Hosts: []string{"api.example.com"}})
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"url": "https://x.example/a"}, "GET https://x.example/a"},
		{map[string]any{"url": "https://u:secret@x.example/", "method": "post"}, "POST https://u:xxxxx@x.example/"},
	} {
		if got := tl.Meta(tc.args); got != tc.want {
			t.Errorf("Meta(%v) = %q, want %q", tc.args, got, tc.want)
		}
	}
	var s struct {
		Type                 string                    `json:"type"`
		Properties           map[string]map[string]any `json:"properties"`
		Required             []string                  `json:"required"`
		AdditionalProperties bool                      `json:"additionalProperties"`
	}
	if err := json.Unmarshal(tl.Parameters(), &s); err != nil {
		t.Fatal(err)
	}
	var names []string
	for n, p := range s.Properties {
		names = append(names, n)
		if p["description"] == "" || p["description"] == nil {
			t.Errorf("property %s has no description", n)
		}
	}
	if diff := cmp.Diff([]string{"body", "headers", "method", "timeout", "url"}, sorted(names)); diff != "" || s.Type != "object" || s.AdditionalProperties || len(s.Required) != 1 {
		t.Errorf("schema = %+v (names diff %s)", s, diff)
	}
	if tl.Annotations().ReadOnly {
		t.Error("Annotations().ReadOnly = true with POST allowed")
	}
	if !tl.AnnotationsFor(map[string]any{"url": "x"}).ReadOnly || tl.AnnotationsFor(map[string]any{"method": "POST"}).ReadOnly {
		t.Error("AnnotationsFor: GET must be read-only, POST not")
	}
	getOnly := newTool(t, Policy{Methods: []string{"GET", "HEAD"}})
	if !getOnly.Annotations().ReadOnly {
		t.Error("Annotations().ReadOnly = false with only GET and HEAD allowed")
	}
	if d := tl.Description(tool.Context{}); !strings.Contains(d, "api.example.com") || !strings.Contains(d, "refused") {
		t.Errorf("Description = %q", d)
	}
	if _, err := New(Policy{Hosts: []string{"https://x"}}); err == nil {
		t.Error("New with a URL as host pattern succeeded")
	}
	if _, err := New(Policy{Methods: []string{"CONNECT"}}); err == nil {
		t.Error("New with CONNECT succeeded")
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// FuzzCheckURL: whatever the URL, an accepted one has an http(s) scheme, no user information,
// and, when its host is an IP literal, an address the guard allows.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"http://api.example.com/", "http://[::ffff:127.0.0.1]/", "http://0x7f.1/", "https://u@h/", "http://%31%32%37.0.0.1/"} {
		f.Add(s)
	}
	tl, err := New(Policy{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := tl.checkURL(raw)
		if err != nil {
			return
		}
		if u.User != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "HTTP" && u.Scheme != "HTTPS") {
			t.Fatalf("checkURL(%q) accepted %v", raw, u)
		}
		if ip, err := netip.ParseAddr(u.Hostname()); err == nil && CheckAddr(ip, false) != nil {
			t.Fatalf("checkURL(%q) accepted blocked address %s", raw, ip)
		}
	})
}

// BenchmarkRequestLoopback measures one GET through the tool to a local server (connection
// reused), for the per-call overhead of the checks.
func BenchmarkRequestLoopback(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(hello))
	defer srv.Close()
	tl, err := New(Policy{AllowPrivate: true})
	if err != nil {
		b.Fatal(err)
	}
	inv := tool.Invocation{Args: map[string]any{"url": srv.URL + "/"}}
	for b.Loop() {
		if r := tl.Execute(context.Background(), inv); !r.Succeeded() {
			b.Fatal(r.Error)
		}
	}
}

func TestSameHost(t *testing.T) {
	tests := []struct {
		value, url string
		want       bool
	}{
		{"example.com", "https://example.com/x", true},
		{"EXAMPLE.com.", "https://example.com/x", true},
		{"example.com:443", "https://example.com/x", true},
		{"example.com:80", "https://example.com/x", false},
		{"example.com:8443", "https://example.com:8443/", true},
		{"example.com", "https://example.com:8443/", false},
		{"evil.com", "https://example.com/", false},
	}
	for _, tc := range tests {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := sameHost(tc.value, u); got != tc.want {
			t.Errorf("sameHost(%q, %s) = %v, want %v", tc.value, tc.url, got, tc.want)
		}
	}
}
