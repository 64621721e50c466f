package wire

import (
	"encoding/base64"
	"encoding/json"
	"slices"
)

// Protocol versions, newest first: those the official Go SDK v1.8.0 supports. 2026-07-28 is
// the stateless protocol (SEP-2575: no initialize, each request carries its version, client
// and capabilities in _meta; a client discovers the server with server/discover); the others
// open a session with initialize.
const (
	Version20260728 = "2026-07-28"
	Version20251125 = "2025-11-25"
	Version20250618 = "2025-06-18"
	Version20250326 = "2025-03-26"
	Version20241105 = "2024-11-05"
	// LatestSessionVersion is the newest version negotiated by initialize: what awf's client
	// asks for and what the server answers a client asking for a version it does not know.
	LatestSessionVersion = Version20251125
)

// Versions lists the supported protocol versions, newest first.
var Versions = []string{Version20260728, Version20251125, Version20250618, Version20250326, Version20241105}

// supported reports whether v is a protocol version this package speaks.
func supported(v string) bool { return slices.Contains(Versions, v) }

// Keys of _meta in the stateless protocol (2026-07-28).
const (
	metaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	metaClientInfo         = "io.modelcontextprotocol/clientInfo"
	metaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// Implementation names a client or a server in the handshake.
type Implementation struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// Tool is one tool a server lists.
type Tool struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the arguments, as sent.
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
}

// ToolAnnotations are a tool's hints. A client must not trust them from a server it does not
// trust; awf trusts the servers a workflow configures (docs/mcp.md).
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    bool   `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  bool   `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// CallToolResult is a tool's answer. IsError marks an error the tool reports (for the model
// to read), as opposed to a protocol error.
type CallToolResult struct {
	Content           []Content `json:"content"`
	StructuredContent any       `json:"structuredContent,omitempty"`
	IsError           bool      `json:"isError,omitempty"`
}

// Content is one block of a result: text, image, audio, resource_link or resource (an
// embedded resource). Blocks of other types keep their JSON in Raw.
type Content struct {
	Type     string            `json:"type"`
	Text     string            `json:"text,omitempty"`
	Data     string            `json:"data,omitempty"` // base64, image and audio
	MIMEType string            `json:"mimeType,omitempty"`
	URI      string            `json:"uri,omitempty"`
	Name     string            `json:"name,omitempty"`
	Resource *ResourceContents `json:"resource,omitempty"`
	// Raw is the block as received.
	Raw json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the block as received in Raw.
func (c *Content) UnmarshalJSON(data []byte) error {
	type plain Content
	var p plain
	if err := json.Unmarshal(data, &p); err != nil {
		return err
	}
	*c = Content(p)
	c.Raw = slices.Clone(data)
	return nil
}

// DataLen is the size in bytes of an image's or audio's data once decoded.
func (c *Content) DataLen() int {
	return base64Len(c.Data)
}

// ResourceContents is an embedded resource: text or a base64 blob.
type ResourceContents struct {
	URI      string `json:"uri"`
	MIMEType string `json:"mimeType,omitempty"`
	Text     string `json:"text,omitempty"`
	Blob     string `json:"blob,omitempty"`
}

// BlobLen is the size in bytes of the blob once decoded.
func (r *ResourceContents) BlobLen() int { return base64Len(r.Blob) }

func base64Len(s string) int {
	if b, err := base64.StdEncoding.DecodeString(s); err == nil {
		return len(b)
	}
	return len(s)
}

// TextContent is a text block.
func TextContent(text string) Content { return Content{Type: "text", Text: text} }

// MarshalJSON writes text blocks with their text even when empty.
func (c Content) MarshalJSON() ([]byte, error) {
	if c.Type == "" && len(c.Raw) > 0 {
		return c.Raw, nil
	}
	type plain Content
	if c.Type == "text" {
		return json.Marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{c.Type, c.Text})
	}
	return json.Marshal(plain(c))
}

type initializeParams struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ClientInfo      *Implementation `json:"clientInfo"`
}

type initializeResult struct {
	ProtocolVersion string          `json:"protocolVersion"`
	Capabilities    json.RawMessage `json:"capabilities"`
	ServerInfo      *Implementation `json:"serverInfo"`
	Instructions    string          `json:"instructions,omitempty"`
}

type listToolsResult struct {
	Tools      []*Tool `json:"tools"`
	NextCursor string  `json:"nextCursor,omitempty"`
}

type callToolParams struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Meta      map[string]any  `json:"_meta,omitempty"`
}
