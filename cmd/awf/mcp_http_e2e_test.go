package main

import (
	"bufio"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// mcpHTTPWorkflow serves one tool that runs and one the workflow denies.
const mcpHTTPWorkflow = `name: wf
tools:
  - {name: read_file, builtin: true, approval: auto}
  - {name: forbidden, description: Denied by the workflow, command: "echo never runs", approval: deny}
steps:
  - {name: a, type: shell, command: 'true'}
`

// startMCPHTTP starts `awf mcp serve --http 127.0.0.1:0` on wf.yaml and returns the URL it
// prints on stderr.
func startMCPHTTP(t *testing.T, e *env) string {
	t.Helper()
	cmd := e.cmd(t.Context(), "mcp", "serve", "--workflow", "wf.yaml", "--non-interactive", "--http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if u := re.FindString(sc.Text()); u != "" {
				found <- u
			}
		}
		close(found)
	}()
	select {
	case u, ok := <-found:
		if !ok {
			t.Fatal("awf mcp serve --http ended without printing its URL")
		}
		return u
	case <-time.After(time.Minute):
		t.Fatal("awf mcp serve --http printed no URL")
	}
	return ""
}

// An MCP client awf did not write (mark3labs/mcp-go, default options) works with
// `awf mcp serve --http`: it initializes, lists the tools, calls an allowed one and a denied
// one, and the audit log holds both calls.
func TestMCPServeHTTPWithMCPGoClient(t *testing.T) {
	e := newEnv(t)
	e.write("wf.yaml", mcpHTTPWorkflow)
	e.write("hello.txt", "hello over http\n")
	url := startMCPHTTP(t, e)

	c, err := mcpclient.NewStreamableHttpClient(url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := t.Context()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	var initReq mcp.InitializeRequest
	initReq.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	initReq.Params.ClientInfo = mcp.Implementation{Name: "mcp-go-e2e", Version: "1"}
	if _, err := c.Initialize(ctx, initReq); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	list, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	if strings.Join(names, ",") != "forbidden,read_file" && strings.Join(names, ",") != "read_file,forbidden" {
		t.Errorf("tools = %v, want read_file and forbidden", names)
	}
	call := func(name string, args map[string]any) (string, bool) {
		t.Helper()
		var req mcp.CallToolRequest
		req.Params.Name, req.Params.Arguments = name, args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatalf("tools/call %s: %v", name, err)
		}
		var text []string
		for _, part := range res.Content {
			if tc, ok := part.(mcp.TextContent); ok {
				text = append(text, tc.Text)
			}
		}
		return strings.Join(text, ""), res.IsError
	}
	if got, isErr := call("read_file", map[string]any{"path": "hello.txt"}); isErr || !strings.Contains(got, "hello over http") {
		t.Errorf("read_file = %q (isError %v), want the file", got, isErr)
	}
	if got, isErr := call("forbidden", map[string]any{}); !isErr || !strings.Contains(got, "denied") {
		t.Errorf("forbidden = %q (isError %v), want a denial", got, isErr)
	}

	outcomes := map[string]string{}
	for _, l := range auditRecords(t, e) {
		if l.Step != "mcp:mcp-go-e2e" {
			t.Errorf("audit record of %s names step %q, want mcp:mcp-go-e2e, the client", l.Tool, l.Step)
		}
		outcomes[l.Tool] = l.Outcome
	}
	if outcomes["read_file"] != "ok" || outcomes["forbidden"] != "denied" {
		t.Errorf("audit outcomes = %v, want read_file ok and forbidden denied", outcomes)
	}
}

// auditRecords reads every completion record of the project's audit log.
func auditRecords(t *testing.T, e *env) []auditLine {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(e.dir, ".awf", "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []auditLine
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var l auditLine
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("audit line does not parse: %v\n%.200s", err, line)
		}
		if l.Outcome != "started" {
			out = append(out, l)
		}
	}
	return out
}

// `awf mcp serve --http` refuses, with 403, a browser page of another origin (the MCP spec's
// Origin check) and a request naming a foreign Host (DNS rebinding); its own origin and no
// Origin at all are served.
func TestMCPServeHTTPRefusesForeignOriginAndHost(t *testing.T) {
	e := newEnv(t)
	e.write("wf.yaml", mcpHTTPWorkflow)
	url := startMCPHTTP(t, e)
	own := strings.TrimSuffix(url, "/")
	const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	cases := []struct {
		name, origin, host string
		want               int
	}{
		{"no Origin", "", "", http.StatusOK},
		{"own Origin", own, "", http.StatusOK},
		{"own Origin as localhost", strings.Replace(own, "127.0.0.1", "localhost", 1), "", http.StatusOK},
		{"foreign Origin", "http://evil.example", "", http.StatusForbidden},
		{"other port", "http://127.0.0.1:1", "", http.StatusForbidden},
		{"null Origin", "null", "", http.StatusForbidden},
		{"foreign Host", "", "evil.example", http.StatusForbidden},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(initialize))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
}
