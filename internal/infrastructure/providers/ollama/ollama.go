// Package ollama is the provider for Ollama's native chat API (POST /api/chat): tools and
// tool_calls with arguments as objects, streamed as JSON lines or not. It implements
// ports.Provider. (Ollama's OpenAI-compatible /v1 is served by package openai.)
package ollama

import (
	"context"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/chat"
)

const name = "ollama"

// DefaultBaseURL is a local Ollama server; requests go to BaseURL + "/api/chat".
const DefaultBaseURL = "http://localhost:11434"

// DefaultTimeout bounds one attempt when Config.Timeout is zero.
const DefaultTimeout = chat.DefaultTimeout

var _ ports.Provider = (*Client)(nil)

// Config says where the server is and how to talk to it; see [New] for what this provider
// makes of it.
type Config = chat.Config

// Client is an Ollama provider. It is safe for concurrent use.
type Client struct {
	endpoint *chat.Endpoint
}

// New checks cfg and returns a client. Requests go to cfg.BaseURL + "/api/chat"
// ([DefaultBaseURL] when empty) and ask for JSON lines when cfg.Stream is set; cfg.Timeout counts
// a model still loading. A local server needs no key; for one behind an authenticating proxy, or
// a hosted Ollama, cfg.APIKey is sent as a bearer token, and it is required when cfg.APIKeyEnv is
// set. A bad base URL, or APIKeyEnv set with no key (`ollama: no API key: set OLLAMA_API_KEY`),
// is a Usage error.
func New(cfg Config) (*Client, error) {
	e, err := chat.NewEndpoint(chat.Spec{
		Provider:       name,
		DefaultBaseURL: DefaultBaseURL,
		Path:           "/api/chat",
		Streaming:      chat.JSONLines,
		KeyEnv:         "OLLAMA_API_KEY",
		Hint:           func(base string) string { return "is ollama running at " + base + "?" },
		Encode:         encodeRequest,
		Decode:         decodeResponse,
		DecodeStream:   decodeStream,
	}, cfg)
	if err != nil {
		return nil, err
	}
	return &Client{endpoint: e}, nil
}

// Chat sends the conversation and returns the model's reply. Errors: Usage for a request the
// server refuses (a model not pulled is a 404), Invalid for a bad option, Execution for a server
// that fails, cannot be reached or answers with something unreadable; a cancelled ctx returns
// its error, unclassified.
func (c *Client) Chat(ctx context.Context, req ports.ChatRequest) (ports.ChatResponse, error) {
	return c.endpoint.Chat(ctx, req)
}
