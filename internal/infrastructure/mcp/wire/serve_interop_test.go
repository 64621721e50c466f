package wire_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/awf-dev/awf/internal/infrastructure/mcp/wire"
)

// These tests prove awf's MCP server against the clients of the official Go SDK and of
// mark3labs/mcp-go, over stdio (a pair of pipes) and streamable HTTP.

// testServer serves echo (read-only), fail (an error result) and a tool that reports who
// called it; any other name is an unknown tool (invalid params).
func testServer() *wire.Server {
	return &wire.Server{
		Info: wire.Implementation{Name: "awf-test", Version: "1"},
		Tools: []*wire.Tool{
			{Name: "echo", Description: "Echo.", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`),
				Annotations: &wire.ToolAnnotations{ReadOnlyHint: true}},
			{Name: "fail", Description: "Fails.", InputSchema: json.RawMessage(`{"type":"object"}`)},
			{Name: "whoami", Description: "The client's name.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		},
		Call: func(_ context.Context, req *wire.CallRequest) (*wire.CallToolResult, error) {
			switch req.Name {
			case "echo":
				var in struct{ Text string }
				json.Unmarshal(req.Arguments, &in)
				return &wire.CallToolResult{Content: []wire.Content{wire.TextContent("echo: " + in.Text)}}, nil
			case "fail":
				return &wire.CallToolResult{Content: []wire.Content{wire.TextContent("it failed")}, IsError: true}, nil
			case "whoami":
				name := ""
				if req.Client != nil {
					name = req.Client.Name
				}
				return &wire.CallToolResult{Content: []wire.Content{wire.TextContent(name)}}, nil
			}
			return nil, &wire.Error{Code: wire.CodeInvalidParams, Message: "unknown tool " + req.Name}
		},
	}
}

// serveOnPipes serves srv over a pair of pipes; it returns the client's ends.
func serveOnPipes(t *testing.T, srv *wire.Server) (fromServer io.ReadCloser, toServer io.WriteCloser) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- srv.ServeStream(context.Background(), inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() {
		inW.Close()
		if err := <-done; err != nil {
			t.Errorf("ServeStream() = %v", err)
		}
	})
	return outR, inW
}

func TestServerWithSDKClient(t *testing.T) {
	transports := map[string]func(t *testing.T) sdk.Transport{
		"stdio": func(t *testing.T) sdk.Transport {
			r, w := serveOnPipes(t, testServer())
			return &sdk.IOTransport{Reader: r, Writer: w}
		},
		"http": func(t *testing.T) sdk.Transport {
			hs := httptest.NewServer(testServer().Handler())
			t.Cleanup(hs.Close)
			return &sdk.StreamableClientTransport{Endpoint: hs.URL}
		},
	}
	for name, mk := range transports {
		t.Run(name, func(t *testing.T) {
			client := sdk.NewClient(&sdk.Implementation{Name: "sdk-client", Version: "1"}, nil)
			sess, err := client.Connect(t.Context(), mk(t), nil)
			if err != nil {
				t.Fatalf("Connect() = %v", err)
			}
			defer sess.Close()
			if err := sess.Ping(t.Context(), nil); err != nil && name == "stdio" {
				t.Errorf("Ping() = %v", err)
			}
			list, err := sess.ListTools(t.Context(), nil)
			if err != nil || len(list.Tools) != 3 || list.Tools[0].Name != "echo" || !list.Tools[0].Annotations.ReadOnlyHint {
				t.Fatalf("ListTools() = %+v, %v", list, err)
			}
			res, err := sess.CallTool(t.Context(), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
			if err != nil || res.IsError || res.Content[0].(*sdk.TextContent).Text != "echo: hi" {
				t.Errorf("CallTool(echo) = %+v, %v", res, err)
			}
			res, err = sess.CallTool(t.Context(), &sdk.CallToolParams{Name: "fail"})
			if err != nil || !res.IsError {
				t.Errorf("CallTool(fail) = %+v, %v; want an error result", res, err)
			}
			res, err = sess.CallTool(t.Context(), &sdk.CallToolParams{Name: "whoami"})
			if err != nil || res.Content[0].(*sdk.TextContent).Text != "sdk-client" {
				t.Errorf("CallTool(whoami) = %+v, %v; want the client's name", res, err)
			}
			if _, err := sess.CallTool(t.Context(), &sdk.CallToolParams{Name: "nope"}); err == nil || !strings.Contains(err.Error(), "unknown tool") {
				t.Errorf("CallTool(nope) = %v, want unknown tool", err)
			}
		})
	}
}

func TestServerWithMCPGoClient(t *testing.T) {
	transports := map[string]func(t *testing.T) mcpgotransport.Interface{
		"stdio": func(t *testing.T) mcpgotransport.Interface {
			r, w := serveOnPipes(t, testServer())
			return mcpgotransport.NewIO(r, w, io.NopCloser(strings.NewReader("")))
		},
		"http": func(t *testing.T) mcpgotransport.Interface {
			hs := httptest.NewServer(testServer().Handler())
			t.Cleanup(hs.Close)
			tr, err := mcpgotransport.NewStreamableHTTP(hs.URL)
			if err != nil {
				t.Fatal(err)
			}
			return tr
		},
	}
	for name, mk := range transports {
		t.Run(name, func(t *testing.T) {
			for _, version := range []string{mcpgo.LATEST_PROTOCOL_VERSION, "2025-06-18", "2024-11-05"} {
				c := mcpgoclient.NewClient(mk(t))
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				defer cancel()
				if err := c.Start(ctx); err != nil {
					t.Fatal(err)
				}
				var init mcpgo.InitializeRequest
				init.Params.ProtocolVersion = version
				init.Params.ClientInfo = mcpgo.Implementation{Name: "mcp-go-client", Version: "1"}
				if _, err := c.Initialize(ctx, init); err != nil {
					t.Fatalf("%s: Initialize() = %v", version, err)
				}
				list, err := c.ListTools(ctx, mcpgo.ListToolsRequest{})
				if err != nil || len(list.Tools) != 3 {
					t.Fatalf("%s: ListTools() = %+v, %v", version, list, err)
				}
				call := func(name string, args map[string]any) (string, bool, error) {
					var req mcpgo.CallToolRequest
					req.Params.Name, req.Params.Arguments = name, args
					res, err := c.CallTool(ctx, req)
					if err != nil {
						return "", false, err
					}
					tc, _ := res.Content[0].(mcpgo.TextContent)
					return tc.Text, res.IsError, nil
				}
				if text, isErr, err := call("echo", map[string]any{"text": "hi"}); err != nil || isErr || text != "echo: hi" {
					t.Errorf("%s: echo = %q %v %v", version, text, isErr, err)
				}
				if _, isErr, err := call("fail", nil); err != nil || !isErr {
					t.Errorf("%s: fail = %v %v, want an error result", version, isErr, err)
				}
				if text, _, err := call("whoami", nil); err != nil || (name == "stdio" && text != "mcp-go-client") {
					t.Errorf("%s: whoami = %q %v", version, text, err)
				}
				if _, _, err := call("nope", nil); err == nil {
					t.Errorf("%s: a call of an unknown tool succeeded", version)
				}
				if name == "stdio" {
					break // one session per pair of pipes
				}
				c.Close()
			}
		})
	}
}

// The stateless protocol (2026-07-28) over HTTP: no initialize, server/discover, each request
// names its client; a version the server does not speak is -32022.
func TestServerStatelessRequests(t *testing.T) {
	hs := httptest.NewServer(testServer().Handler())
	t.Cleanup(hs.Close)
	post := func(body string) map[string]any {
		t.Helper()
		resp, err := hs.Client().Post(hs.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatalf("%s: answer is not JSON: %v", body, err)
		}
		return m
	}
	meta := func(version string) string {
		return `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version +
			`","io.modelcontextprotocol/clientInfo":{"name":"new","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	}
	m := post(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{` + meta("2026-07-28") + `}}`)
	res, _ := m["result"].(map[string]any)
	if res == nil || res["resultType"] != "complete" || !strings.Contains(toJSON(res["supportedVersions"]), "2026-07-28") {
		t.Errorf("server/discover = %v", m)
	}
	m = post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami",` + meta("2026-07-28") + `}}`)
	if !strings.Contains(toJSON(m), `"text":"new"`) {
		t.Errorf("whoami = %v, want the client named in _meta", m)
	}
	m = post(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{` + meta("2099-01-01") + `}}`)
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(wire.CodeUnsupportedProtocolVersion) {
		t.Errorf("a version from the future = %v, want -32022", m)
	}
	m = post(`{"jsonrpc":"2.0","id":4,"method":"server/discover"}`)
	if e, _ := m["error"].(map[string]any); e == nil || e["code"] != float64(wire.CodeMethodNotFound) {
		t.Errorf("server/discover without the stateless _meta = %v, want -32601", m)
	}
}

func toJSON(v any) string {
	data, _ := json.Marshal(v)
	return string(data)
}
