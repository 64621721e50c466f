// Package wire is awf's own implementation of the part of the Model Context Protocol awf
// speaks: JSON-RPC 2.0 messages, the session lifecycle (initialize and version negotiation,
// ping, cancellation), tools (list with pagination, call, list_changed) and the stdio and
// streamable HTTP transports, as a client (Connect) and as a server (Server).
//
// Why not the official Go SDK: every awf process pays the package initialisation of what it
// links, and the SDK links encoding/gob, golang.org/x/oauth2 and a second JSON library whose
// inits cost more than awf's whole start-up budget (issue 14), for the small subset awf uses.
// The SDK and mark3labs/mcp-go remain the peers the tests prove this implementation against
// (interop_test.go): an implementation we did not write.
//
// Hostile peers are expected: a line that is not JSON, a message of the wrong shape, an id of
// an odd type, a 16 MiB line, a server that dies mid-call or never answers. Each is an error
// (answered with the JSON-RPC code the spec names, or returned to the caller), never a panic
// or a hang.
package wire
