package wire_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/awf-dev/awf/internal/infrastructure/mcp/wire"
)

// These tests prove awf's MCP client against two implementations awf did not write: the
// official Go SDK and mark3labs/mcp-go, each as a server over stdio (a pair of pipes) and
// over streamable HTTP.

// peer is a server under test: its transport for awf's client and a way to make it change
// its tools. Its "die" tool cuts what carries its answers (the pipe, the HTTP connections)
// and never answers: the server dies mid-call.
type peer struct {
	transport func() wire.Transport
	// addTool adds a tool named extra after the session started (list_changed).
	addTool func()
	// listChanged says whether the peer's list_changed reaches the client on this transport.
	listChanged bool
}

const pageSize = 2 // small, so that listing the peers' tools takes several pages

var peerTools = []string{"echo", "fail", "media", "die", "hang"}

// sdkServer is a go-sdk server with the peer tools.
func sdkServer(t *testing.T, die func()) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "go-sdk-peer", Version: "1"}, &sdk.ServerOptions{PageSize: pageSize})
	schema := json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)
	add := func(name string, h sdk.ToolHandler, ro bool) {
		srv.AddTool(&sdk.Tool{Name: name, Description: "The " + name + " tool.", InputSchema: schema,
			Annotations: &sdk.ToolAnnotations{ReadOnlyHint: ro}}, h)
	}
	add("echo", func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var in struct{ Text string }
		json.Unmarshal(req.Params.Arguments, &in)
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "echo: " + in.Text}}}, nil
	}, true)
	add("fail", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "it failed"}}, IsError: true}, nil
	}, false)
	add("media", func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.ImageContent{MIMEType: "image/png", Data: []byte("12345")},
			&sdk.AudioContent{MIMEType: "audio/wav", Data: []byte("123")},
			&sdk.ResourceLink{URI: "file:///a.txt", Name: "a.txt"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///b.txt", MIMEType: "text/plain", Text: "bee"}},
		}}, nil
	}, true)
	add("die", func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		die()
		linger(ctx)
		return nil, ctx.Err()
	}, false)
	add("hang", func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		linger(ctx)
		return nil, ctx.Err()
	}, false)
	return srv
}

func addSDKTool(srv *sdk.Server) {
	srv.AddTool(&sdk.Tool{Name: "extra", InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return &sdk.CallToolResult{}, nil
		})
}

// mcpgoServer is an mcp-go server with the peer tools.
func mcpgoServer(die func()) *mcpgoserver.MCPServer {
	srv := mcpgoserver.NewMCPServer("mcp-go-peer", "1", mcpgoserver.WithToolCapabilities(true),
		mcpgoserver.WithPaginationLimit(pageSize))
	add := func(name string, h mcpgoserver.ToolHandlerFunc, ro bool) {
		srv.AddTool(mcpgo.NewTool(name, mcpgo.WithDescription("The "+name+" tool."), mcpgo.WithString("text"),
			mcpgo.WithReadOnlyHintAnnotation(ro)), h)
	}
	add("echo", func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultText("echo: " + req.GetString("text", "")), nil
	}, true)
	add("fail", func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultError("it failed"), nil
	}, false)
	add("media", func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return &mcpgo.CallToolResult{Content: []mcpgo.Content{
			mcpgo.NewImageContent("MTIzNDU=", "image/png"),
			mcpgo.NewAudioContent("MTIz", "audio/wav"),
			mcpgo.NewResourceLink("file:///a.txt", "a.txt", "", ""),
			mcpgo.NewEmbeddedResource(mcpgo.TextResourceContents{URI: "file:///b.txt", MIMEType: "text/plain", Text: "bee"}),
		}}, nil
	}, true)
	add("die", func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		die()
		linger(ctx)
		return nil, ctx.Err()
	}, false)
	add("hang", func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		linger(ctx)
		return nil, ctx.Err()
	}, false)
	return srv
}

func addMCPGoTool(srv *mcpgoserver.MCPServer) {
	srv.AddTool(mcpgo.NewTool("extra"), func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		return mcpgo.NewToolResultText(""), nil
	})
}

// pipes serves a peer over a pair of pipes; killing it closes its output.
func pipes(t *testing.T, serve func(ctx context.Context, in io.Reader, out io.Writer)) (wire.Transport, func()) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		serve(ctx, inR, outW)
		outW.Close()
	}()
	t.Cleanup(func() {
		cancel()
		inR.Close()
		outW.Close()
		<-done
	})
	return wire.NewStreamTransport(outR, inW), func() { outW.CloseWithError(io.ErrUnexpectedEOF) }
}

func peers(t *testing.T) map[string]func(t *testing.T) peer {
	return map[string]func(t *testing.T) peer{
		"go-sdk stdio": func(t *testing.T) peer {
			var kill func()
			srv := sdkServer(t, func() { kill() })
			tr, k := pipes(t, func(ctx context.Context, in io.Reader, out io.Writer) {
				srv.Run(ctx, &sdk.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
			})
			kill = k
			return peer{transport: func() wire.Transport { return tr }, addTool: func() { addSDKTool(srv) }, listChanged: true}
		},
		"go-sdk http": func(t *testing.T) peer {
			var hs *httptest.Server
			srv := sdkServer(t, func() { hs.CloseClientConnections() })
			hs = httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
			t.Cleanup(hs.Close)
			return peer{transport: func() wire.Transport { return wire.NewHTTPTransport(hs.URL, hs.Client()) },
				addTool: func() { addSDKTool(srv) }, listChanged: true}
		},
		"go-sdk http json": func(t *testing.T) peer {
			var hs *httptest.Server
			srv := sdkServer(t, func() { hs.CloseClientConnections() })
			hs = httptest.NewServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
				&sdk.StreamableHTTPOptions{JSONResponse: true}))
			t.Cleanup(hs.Close)
			return peer{transport: func() wire.Transport { return wire.NewHTTPTransport(hs.URL, hs.Client()) },
				addTool: func() { addSDKTool(srv) }, listChanged: true}
		},
		"mcp-go stdio": func(t *testing.T) peer {
			var kill func()
			srv := mcpgoServer(func() { kill() })
			tr, k := pipes(t, func(ctx context.Context, in io.Reader, out io.Writer) {
				mcpgoserver.NewStdioServer(srv).Listen(ctx, in, out)
			})
			kill = k
			return peer{transport: func() wire.Transport { return tr }, addTool: func() { addMCPGoTool(srv) }, listChanged: true}
		},
		"mcp-go http": func(t *testing.T) peer {
			var hs *httptest.Server
			srv := mcpgoServer(func() { hs.CloseClientConnections() })
			hs = httptest.NewServer(mcpgoserver.NewStreamableHTTPServer(srv))
			t.Cleanup(hs.Close)
			return peer{transport: func() wire.Transport { return wire.NewHTTPTransport(hs.URL, hs.Client()) },
				addTool: func() { addMCPGoTool(srv) }, listChanged: true}
		},
	}
}

// linger is how the die and hang tools never answer: until the peer cancels them, or a
// second (an HTTP peer whose client has gone does not always cancel, and its test server
// waits for its handlers when it closes).
func linger(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(time.Second):
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func TestClientAgainstPeers(t *testing.T) {
	for name, mk := range peers(t) {
		t.Run(name, func(t *testing.T) {
			p := mk(t)
			changed := make(chan struct{}, 4)
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			sess, err := wire.Connect(ctx, p.transport(), wire.ClientOptions{Info: wire.Implementation{Name: "awf", Version: "test"},
				ToolListChanged: func() { changed <- struct{}{} }, Log: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))})
			if err != nil {
				t.Fatalf("Connect() = %v", err)
			}
			defer sess.Close()
			if !slices.Contains(wire.Versions, sess.ProtocolVersion()) {
				t.Errorf("negotiated version %q", sess.ProtocolVersion())
			}
			if err := sess.Ping(ctx); err != nil {
				t.Errorf("Ping() = %v", err)
			}

			tools, err := sess.ListTools(ctx) // pageSize 2: three pages
			if err != nil {
				t.Fatalf("ListTools() = %v", err)
			}
			var names []string
			for _, tl := range tools {
				names = append(names, tl.Name)
				if tl.Name == "echo" && (tl.Annotations == nil || !tl.Annotations.ReadOnlyHint || !strings.Contains(string(tl.InputSchema), `"text"`)) {
					t.Errorf("echo = %+v, want read-only with its schema", tl)
				}
			}
			slices.Sort(names)
			if want := slices.Sorted(slices.Values(peerTools)); !slices.Equal(names, want) {
				t.Errorf("ListTools() = %v, want %v", names, want)
			}

			res, err := sess.CallTool(ctx, "echo", map[string]any{"text": "hi"})
			if err != nil || res.IsError || len(res.Content) != 1 || res.Content[0].Text != "echo: hi" {
				t.Errorf("CallTool(echo) = %+v, %v", res, err)
			}
			res, err = sess.CallTool(ctx, "fail", nil)
			if err != nil || !res.IsError || res.Content[0].Text != "it failed" {
				t.Errorf("CallTool(fail) = %+v, %v; want an error result", res, err)
			}
			res, err = sess.CallTool(ctx, "media", nil)
			if err != nil || len(res.Content) != 4 {
				t.Fatalf("CallTool(media) = %+v, %v", res, err)
			}
			c := res.Content
			if c[0].Type != "image" || c[0].DataLen() != 5 || c[1].Type != "audio" || c[1].DataLen() != 3 ||
				c[2].Type != "resource_link" || c[2].URI != "file:///a.txt" ||
				c[3].Type != "resource" || c[3].Resource == nil || c[3].Resource.Text != "bee" {
				t.Errorf("media content = %+v", c)
			}
			if _, err := sess.CallTool(ctx, "nope", nil); err == nil {
				t.Errorf("CallTool(nope) succeeded")
			}

			// A call the caller gives up on ends at its deadline; the session goes on.
			hctx, hcancel := context.WithTimeout(ctx, 100*time.Millisecond)
			_, err = sess.CallTool(hctx, "hang", nil)
			hcancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("CallTool(hang) = %v, want the deadline", err)
			}

			// Calls in flight together.
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Go(func() {
					text := strings.Repeat("x", i)
					res, err := sess.CallTool(ctx, "echo", map[string]any{"text": text})
					if err != nil || res.Content[0].Text != "echo: "+text {
						t.Errorf("concurrent CallTool = %+v, %v", res, err)
					}
				})
			}
			wg.Wait()

			if p.listChanged {
				p.addTool()
				select {
				case <-changed:
				case <-ctx.Done():
					t.Fatal("no list_changed after a tool was added")
				}
				if tools, err := sess.ListTools(ctx); err != nil || len(tools) != len(peerTools)+1 {
					t.Errorf("ListTools() after the change = %d tools, %v", len(tools), err)
				}
			}
		})
	}
}

// A server that dies in the middle of a call: the call fails at once, no hang.
func TestClientServerDiesMidCall(t *testing.T) {
	for name, mk := range peers(t) {
		t.Run(name, func(t *testing.T) {
			p := mk(t)
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			sess, err := wire.Connect(ctx, p.transport(), wire.ClientOptions{Info: wire.Implementation{Name: "awf"}})
			if err != nil {
				t.Fatalf("Connect() = %v", err)
			}
			defer sess.Close()
			start := time.Now()
			_, err = sess.CallTool(ctx, "die", nil)
			if err == nil || ctx.Err() != nil {
				t.Fatalf("CallTool(die) = %v after %v, want a connection error before the deadline", err, time.Since(start))
			}
		})
	}
}
