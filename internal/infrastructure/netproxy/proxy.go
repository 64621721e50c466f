// Package netproxy is the awf-side filtering proxy through which sandboxed tool processes
// reach the hosts a policy allows. The sandbox lets such processes open TCP connections to
// the proxy's loopback port only (Landlock), and sets HTTP_PROXY/HTTPS_PROXY; the proxy
// accepts CONNECT tunnels and plain HTTP requests to allowed hosts, and checks the address it
// actually connects to with the same guard as http_request (no loopback, private, link-local
// or metadata addresses unless the policy names that address literally).
package netproxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/awf-dev/awf/internal/infrastructure/tools/httptool"
)

// Proxy is one running proxy for one host allowlist. Safe for concurrent use.
type Proxy struct {
	hosts []string
	ln    net.Listener
	srv   *http.Server
	tr    *http.Transport
}

// Start listens on 127.0.0.1 (a free port) and serves until Close. hosts are patterns:
// "api.example.com", "*.example.com" (subdomains, not the name itself), "host:port", "*".
func Start(hosts []string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("filtering proxy: %w", err)
	}
	p := &Proxy{hosts: hosts, ln: ln}
	p.tr = &http.Transport{Proxy: nil, DialContext: p.dial, MaxIdleConns: 16, IdleConnTimeout: 30 * time.Second}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: 30 * time.Second}
	go p.srv.Serve(ln)
	return p, nil
}

// Port is the loopback port the proxy listens on.
func (p *Proxy) Port() int { return p.ln.Addr().(*net.TCPAddr).Port }

// Close stops the proxy and its connections.
func (p *Proxy) Close() error {
	p.tr.CloseIdleConnections()
	return p.srv.Close()
}

// ServeHTTP tunnels CONNECT requests and forwards absolute-URI requests to allowed hosts.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	if !r.URL.IsAbs() || (r.URL.Scheme != "http" && r.URL.Scheme != "https") {
		http.Error(w, "awf proxy: only absolute http(s) URLs and CONNECT", http.StatusBadRequest)
		return
	}
	if err := p.allow(r.URL.Host, r.URL.Scheme); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Connection")
	out.Header.Del("Proxy-Authorization")
	resp, err := p.tr.RoundTrip(out)
	if err != nil {
		http.Error(w, "awf proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	if err := p.allow(r.Host, "https"); err != nil {
		http.Error(w, err.Error(), http.StatusForbidden)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	upstream, err := p.dial(ctx, "tcp", r.Host)
	cancel()
	if err != nil {
		http.Error(w, "awf proxy: "+err.Error(), http.StatusBadGateway)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		upstream.Close()
		http.Error(w, "awf proxy: cannot tunnel", http.StatusInternalServerError)
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		upstream.Close()
		return
	}
	client.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); io.Copy(upstream, buf); closeWrite(upstream) }()
	go func() { defer wg.Done(); io.Copy(client, upstream); closeWrite(client) }()
	wg.Wait()
	client.Close()
	upstream.Close()
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(interface{ CloseWrite() error }); ok {
		tc.CloseWrite()
	}
}

// allow checks hostport (from a CONNECT line or a URL) against the allowlist.
func (p *Proxy) allow(hostport, scheme string) error {
	host, port := splitHostPort(hostport, scheme)
	for _, pat := range p.hosts {
		if matches(pat, host, port) {
			return nil
		}
	}
	return fmt.Errorf("awf proxy: host %q is not in the sandbox's hosts %v", host, p.hosts)
}

// dial connects with the connect-time guard: the address actually dialled must be public,
// unless the allowlist names that address literally.
func (p *Proxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: 30 * time.Second, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return err
		}
		ip := ap.Addr().Unmap()
		if p.literal(ip) {
			return nil
		}
		return httptool.CheckAddr(ip, false)
	}}
	return d.DialContext(ctx, network, addr)
}

// literal reports whether the allowlist names ip itself.
func (p *Proxy) literal(ip netip.Addr) bool {
	for _, pat := range p.hosts {
		h, _ := splitHostPort(pat, "")
		if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil && a.Unmap() == ip {
			return true
		}
	}
	return false
}

func splitHostPort(hostport, scheme string) (host, port string) {
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		h, p = hostport, ""
		switch scheme {
		case "http":
			p = "80"
		case "https":
			p = "443"
		}
	}
	return strings.ToLower(strings.Trim(h, "[]")), p
}

// matches applies one allowlist pattern; a pattern without a port allows any port.
func matches(pattern, host, port string) bool {
	if pattern == "*" {
		return true
	}
	ph, pp := splitHostPort(pattern, "")
	if pp != "" && pp != port {
		return false
	}
	if suffix, ok := strings.CutPrefix(ph, "*."); ok {
		return strings.HasSuffix(host, "."+suffix)
	}
	return ph == host
}

// Pool keeps one proxy per distinct allowlist for the life of a process. Safe for concurrent
// use.
type Pool struct {
	mu      sync.Mutex
	proxies map[string]*Proxy
}

// Port returns the port of the proxy for hosts, starting it on first use.
func (pl *Pool) Port(hosts []string) (int, error) {
	key := strings.Join(hosts, "\x00")
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if p, ok := pl.proxies[key]; ok {
		return p.Port(), nil
	}
	p, err := Start(hosts)
	if err != nil {
		return 0, err
	}
	if pl.proxies == nil {
		pl.proxies = map[string]*Proxy{}
	}
	pl.proxies[key] = p
	return p.Port(), nil
}

// Close stops every proxy.
func (pl *Pool) Close() error {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	var errs []error
	for _, p := range pl.proxies {
		errs = append(errs, p.Close())
	}
	pl.proxies = nil
	return errors.Join(errs...)
}
