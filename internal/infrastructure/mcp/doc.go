// Package mcp connects awf to the Model Context Protocol both ways, through awf's own
// implementation of the protocol in package wire (the official Go SDK and mcp-go are the
// peers its tests prove it against; awf does not link them: issue 14, start-up).
//
// Serving: Server exposes tools to MCP clients (stdio or streamable HTTP) and runs every call
// through a ports.ToolInvoker, which in awf is the governed path (validation, policy,
// approval, audit); a call that fails or panics is an error result and the server goes on.
// A CallLog (ServerConfig.Calls) gets each call's record as the state keeps it.
//
// Using: Source is a workflow's mcp_servers as a ports.ToolSource. Load starts the servers a
// run needs (stdio commands or streamable HTTP URLs), once, and lists their tools, registered
// as server__tool (Separator); Close stops them. Expand and Resolve turn the workflow
// spellings server.tool and server.* into those names. A server that stops or does not answer
// gives error results, never a hang.
//
// SetupAgent writes the MCP configuration with which Claude Code, Codex and Gemini CLI reach
// `awf mcp serve`, so that their tool calls are approved and audited by awf.
package mcp
