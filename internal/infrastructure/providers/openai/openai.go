// Package openai is the provider for the OpenAI Chat Completions API and the servers that copy
// it (Ollama's /v1, vLLM, llama.cpp, LM Studio): native tools and tool_calls, streamed or not,
// tolerant of the ways compatible servers deviate from OpenAI. It implements ports.Provider.
package openai

import (
	"context"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/chat"
)

const name = "openai"

// DefaultBaseURL is OpenAI's API; a compatible server's base URL ends in /v1 likewise.
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultKeyEnv names the variable a missing key is asked for in when Config.APIKeyEnv is empty.
const DefaultKeyEnv = "OPENAI_API_KEY"

// DefaultTimeout bounds one attempt when Config.Timeout is zero.
const DefaultTimeout = chat.DefaultTimeout

var _ ports.Provider = (*Client)(nil)

// Config says where the API is and how to talk to it; see [New] for what this provider makes of
// it.
type Config = chat.Config

// Client is an OpenAI-compatible provider. It is safe for concurrent use.
type Client struct {
	endpoint *chat.Endpoint
}

// New checks cfg and returns a client. Requests go to cfg.BaseURL + "/chat/completions"
// ([DefaultBaseURL] when empty) and ask for server-sent events when cfg.Stream is set. The key
// is sent as a bearer token; it is required for OpenAI itself (the default base URL) and
// whenever cfg.APIKeyEnv is set, while local servers need none. A bad base URL, or a missing
// key where one is required (`openai: no API key: set OPENAI_API_KEY`), is a Usage error.
func New(cfg Config) (*Client, error) {
	e, err := chat.NewEndpoint(chat.Spec{
		Provider:       name,
		DefaultBaseURL: DefaultBaseURL,
		Path:           "/chat/completions",
		Streaming:      chat.Events,
		KeyEnv:         DefaultKeyEnv,
		NeedsKey:       func(base string) bool { return base == DefaultBaseURL },
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
// API refuses as malformed or unauthorised (4xx), Invalid for an option awf sets itself,
// Execution for a server that fails or answers with something unreadable; a cancelled ctx
// returns its error, unclassified.
func (c *Client) Chat(ctx context.Context, req ports.ChatRequest) (ports.ChatResponse, error) {
	return c.endpoint.Chat(ctx, req)
}
