// Package anthropic is the provider for Anthropic's Messages API (the "claude" provider):
// tool_use and tool_result content blocks, streamed or not. It implements ports.Provider.
package anthropic

import (
	"context"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/chat"
)

const name = "anthropic"

// DefaultBaseURL is Anthropic's API; requests go to BaseURL + "/v1/messages".
const DefaultBaseURL = "https://api.anthropic.com"

// DefaultKeyEnv names the variable a missing key is asked for in when Config.APIKeyEnv is empty.
const DefaultKeyEnv = "ANTHROPIC_API_KEY"

// Version is the anthropic-version header sent with every request.
const Version = "2023-06-01"

// DefaultMaxTokens is max_tokens, which the API requires, when the options give none.
const DefaultMaxTokens = 4096

// DefaultTimeout bounds one attempt when Config.Timeout is zero.
const DefaultTimeout = chat.DefaultTimeout

var _ ports.Provider = (*Client)(nil)

// Config says where the API is and how to talk to it; see [New] for what this provider makes of
// it.
type Config = chat.Config

// Client is an Anthropic Messages API provider. It is safe for concurrent use.
type Client struct {
	endpoint *chat.Endpoint
}

// New checks cfg and returns a client. Requests go to cfg.BaseURL + "/v1/messages" (the base URL
// is the API root without /v1; [DefaultBaseURL] when empty), with the key as x-api-key and the
// anthropic-version header [Version], which cfg.Headers may override along with an
// anthropic-beta flag. A key is required; cfg.APIKeyEnv empty means [DefaultKeyEnv]. A bad base
// URL or a missing key (`anthropic: no API key: set ANTHROPIC_API_KEY`) is a Usage error.
func New(cfg Config) (*Client, error) {
	e, err := chat.NewEndpoint(chat.Spec{
		Provider:       name,
		DefaultBaseURL: DefaultBaseURL,
		Path:           "/v1/messages",
		Streaming:      chat.Events,
		KeyEnv:         DefaultKeyEnv,
		KeyHeader:      "X-Api-Key",
		NeedsKey:       func(string) bool { return true },
		Header:         map[string]string{"Anthropic-Version": Version},
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
// API refuses as malformed or unauthorised (4xx), Invalid for a bad option, Execution for a
// server that fails or answers with something unreadable; a cancelled ctx returns its error,
// unclassified.
func (c *Client) Chat(ctx context.Context, req ports.ChatRequest) (ports.ChatResponse, error) {
	return c.endpoint.Chat(ctx, req)
}
