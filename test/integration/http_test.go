package integration

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"
)

// fetchResult is what httpfetch prints: the http_request tool's result.
type fetchResult struct {
	Status string `json:"status"`
	Output string `json:"output"`
	Error  string `json:"error"`
}

// TestHTTPRequestOverDockerNetwork runs the http_request tool (httpfetch, inside a container)
// against an HTTP service in another container on their own user-defined network, reached
// through Docker's DNS under two names, "web" and "other". Every address on that network is
// private, so the private-address guard meets real resolver answers.
func TestHTTPRequestOverDockerNetwork(t *testing.T) {
	t.Parallel()
	requireDocker(t)
	ctx := t.Context()
	nw, err := network.New(ctx)
	testcontainers.CleanupNetwork(t, nw)
	if err != nil {
		t.Fatalf("create network: %v", err)
	}
	web := runContainer(t, netImage,
		testcontainers.WithCmd("httpserver", "-addr", ":8080"),
		network.WithNetwork([]string{"web", "other"}, nw),
		testcontainers.WithWaitStrategy(wait.ForLog("listening on")))
	client := runContainer(t, netImage,
		testcontainers.WithCmd("sleep", "600"),
		network.WithNetwork([]string{"client"}, nw))
	info, err := web.Inspect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	webIP := info.NetworkSettings.Networks[nw.Name].IPAddress.String()

	redirect := func(to string) string { return "http://web:8080/redirect?to=" + url.QueryEscape(to) }
	tests := []struct {
		name      string
		args      []string
		wantOK    string // output prefix of a successful call
		wantError string // substring of the error of a refused one
	}{
		{"allowed name", []string{"-hosts", "web", "-allow-private", "http://web:8080/"},
			"HTTP/1.1 200 OK", ""},
		{"name not in the allowlist", []string{"-hosts", "web", "-allow-private", "http://other:8080/"},
			"", `host "other:8080" is not in the allowed hosts [web]`},
		{"address of an allowed name, by IP", []string{"-hosts", "web", "-allow-private", "http://" + webIP + ":8080/"},
			"", "is not in the allowed hosts"},
		{"private address refused", []string{"-hosts", "web", "http://web:8080/"},
			"", "host web resolves only to refused addresses: address " + webIP + " is private (RFC 1918)"},
		{"private address refused with any host allowed", []string{"-hosts", "*", "http://other:8080/"},
			"", "private (RFC 1918)"},
		{"redirect to an allowed host", []string{"-hosts", "web", "-allow-private", redirect("http://web:8080/final")},
			"HTTP/1.1 200 OK", ""},
		{"redirect to a host not allowed", []string{"-hosts", "web", "-allow-private", redirect("http://other:8080/")},
			"", "redirect to http://other:8080/ refused"},
		{"redirect to the metadata endpoint", []string{"-hosts", "web,other", "-allow-private", redirect("http://169.254.169.254/latest/meta-data/")},
			"", "cloud metadata endpoint"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, err := client.Exec(t.Context(), append([]string{"httpfetch"}, tc.args...))
			if err != nil {
				t.Fatalf("exec httpfetch: %v", err)
			}
			o := demux(t, out)
			var res fetchResult
			if err := json.Unmarshal([]byte(o.stdout), &res); err != nil || code != 0 {
				t.Fatalf("httpfetch %q: exit %d, stdout %q, stderr %q (%v)", tc.args, code, o.stdout, o.stderr, err)
			}
			if tc.wantOK != "" {
				if res.Status != "ok" || !strings.HasPrefix(res.Output, tc.wantOK) || !strings.Contains(res.Output, "hello from web:8080") {
					t.Errorf("http_request %q = %+v, want ok with %q from web", tc.args, res, tc.wantOK)
				}
				return
			}
			if res.Status != "error" || !strings.Contains(res.Error, tc.wantError) {
				t.Errorf("http_request %q = %+v, want an error containing %q", tc.args, res, tc.wantError)
			}
		})
	}
}
