// Package engine is the small Docker Engine API client of the container sandbox backend, on
// net/http: the endpoints the backend calls (ping, image inspect, container create, attach,
// start, wait, kill, inspect, remove) and only the fields it sends or reads. It talks to an
// engine over a unix socket or TCP, negotiates the API version unless told one, and maps error
// responses to *Error values that errors.Is matches against ErrNotFound and ErrConflict; an
// engine that cannot be reached gives an error matching ErrConnectionFailed. It replaces the
// moby client, whose dependencies (API types, distribution/reference, OpenTelemetry) would be
// linked into awf and initialised at every start.
package engine

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultHost is the engine's address when neither Options.Host nor DOCKER_HOST names one.
const DefaultHost = "unix:///var/run/docker.sock"

// The API versions this client negotiates between, as the moby client it replaces did: the
// engine's own version (the API-Version header of /_ping) when it is lower than
// MaxAPIVersion, and an error when it is lower than MinAPIVersion. The fields this client
// sends mean the same in every version of that range.
const (
	MinAPIVersion = "1.40"
	MaxAPIVersion = "1.56"
)

// dummyHost is the Host header of requests over a unix socket, which has no host name; the
// moby client sends the same reserved name.
const dummyHost = "api.moby.localhost"

// Bounds on what the client reads of a response body: a JSON answer, and an error answer,
// of which only the message matters.
const (
	maxResponse  = 8 << 20
	maxErrorBody = 64 << 10
)

// Options configure a Client. The zero value talks to DefaultHost and negotiates the version.
type Options struct {
	// Host is the engine's address: unix:///path/to/socket or tcp://host[:port] (port 2375,
	// or 2376 with TLS, when missing); "" means DefaultHost.
	Host string
	// APIVersion fixes the API version ("1.41"); "" negotiates it at the first request.
	APIVersion string
	// TLS, when set, secures a tcp:// connection (https).
	TLS *tls.Config
}

// Client talks to one Docker engine. It is safe for concurrent use; Close releases its idle
// connections.
type Client struct {
	host      string  // as configured, for messages
	base      url.URL // scheme, host and base path of every request
	transport *http.Transport
	http      *http.Client

	mu      sync.Mutex
	version string // the API version, "" until negotiated
}

// New returns a client of the engine o names. It connects to nothing: an engine that does not
// answer shows at the first request.
func New(o Options) (*Client, error) {
	host := cmp.Or(o.Host, DefaultHost)
	u, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("docker host %q: %w", host, err)
	}
	t := &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second}
	c := &Client{host: host, transport: t}
	switch u.Scheme {
	case "unix":
		sock := u.Host + u.Path
		if sock == "" {
			return nil, fmt.Errorf("docker host %q: no socket path", host)
		}
		t.DialContext = func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		}
		c.base = url.URL{Scheme: "http", Host: dummyHost}
	case "tcp":
		c.base, err = tcpBase(u, o.TLS != nil)
		if err != nil {
			return nil, fmt.Errorf("docker host %q: %w", host, err)
		}
		t.TLSClientConfig = o.TLS
	default:
		return nil, fmt.Errorf("docker host %q: unsupported scheme %q: want unix:// or tcp://", host, u.Scheme)
	}
	if o.APIVersion != "" {
		v := strings.TrimPrefix(o.APIVersion, "v")
		if _, _, err := parseVersion(v); err != nil {
			return nil, fmt.Errorf("docker API version %q: %w", o.APIVersion, err)
		}
		c.version = v
	}
	c.http = &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse // the engine never redirects; a proxy that does is not followed
	}}
	return c, nil
}

// tcpBase is the base URL of a tcp:// host: http or https, a default port, and the path as a
// prefix of every request.
func tcpBase(u *url.URL, secure bool) (url.URL, error) {
	if u.Hostname() == "" {
		return url.URL{}, errors.New("no host name")
	}
	scheme, port := "http", "2375"
	if secure {
		scheme, port = "https", "2376"
	}
	hostPort := u.Host
	if u.Port() == "" {
		hostPort = net.JoinHostPort(u.Hostname(), port)
	}
	return url.URL{Scheme: scheme, Host: hostPort, Path: strings.TrimSuffix(u.Path, "/")}, nil
}

// FromEnv returns a client configured as the docker CLI's environment says, read through
// getenv: DOCKER_HOST (else DefaultHost), DOCKER_API_VERSION (else negotiated), and for TCP
// DOCKER_CERT_PATH (a directory with ca.pem, cert.pem and key.pem, which turns TLS on) with
// DOCKER_TLS_VERIFY (set: verify the engine's certificate). These are the variables the moby
// client's FromEnv reads; docker CLI contexts are not.
func FromEnv(getenv func(string) string) (*Client, error) {
	o := Options{Host: getenv("DOCKER_HOST"), APIVersion: getenv("DOCKER_API_VERSION")}
	if dir := getenv("DOCKER_CERT_PATH"); dir != "" {
		cfg, err := tlsConfig(dir, getenv("DOCKER_TLS_VERIFY") != "")
		if err != nil {
			return nil, err
		}
		o.TLS = cfg
	}
	return New(o)
}

// tlsConfig loads the CA and the client certificate of DOCKER_CERT_PATH.
func tlsConfig(dir string, verify bool) (*tls.Config, error) {
	ca, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		return nil, fmt.Errorf("DOCKER_CERT_PATH: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("DOCKER_CERT_PATH: %s holds no PEM certificate", filepath.Join(dir, "ca.pem"))
	}
	cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	if err != nil {
		return nil, fmt.Errorf("DOCKER_CERT_PATH: %w", err)
	}
	return &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		InsecureSkipVerify: !verify}, nil // #nosec G402: DOCKER_TLS_VERIFY unset asks for it, as for the docker CLI
}

// Close closes the client's idle connections. Streams from AttachContainer stay open until
// their own Close.
func (c *Client) Close() error {
	c.transport.CloseIdleConnections()
	return nil
}

// Ping asks the engine whether it answers and returns the highest API version it supports.
func (c *Client) Ping(ctx context.Context) (string, error) {
	const op = "ping docker engine"
	req, err := c.request(ctx, http.MethodGet, c.urlOf(c.base.Path+"/_ping", nil), nil)
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	resp, err := c.do(op, req)
	if err != nil {
		return "", err
	}
	drainClose(resp.Body)
	v := resp.Header.Get("API-Version")
	if v == "" {
		return "", fmt.Errorf("%s: the engine did not say its API version", op)
	}
	return v, nil
}

// apiVersion returns the version to put in request paths, negotiating it with the first
// request: one ping, whose result later requests reuse. A failed negotiation is tried again
// by the next request.
func (c *Client) apiVersion(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version != "" {
		return c.version, nil
	}
	v, err := c.Ping(ctx)
	if err != nil {
		return "", err
	}
	if c.version, err = negotiate(v); err != nil {
		return "", err
	}
	return c.version, nil
}

// negotiate picks the API version for an engine whose highest is engine.
func negotiate(engine string) (string, error) {
	engine = strings.TrimPrefix(engine, "v")
	older, err := versionLess(engine, MinAPIVersion)
	if err != nil {
		return "", fmt.Errorf("docker engine API version %q: %w", engine, err)
	}
	if older {
		return "", fmt.Errorf("docker engine API version %s is too old: awf needs %s or later (Docker 19.03)", engine, MinAPIVersion)
	}
	if less, _ := versionLess(engine, MaxAPIVersion); less {
		return engine, nil
	}
	return MaxAPIVersion, nil
}

// versionLess reports whether API version a is lower than b.
func versionLess(a, b string) (bool, error) {
	aMaj, aMin, err := parseVersion(a)
	if err != nil {
		return false, err
	}
	bMaj, bMin, err := parseVersion(b)
	if err != nil {
		return false, err
	}
	return aMaj < bMaj || aMaj == bMaj && aMin < bMin, nil
}

// parseVersion splits "1.41" into 1 and 41.
func parseVersion(v string) (major, minor int, err error) {
	ma, mi, ok := strings.Cut(v, ".")
	if ok {
		major, err = strconv.Atoi(ma)
	}
	if ok && err == nil {
		minor, err = strconv.Atoi(mi)
	}
	if !ok || err != nil || major < 0 || minor < 0 {
		return 0, 0, errors.New("want MAJOR.MINOR")
	}
	return major, minor, nil
}

// urlOf is the URL of path p (already carrying the base path) with query q.
func (c *Client) urlOf(p string, q url.Values) string {
	u := c.base
	u.Path = p
	u.RawQuery = q.Encode()
	return u.String()
}

// request builds a request; a non-nil in is sent as its JSON body.
func (c *Client) request(ctx context.Context, method, target string, in any) (*http.Request, error) {
	var body io.Reader
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", "awf")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// send sends a request to the versioned API path p (as "/containers/create") and returns a
// response whose status is below 400, which the caller closes. hdr is added to the request.
func (c *Client) send(ctx context.Context, op, method, p string, q url.Values, in any, hdr http.Header) (*http.Response, error) {
	v, err := c.apiVersion(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	req, err := c.request(ctx, method, c.urlOf(c.base.Path+"/v"+v+p, q), in)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	return c.do(op, req)
}

// do sends req: a transport failure becomes a connection error (unless the context ended),
// an error status an *Error.
func (c *Client) do(op string, req *http.Request) (*http.Response, error) {
	resp, err := c.http.Do(req)
	if err != nil {
		if ctxErr := req.Context().Err(); ctxErr != nil {
			return nil, fmt.Errorf("%s: %w", op, ctxErr)
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its text repeats the method and URL
		}
		return nil, fmt.Errorf("%s: %w at %s: %w", op, ErrConnectionFailed, c.host, err)
	}
	if resp.StatusCode >= 400 {
		defer drainClose(resp.Body)
		return nil, readError(op, resp)
	}
	return resp, nil
}

// call sends a request to the versioned API path p and decodes the JSON answer into out (nil:
// the answer is not read).
func (c *Client) call(ctx context.Context, op, method, p string, q url.Values, in, out any) error {
	resp, err := c.send(ctx, op, method, p, q, in, nil)
	if err != nil {
		return err
	}
	defer drainClose(resp.Body)
	if out == nil {
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxResponse)).Decode(out); err != nil {
		return fmt.Errorf("%s: decode the answer: %w", op, err)
	}
	return nil
}

// drainClose reads a little of what is left of a body, so that the connection can be reused,
// and closes it.
func drainClose(body io.ReadCloser) {
	io.Copy(io.Discard, io.LimitReader(body, 4<<10))
	body.Close()
}
