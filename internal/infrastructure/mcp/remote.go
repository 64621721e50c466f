package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/mcp/wire"
)

// remoteTool is one tool of an MCP server, as awf's registry holds it. Calls go to the
// server's session; the governed path (validation, policy, approval, audit) runs around
// Execute like for any other tool. Safe for concurrent use.
type remoteTool struct {
	name   string // the registered name, server__tool
	remote string // the server's name for it
	conn   *conn
	desc   string
	params json.RawMessage
	notes  tool.Annotations
	pos    workflow.Pos
	// timeout bounds a call whose context has no deadline; maxOutput caps the text kept.
	timeout   time.Duration
	maxOutput int
	// changed says why the server's tool is no longer the one awf loaded (and the run's lock
	// file checked), once the server changed or removed it during the run; calls are then
	// refused.
	changed atomic.Pointer[string]
}

var (
	_ tool.Tool       = (*remoteTool)(nil)
	_ tool.Annotated  = (*remoteTool)(nil)
	_ tool.Located    = (*remoteTool)(nil)
	_ tool.Summarizer = (*remoteTool)(nil)
)

// newRemoteTool describes t of the server c. The server's readOnlyHint becomes the ReadOnly
// annotation, which makes approval default to auto for the tool; every other tool defaults to
// prompt.
func newRemoteTool(name string, c *conn, t *wire.Tool) (*remoteTool, error) {
	params, err := inputSchema(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %q of MCP server %q: input schema: %w", t.Name, c.name, err)
	}
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = strings.TrimSpace(t.Title)
	}
	if desc == "" {
		desc = fmt.Sprintf("Tool %s of the MCP server %s.", t.Name, c.name)
	}
	notes := tool.Annotations{Tags: []string{"mcp", c.name}, Source: "mcp:" + c.name}
	if a := t.Annotations; a != nil {
		notes.ReadOnly = a.ReadOnlyHint
		notes.Idempotent = a.ReadOnlyHint || a.IdempotentHint
	}
	return &remoteTool{name: name, remote: t.Name, conn: c, desc: desc, params: params, notes: notes,
		pos: c.spec.Pos, timeout: c.cfg.CallTimeout, maxOutput: c.cfg.MaxOutput}, nil
}

// inputSchema turns the schema a server sent into the object schema the registry checks.
// A missing schema, or one without a type, accepts any object.
func inputSchema(data json.RawMessage) (json.RawMessage, error) {
	if len(data) == 0 || string(data) == "null" {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	if t, ok := m["type"]; !ok {
		m["type"] = "object"
	} else if t != "object" {
		return nil, fmt.Errorf("type is %v; a tool's input must be an object", t)
	}
	return json.Marshal(m)
}

// differs says what differs between t and the server's tool as it lists it now (nil: it no
// longer has it), or "" when nothing does.
func (t *remoteTool) differs(now *wire.Tool) string {
	if now == nil {
		return "removed"
	}
	nt, err := newRemoteTool(t.name, t.conn, now)
	if err != nil {
		return "schema"
	}
	var what []string
	if nt.desc != t.desc {
		what = append(what, "description")
	}
	if string(nt.params) != string(t.params) {
		what = append(what, "schema")
	}
	return strings.Join(what, ", ")
}

// Name returns the registered name, server__tool.
func (t *remoteTool) Name() string { return t.name }

// Description returns the server's description of the tool.
func (t *remoteTool) Description(tool.Context) string { return t.desc }

// Parameters returns the server's input schema.
func (t *remoteTool) Parameters() json.RawMessage { return t.params }

// Annotations returns what the server declared (read-only, idempotent) and where the tool
// comes from.
func (t *remoteTool) Annotations() tool.Annotations { return t.notes }

// Pos is the position of the server's entry in mcp_servers.
func (t *remoteTool) Pos() workflow.Pos { return t.pos }

// Meta summarises a call for people: "fs.read_text path=README.md".
func (t *remoteTool) Meta(args map[string]any) string {
	s := t.conn.name + "." + t.remote
	if len(args) == 0 {
		return s
	}
	data, err := json.Marshal(args)
	if err != nil {
		return s
	}
	const max = 120
	if len(data) > max {
		return s + " " + string(data[:max]) + "..."
	}
	return s + " " + string(data)
}

// Execute calls the tool on its server. Everything that goes wrong is an error result for the
// model: a server that stopped (before or during the call), a call that timed out, an error
// the tool reported.
func (t *remoteTool) Execute(ctx context.Context, call tool.Invocation) tool.Result {
	if why := t.changed.Load(); why != nil {
		return tool.Refused("pin", "tool_changed", *why)
	}
	if _, ok := ctx.Deadline(); !ok && t.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.timeout)
		defer cancel()
	}
	res, err := t.conn.call(ctx, t.remote, call.Args)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return tool.Errorf(fmt.Sprintf("%s.%s timed out: the MCP server did not answer in time", t.conn.name, t.remote))
	case err != nil:
		return tool.Errorf(fmt.Sprintf("%s.%s: %v", t.conn.name, t.remote, err))
	case res == nil:
		return tool.Errorf(fmt.Sprintf("%s.%s: the MCP server sent no result", t.conn.name, t.remote))
	}
	return fromResult(res, t.maxOutput)
}

// fromResult turns a server's answer into a tool result: the text of its content for the
// model, structured content as Data, isError as an error result.
func fromResult(res *wire.CallToolResult, maxOutput int) tool.Result {
	text := contentText(res.Content)
	var out tool.Result
	if res.StructuredContent != nil {
		out.Data = res.StructuredContent
		if text == "" {
			if data, err := json.Marshal(res.StructuredContent); err == nil {
				text = string(data)
			}
		}
	}
	if maxOutput > 0 && len(text) > maxOutput {
		text = strings.ToValidUTF8(text[:maxOutput], "") +
			fmt.Sprintf("\n[awf: output cut at %d of %d bytes]", maxOutput, len(text))
		out.Truncated = true
	}
	if res.IsError {
		if text == "" {
			text = "the tool reported an error without a message"
		}
		out.Status, out.Error = tool.StatusError, text
		return out
	}
	out.Status, out.Output = tool.StatusOK, text
	return out
}

// contentText joins the text of the content blocks; other blocks are described in brackets.
func contentText(content []wire.Content) string {
	parts := make([]string, 0, len(content))
	for _, c := range content {
		switch c.Type {
		case "text":
			parts = append(parts, c.Text)
		case "image":
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, c.DataLen()))
		case "audio":
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, c.DataLen()))
		case "resource_link":
			parts = append(parts, fmt.Sprintf("[resource %s %s]", c.Name, c.URI))
		case "resource":
			parts = append(parts, embedded(c.Resource))
		default:
			parts = append(parts, string(c.Raw))
		}
	}
	return strings.Join(parts, "\n")
}

func embedded(r *wire.ResourceContents) string {
	switch {
	case r == nil:
		return "[resource]"
	case r.Text != "":
		return r.Text
	}
	return fmt.Sprintf("[resource %s, %s, %d bytes]", r.URI, r.MIMEType, r.BlobLen())
}
