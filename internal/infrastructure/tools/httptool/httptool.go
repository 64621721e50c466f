// Package httptool implements awf's in-process http_request tool with the sandbox's L1 network
// enforcement built in: URLs are parsed and checked against a host allowlist, every connection
// is checked at connect time against the address actually dialled (so a DNS answer that
// changes between check and connect is still caught), redirects are re-checked at each hop,
// proxies from the environment are ignored and response bodies are capped. Network isolation
// of spawned processes is another layer's job.
package httptool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// Defaults for a zero Policy.
const (
	DefaultMaxResponseBytes = 256 << 10
	DefaultTimeout          = 30 * time.Second
	DefaultMaxRedirects     = 5
)

// DefaultMethods are the methods allowed when Policy.Methods is nil.
var DefaultMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}

// Resolver looks host names up. *net.Resolver implements it; tests pass their own to map
// names to chosen addresses.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Policy says where http_request may go.
type Policy struct {
	// Hosts is the allowlist: "api.example.com", "*.example.com" (subdomains at any depth,
	// not example.com itself), "example.com:8443", IP literals ("10.0.0.5", "[::1]:8080"),
	// "*". A pattern without a port allows any port. Empty allows any public host.
	Hosts []string
	// AllowPrivate lets requests reach loopback, private, link-local, CGNAT and ULA
	// addresses (never metadata endpoints, multicast or unspecified addresses; see CheckAddr).
	AllowPrivate bool
	// MaxResponseBytes caps the body returned to the model; the head is kept.
	MaxResponseBytes int64
	// Timeout is the default and the maximum time of one call, connection to last body byte.
	Timeout time.Duration
	// MaxRedirects caps redirects followed; 0 means DefaultMaxRedirects, negative none.
	MaxRedirects int
	// Methods lists the allowed methods; nil means DefaultMethods.
	Methods []string
	// Resolver resolves host names; nil means net.DefaultResolver.
	Resolver Resolver
}

// Tool is the http_request tool: {url, method?, headers?, body?, timeout?}. A completed
// exchange is a successful call whatever its status (the output starts with the status line,
// so the model sees 404 or 500); refusals by policy, network errors and timeouts are error
// results. Safe for concurrent use.
type Tool struct {
	hosts        []hostPattern
	allowPrivate bool
	maxBody      int64
	timeout      time.Duration
	maxRedirects int
	methods      []string
	resolver     Resolver
	client       *http.Client
	// check is CheckAddr with the policy's AllowPrivate; tests replace it to treat a
	// loopback address as public, so the guard itself can be exercised end to end.
	check func(netip.Addr) error
}

var (
	_ tool.Tool       = (*Tool)(nil)
	_ tool.Summarizer = (*Tool)(nil)
	_ tool.Annotated  = (*Tool)(nil)
)

// New builds the tool. It fails with a fault.Invalid error on a bad host pattern or method.
func New(p Policy) (*Tool, error) {
	t := &Tool{
		allowPrivate: p.AllowPrivate,
		maxBody:      p.MaxResponseBytes,
		timeout:      p.Timeout,
		maxRedirects: p.MaxRedirects,
		resolver:     p.Resolver,
	}
	if t.maxBody <= 0 {
		t.maxBody = DefaultMaxResponseBytes
	}
	if t.timeout <= 0 {
		t.timeout = DefaultTimeout
	}
	switch {
	case t.maxRedirects == 0:
		t.maxRedirects = DefaultMaxRedirects
	case t.maxRedirects < 0:
		t.maxRedirects = 0
	}
	if t.resolver == nil {
		t.resolver = net.DefaultResolver
	}
	for _, h := range p.Hosts {
		hp, err := parseHostPattern(h)
		if err != nil {
			return nil, fault.New(fault.Invalid, "http policy: %w", err)
		}
		t.hosts = append(t.hosts, hp)
	}
	methods := p.Methods
	if methods == nil {
		methods = DefaultMethods
	}
	for _, m := range methods {
		m = strings.ToUpper(m)
		if !slices.Contains(DefaultMethods, m) {
			return nil, fault.New(fault.Invalid, "http policy: method %q is not supported (supported: %s)", m, strings.Join(DefaultMethods, ", "))
		}
		t.methods = append(t.methods, m)
	}
	t.check = func(a netip.Addr) error { return CheckAddr(a, t.allowPrivate) }
	t.client = t.newClient()
	return t, nil
}

// newClient builds the HTTP client: no proxy, a dialer whose Control hook checks the address
// being connected to, redirects re-checked.
func (t *Tool) newClient() *http.Client {
	dialer := &net.Dialer{
		Timeout:   10 * time.Second,
		KeepAlive: 30 * time.Second,
		Control:   t.control,
	}
	transport := &http.Transport{
		Proxy:                  nil, // never from the environment: a proxy would hide the destination
		DialContext:            t.dialContext(dialer),
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    10 * time.Second,
		MaxResponseHeaderBytes: 64 << 10,
		MaxIdleConns:           16,
		IdleConnTimeout:        30 * time.Second,
	}
	return &http.Client{Transport: transport, CheckRedirect: t.checkRedirect}
}

// control runs after the socket is created and before it connects, with the address the
// kernel will connect to. It is the check that holds whatever DNS answered before.
func (t *Tool) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("connect to %q: not an IP address and port", address)
	}
	return t.check(ap.Addr())
}

// dialContext resolves the host itself (through the policy's resolver) and dials each address
// as an IP literal, so the Control hook sees exactly what is connected to.
func (t *Tool) dialContext(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		ips, err := t.lookup(ctx, host)
		if err != nil {
			return nil, err
		}
		var errs []error
		for _, ip := range ips {
			conn, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
			if err == nil {
				return conn, nil
			}
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
		}
		return nil, errors.Join(errs...)
	}
}

// lookup returns the addresses of host: itself for an IP literal, else the resolver's answer.
func (t *Tool) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{ip}, nil
	}
	ips, err := t.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	return ips, nil
}

// checkRedirect re-applies the URL policy to every hop and caps their number.
func (t *Tool) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > t.maxRedirects {
		return &redirectError{msg: fmt.Sprintf("stopped after %d redirects (the limit)", t.maxRedirects)}
	}
	if _, err := t.checkURL(req.URL.String()); err != nil {
		return &redirectError{msg: fmt.Sprintf("redirect to %s refused: %v", req.URL.Redacted(), err), err: err}
	}
	return nil
}

// redirectError is a refused redirect.
type redirectError struct {
	msg string
	err error // the URL check's refusal, if that is why
}

func (e *redirectError) Error() string { return e.msg }

// Unwrap returns the refusal, so that failure records it as one.
func (e *redirectError) Unwrap() error { return e.err }
