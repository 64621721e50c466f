package httptool

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/awf-dev/awf/internal/domain/tool"
)

// Name returns "http_request".
func (t *Tool) Name() string { return "http_request" }

// Description tells the model what the tool returns and where it may go.
func (t *Tool) Description(tool.Context) string {
	hosts := "any public host"
	if len(t.hosts) > 0 {
		var raw []string
		for _, h := range t.hosts {
			raw = append(raw, h.raw)
		}
		hosts = strings.Join(raw, ", ")
	}
	private := "Private, loopback and link-local addresses are refused."
	if t.allowPrivate {
		private = "Private and loopback addresses are allowed; cloud metadata endpoints are not."
	}
	return fmt.Sprintf("Make an HTTP or HTTPS request. Output: the status line, the content-type, content-length and location headers, "+
		"a blank line, then the body as text (at most %d bytes; binary bodies are summarised). "+
		"A non-2xx status is a normal result: read the status line. Redirects are followed (at most %d), each one checked. "+
		"timeout is in seconds, at most %g. Methods: %s. Allowed hosts: %s. %s "+
		"Credentials go in headers; user:password@ in URLs is refused.",
		t.maxBody, t.maxRedirects, t.timeout.Seconds(), strings.Join(t.methods, ", "), hosts, private)
}

// Parameters returns the strict schema of {url, method?, headers?, body?, timeout?}.
func (t *Tool) Parameters() json.RawMessage {
	s := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"url":    map[string]any{"type": "string", "description": "Absolute http:// or https:// URL."},
			"method": map[string]any{"type": "string", "enum": t.methods, "description": "HTTP method (default GET)."},
			"headers": map[string]any{
				"type":                 "object",
				"additionalProperties": map[string]any{"type": "string"},
				"description":          "Request headers, name to value. Host, Content-Length and hop-by-hop headers are refused.",
			},
			"body":    map[string]any{"type": "string", "description": "Request body text."},
			"timeout": map[string]any{"type": "number", "exclusiveMinimum": 0, "description": fmt.Sprintf("Timeout in seconds (default and maximum %g).", t.timeout.Seconds())},
		},
		"required":             []string{"url"},
		"additionalProperties": false,
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // static data: cannot fail
	}
	return b
}

// safeMethods do not change anything on the server, by HTTP's definition.
var safeMethods = []string{"GET", "HEAD", "OPTIONS"}

// Annotations are read-only only when the policy allows safe methods alone; use AnnotationsFor
// to know about one call.
func (t *Tool) Annotations() tool.Annotations {
	ro := true
	for _, m := range t.methods {
		ro = ro && slices.Contains(safeMethods, m)
	}
	return tool.Annotations{ReadOnly: ro, Idempotent: ro, Tags: []string{"http", "network"}, Source: "builtin"}
}

// AnnotationsFor returns the annotations of one call: a GET, HEAD or OPTIONS request is
// read-only and idempotent, so the engine may run it in parallel with other read-only calls.
func (t *Tool) AnnotationsFor(args map[string]any) tool.Annotations {
	a := t.Annotations()
	m, _ := args["method"].(string)
	if m == "" {
		m = "GET"
	}
	if slices.Contains(safeMethods, strings.ToUpper(m)) {
		a.ReadOnly, a.Idempotent = true, true
	}
	return a
}

// Meta summarises a call: "GET https://example.com/x".
func (t *Tool) Meta(args map[string]any) string {
	m, _ := args["method"].(string)
	if m == "" {
		m = "GET"
	}
	u, _ := args["url"].(string)
	if pu, err := url.Parse(u); err == nil {
		u = pu.Redacted()
	}
	return strings.ToUpper(m) + " " + u
}

// Execute makes the request.
func (t *Tool) Execute(ctx context.Context, call tool.Invocation) tool.Result {
	req, timeout, err := t.buildRequest(ctx, call.Args)
	if err != nil {
		return failure(err)
	}
	what := req.Method + " " + req.URL.Redacted()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := t.precheck(ctx, req.URL.Hostname()); err != nil {
		return failure(fmt.Errorf("%s: %w", what, err))
	}
	resp, err := t.client.Do(req.WithContext(ctx))
	if err != nil {
		return failure(described(what, err, timeout))
	}
	defer resp.Body.Close()
	body, truncated, err := readCapped(resp.Body, t.maxBody)
	if err != nil {
		return failure(described(what+": reading the response body", err, timeout))
	}
	res := tool.OK(render(resp, body, truncated, t.maxBody))
	res.Truncated = truncated
	return res
}

// buildRequest checks the arguments and builds the request. It returns the call's timeout.
func (t *Tool) buildRequest(ctx context.Context, m map[string]any) (*http.Request, time.Duration, error) {
	a := args(m)
	if err := a.Only("url", "method", "headers", "body", "timeout"); err != nil {
		return nil, 0, err
	}
	raw, err := a.Str("url", true)
	if err != nil {
		return nil, 0, err
	}
	method, err := a.Str("method", false)
	if err != nil {
		return nil, 0, err
	}
	method = strings.ToUpper(cmpOr(method, "GET"))
	if !slices.Contains(t.methods, method) {
		return nil, 0, refusedf(ruleRequest, "method %q is not allowed (allowed: %s)", method, strings.Join(t.methods, ", "))
	}
	u, err := t.checkURL(raw)
	if err != nil {
		return nil, 0, err
	}
	body, err := a.Str("body", false)
	if err != nil {
		return nil, 0, err
	}
	timeout, err := t.callTimeout(a)
	if err != nil {
		return nil, 0, err
	}
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, 0, fmt.Errorf("build request: %w", err)
	}
	if err := setHeaders(req, a["headers"]); err != nil {
		return nil, 0, err
	}
	if req.Header.Get("User-Agent") == "" {
		req.Header.Set("User-Agent", "awf-http_request")
	}
	return req, timeout, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// callTimeout is the call's timeout argument in seconds, capped at the policy's timeout.
func (t *Tool) callTimeout(a args) (time.Duration, error) {
	v, ok := a["timeout"]
	if !ok || v == nil {
		return t.timeout, nil
	}
	var secs float64
	switch n := v.(type) {
	case float64:
		secs = n
	case int:
		secs = float64(n)
	case json.Number:
		f, err := n.Float64()
		if err != nil {
			return 0, fmt.Errorf("argument \"timeout\" must be a number of seconds, got %s", n)
		}
		secs = f
	default:
		return 0, fmt.Errorf("argument \"timeout\" must be a number of seconds, got %T", v)
	}
	if !(secs > 0) || math.IsInf(secs, 0) {
		return 0, fmt.Errorf("argument \"timeout\" must be a positive number of seconds")
	}
	return min(time.Duration(secs*float64(time.Second)), t.timeout), nil
}

// refusedHeaders are hop-by-hop headers and headers the transport sets itself.
var refusedHeaders = []string{
	"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Content-Length",
}

// setHeaders validates and sets the model's headers. A Host header equal to the URL's host is
// dropped (it changes nothing); a different one is refused, since it would send the request
// to one server under another's name.
func setHeaders(req *http.Request, v any) error {
	if v == nil {
		return nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return fmt.Errorf("argument \"headers\" must be an object of name to string value")
	}
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, name := range names {
		value, ok := m[name].(string)
		if !ok {
			return fmt.Errorf("header %q: value must be a string", name)
		}
		if !validHeaderName(name) {
			return fmt.Errorf("header name %q is not a valid HTTP token", name)
		}
		if strings.ContainsAny(value, "\r\n\x00") {
			return fmt.Errorf("header %q: value contains a line break or NUL", name)
		}
		canon := http.CanonicalHeaderKey(name)
		if canon == "Host" {
			if !sameHost(value, req.URL) {
				return refusedf(ruleRequest, "Host header %q differs from the URL's host %q; put the host you want in the URL", value, req.URL.Host)
			}
			continue
		}
		if slices.Contains(refusedHeaders, canon) {
			return refusedf(ruleRequest, "header %q is not allowed (hop-by-hop or set by the transport)", name)
		}
		req.Header.Add(canon, value)
	}
	return nil
}

// sameHost reports whether a Host header value names the URL's host.
func sameHost(value string, u *url.URL) bool {
	v := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(value)), ".")
	h := strings.TrimSuffix(strings.ToLower(u.Host), ".")
	if v == h {
		return true
	}
	if u.Port() != "" {
		return false
	}
	name := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	def := "80"
	if strings.EqualFold(u.Scheme, "https") {
		def = "443"
	}
	return v == name || v == net.JoinHostPort(name, def)
}

// validHeaderName reports whether s is an RFC 9110 token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
