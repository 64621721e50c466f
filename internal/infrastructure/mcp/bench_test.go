package mcp

import (
	"log/slog"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// BenchmarkRemoteCall measures one call of an MCP server's tool from awf's side: the round
// trip over stdio to the test server and back.
func BenchmarkRemoteCall(b *testing.B) {
	s := NewSource(SourceConfig{Servers: map[string]workflow.MCPServer{"fs": {Command: serverBin}},
		Log: slog.New(slog.DiscardHandler)})
	defer s.Close()
	set, err := s.Load()
	if err != nil || len(set.Problems) > 0 {
		b.Fatal(err, set.Problems)
	}
	var echo tool.Tool
	for _, t := range set.Tools {
		if t.Name() == "fs__echo" {
			echo = t
		}
	}
	args := map[string]any{"text": "hello"}
	b.ResetTimer()
	for b.Loop() {
		if r := echo.Execute(b.Context(), tool.Invocation{Args: args}); !r.Succeeded() {
			b.Fatal(r.Error)
		}
	}
}

// BenchmarkServerCall measures one call through awf's MCP server (client, protocol, handler)
// to an invoker that answers at once: the server's own overhead per call.
func BenchmarkServerCall(b *testing.B) {
	inv := ports.ToolInvoker(testInvoker())
	s, err := NewServer(ServerConfig{Tools: exposedTools, Invoker: inv, Refuser: noRefusals, NewID: func() string { return "id" }})
	if err != nil {
		b.Fatal(err)
	}
	sess := serveStdio(b, s)
	args := map[string]any{"path": "a.txt"}
	b.ResetTimer()
	for b.Loop() {
		if _, err := sess.CallTool(b.Context(), &sdk.CallToolParams{Name: "read_file", Arguments: args}); err != nil {
			b.Fatal(err)
		}
	}
}
