package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/mcp/wire"
)

// ServerConfig is what a Server needs. Tools, Invoker and NewID are required.
type ServerConfig struct {
	// Name and Version identify the server to clients; "" means "awf" and "dev".
	Name, Version string
	// Tools are the tools exposed: name, description, parameters' schema and annotations
	// (read-only becomes readOnlyHint).
	Tools []ports.ToolInfo
	// Invoker runs every call: the governed path (validation, policy, approval, audit),
	// the same as for agent steps.
	Invoker ports.ToolInvoker
	// Refuser audits the calls refused before Invoker: a tool name the server does not
	// serve, arguments that are not a JSON object.
	Refuser ports.CallRefuser
	// RunID identifies the serving process in audit records; quotas and "always" answers
	// last as long as it.
	RunID string
	// Step names the caller in audit records; "" means "mcp:" and the client's name.
	Step string
	// NewID returns a fresh id for each call.
	NewID func() string
	// Scope is the template scope calls carry (inputs, env, workflow, run), which custom
	// command tools bind {{inputs.x}} from; nil when there is none.
	Scope ports.Scope
	// Calls, when set, receives the record of every call (`awf mcp serve --calls-file`).
	Calls CallSink
	Log   *slog.Logger
}

// Server exposes tools over MCP: stdio (Serve) or streamable HTTP (Handler). Every call runs
// through ServerConfig.Invoker; a call that fails for any reason, a panic included, is an
// error result (isError) and the server goes on serving. Safe for concurrent use.
type Server struct {
	cfg ServerConfig
	srv *wire.Server
}

// NewServer checks cfg and builds the server, or returns a fault.System error naming what is
// missing.
func NewServer(cfg ServerConfig) (*Server, error) {
	var missing []string
	if cfg.Invoker == nil {
		missing = append(missing, "Invoker")
	}
	if cfg.NewID == nil {
		missing = append(missing, "NewID")
	}
	if cfg.Refuser == nil {
		missing = append(missing, "Refuser")
	}
	if len(missing) > 0 {
		return nil, fault.New(fault.System, "mcp server: missing %s", strings.Join(missing, ", "))
	}
	if cfg.Name == "" {
		cfg.Name = "awf"
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	s := &Server{cfg: cfg}
	tools := make([]*wire.Tool, len(cfg.Tools))
	for i, info := range cfg.Tools {
		tools[i] = exposed(info)
	}
	s.srv = &wire.Server{Info: wire.Implementation{Name: cfg.Name, Version: cfg.Version}, Tools: tools, Call: s.handle,
		Log: cfg.Log}
	return s, nil
}

// handle runs one tools/call: a tool this server serves goes to the invoker; another is
// audited as refused and answered with a JSON-RPC error (invalid params), as MCP servers
// answer a call of a tool they do not have.
func (s *Server) handle(ctx context.Context, req *wire.CallRequest) (*wire.CallToolResult, error) {
	if s.serves(req.Name) {
		return s.handler(ctx, req), nil
	}
	name := req.Name
	args, err := tool.DecodeArgs(req.Arguments)
	if err != nil {
		args = map[string]any{state.RawArgsKey: string(req.Arguments)}
	}
	msg := fmt.Sprintf("unknown tool %q", name)
	if hint := workflow.DidYouMean(name, s.names()); hint != "" {
		msg += " (" + hint + ")"
	}
	s.refuse(ctx, ports.ToolRequest{RunID: s.cfg.RunID, Step: s.step(req), CallID: s.cfg.NewID(), Name: name, Args: args},
		ports.RuleUnknownTool, msg)
	return nil, &wire.Error{Code: wire.CodeInvalidParams, Message: msg}
}

// serves reports whether the server has a tool of this exact name.
func (s *Server) serves(name string) bool {
	return slices.Contains(s.names(), name)
}

// names lists the served tools' names.
func (s *Server) names() []string {
	names := make([]string, len(s.cfg.Tools))
	for i, info := range s.cfg.Tools {
		names[i] = info.Schema.Name
	}
	return names
}

// refuse audits a call refused before the invoker; a record that cannot be written is
// logged (the call did nothing).
func (s *Server) refuse(ctx context.Context, req ports.ToolRequest, rule, why string) {
	if err := s.cfg.Refuser.Refuse(ctx, req, rule, why); err != nil {
		s.cfg.Log.Error("audit record not written", "tool", req.Name, "call_id", req.CallID, "error", err)
	}
}

// exposed describes a tool to MCP clients.
func exposed(info ports.ToolInfo) *wire.Tool {
	params := info.Schema.Parameters
	if len(params) == 0 {
		params = json.RawMessage(`{"type":"object"}`)
	}
	a := info.Annotations
	destructive := !a.ReadOnly
	return &wire.Tool{
		Name:        info.Schema.Name,
		Description: info.Schema.Description,
		InputSchema: params,
		Annotations: &wire.ToolAnnotations{ReadOnlyHint: a.ReadOnly, IdempotentHint: a.Idempotent,
			DestructiveHint: &destructive},
	}
}

// Serve serves one client over a pair of streams (newline-delimited JSON-RPC: the stdio
// transport when they are standard input and output) until the client disconnects or ctx
// ends. Nothing else may write to out. A line that is not JSON is answered with a parse error
// (-32700) and a request before initialize with an invalid-request error (-32600); the session
// goes on. When the client closes its input, the calls it made are answered before the session
// ends (see wire.Server.ServeStream).
func (s *Server) Serve(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	err := s.srv.ServeStream(ctx, in, out)
	if err != nil && ctx.Err() == nil {
		return fault.Wrap(fault.System, fmt.Errorf("mcp serve: %w", err))
	}
	return nil
}

// Handler serves clients over streamable HTTP, statelessly: every POST is answered on its own,
// with no Mcp-Session-Id, so a client of any protocol version wire supports works (a
// 2026-07-28 client sends no initialize). The server asks clients nothing (approvals go to the
// terminal), so nothing needs a session. A request that reached a loopback address under a
// Host that is not a loopback name is refused with 403 (DNS rebinding); checkOrigin refuses a
// browser's page from elsewhere.
func (s *Server) Handler() http.Handler {
	return checkOrigin(s.srv.Handler())
}

// handler runs one call of a served tool through the invoker and records it in the
// ServerConfig.Calls sink.
func (s *Server) handler(ctx context.Context, req *wire.CallRequest) *wire.CallToolResult {
	name := req.Name
	callID := s.cfg.NewID()
	start := time.Now()
	args, r, err := s.call(ctx, name, callID, req)
	took := r.Duration
	if took <= 0 {
		took = time.Since(start)
	}
	res := r.Record(err, took)
	s.record(state.ToolCallRecord{ID: callID, Tool: name, Arguments: args, Result: &res})
	if err != nil {
		s.cfg.Log.Warn("tool call failed", "tool", name, "call_id", callID, "error", err)
		if r.Succeeded() || r.Error == "" {
			r = tool.Errorf(err.Error())
		}
	}
	return toResult(r)
}

// call decodes a call's arguments and runs it through the invoker. Arguments that are not a
// JSON object are an error result, recorded under state.RawArgsKey; a panic is an error result too.
func (s *Server) call(ctx context.Context, name, callID string, req *wire.CallRequest) (args map[string]any, r tool.Result, err error) {
	defer func() {
		if p := recover(); p != nil {
			s.cfg.Log.Error("tool call panicked", "tool", name, "call_id", callID, "panic", p, "stack", string(debug.Stack()))
			r, err = tool.Errorf(fmt.Sprintf("tool %q crashed: %v", name, p)), nil
		}
	}()
	raw := req.Arguments
	args, derr := tool.DecodeArgs(raw)
	if derr != nil {
		args = map[string]any{state.RawArgsKey: string(raw)}
		msg := fmt.Sprintf("tool %q: %v", name, derr)
		s.refuse(ctx, ports.ToolRequest{RunID: s.cfg.RunID, Step: s.step(req), CallID: callID, Name: name, Args: args},
			ports.RuleArgsObject, msg)
		res := tool.Errorf(msg)
		res.Denied, res.Approval = true, ports.ByGate
		return args, res, nil
	}
	r, err = s.cfg.Invoker.Invoke(ctx, ports.ToolRequest{
		RunID: s.cfg.RunID, Step: s.step(req), CallID: callID, Name: name, Args: args, Scope: s.cfg.Scope,
	})
	return args, r, err
}

// record gives a call's record to the sink; a record that cannot be written is logged; the
// call has happened and its audit record holds it.
func (s *Server) record(rec state.ToolCallRecord) {
	if s.cfg.Calls == nil {
		return
	}
	if err := s.cfg.Calls.Append(rec); err != nil {
		s.cfg.Log.Warn("the call could not be recorded in the calls file", "tool", rec.Tool, "call_id", rec.ID, "error", err)
	}
}

// step names the caller in records: ServerConfig.Step, else "mcp:" and the client's name, or
// "mcp" when it is unknown (a stateless HTTP request of a protocol older than 2026-07-28 does
// not carry it).
func (s *Server) step(req *wire.CallRequest) string {
	if s.cfg.Step != "" {
		return s.cfg.Step
	}
	if info := req.Client; info != nil && info.Name != "" {
		return "mcp:" + info.Name
	}
	return "mcp"
}

// toResult turns a tool result into an MCP result: the output text, or the error text with
// isError set.
func toResult(r tool.Result) *wire.CallToolResult {
	if r.Succeeded() {
		return &wire.CallToolResult{Content: []wire.Content{wire.TextContent(r.Output)}}
	}
	text := r.Error
	if r.Output != "" {
		text += "\n" + r.Output
	}
	return &wire.CallToolResult{Content: []wire.Content{wire.TextContent(text)}, IsError: true}
}
