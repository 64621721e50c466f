// Package ollama is the provider for Ollama's native chat API (POST /api/chat): tools and
// tool_calls with arguments as objects, streamed as JSON lines or not. It implements
// ports.Provider. (Ollama's OpenAI-compatible /v1 is served by package openai.)
package ollama

import (
	"cmp"
	"context"
	"net/http"
	"time"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/chat"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/httpx"
)

const name = "ollama"

// DefaultBaseURL is a local Ollama server; requests go to BaseURL + "/api/chat".
const DefaultBaseURL = "http://localhost:11434"

// DefaultTimeout bounds one attempt when Config.Timeout is zero.
const DefaultTimeout = chat.DefaultTimeout

var _ ports.Provider = (*Client)(nil)

// Config says where the server is and how to talk to it.
type Config struct {
	// BaseURL is the server root. Empty means [DefaultBaseURL].
	BaseURL string
	// Model is used when a request names none.
	Model string
	// APIKey, for a server behind an authenticating proxy or a hosted Ollama, is sent as a
	// bearer token. A local server needs none; it is required only when APIKeyEnv is set.
	APIKey string
	// APIKeyEnv is the environment variable the key was read from, named in errors.
	APIKeyEnv string
	// HTTPClient sends requests; nil means one with no timeout of its own.
	HTTPClient *http.Client
	// Stream asks for JSON lines, passing text to ChatRequest.OnDelta as it arrives.
	Stream bool
	// MaxRetries is the number of retries after a failed attempt: 0 means 3, negative none.
	MaxRetries int
	// Headers are added to every request after awf's own, so they can override them.
	Headers map[string]string
	// Timeout bounds each attempt, streamed reply included (a model still loading counts):
	// 0 means [DefaultTimeout], negative none.
	Timeout time.Duration
}

// Client is an Ollama provider. It is safe for concurrent use.
type Client struct {
	url    string
	model  string
	stream bool
	header http.Header
	http   *httpx.Client
}

// New checks cfg and returns a client. A bad base URL, or APIKeyEnv set with no key
// (`ollama: no API key: set OLLAMA_API_KEY`), is a Usage error.
func New(cfg Config) (*Client, error) {
	base, err := chat.BaseURL(name, cfg.BaseURL, DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	header := http.Header{}
	header.Set("Content-Type", "application/json")
	header.Set("Accept", "application/json")
	if cfg.Stream {
		header.Set("Accept", "application/x-ndjson")
	}
	header.Set("User-Agent", "awf")
	key := ""
	if cfg.APIKey != "" || cfg.APIKeyEnv != "" {
		if key, err = chat.Key(name, cfg.APIKey, cmp.Or(cfg.APIKeyEnv, "OLLAMA_API_KEY")); err != nil {
			return nil, err
		}
		header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range cfg.Headers {
		header.Set(k, v)
	}
	return &Client{
		url:    base + "/api/chat",
		model:  cfg.Model,
		stream: cfg.Stream,
		header: header,
		http: &httpx.Client{
			Provider: name,
			HTTP:     cfg.HTTPClient,
			Retry:    httpx.DefaultBackoff(chat.Retries(cfg.MaxRetries)),
			Timeout:  chat.Timeout(cfg.Timeout),
			Secret:   key,
			Hint:     "is ollama running at " + base + "?",
		},
	}, nil
}

// Chat sends the conversation and returns the model's reply. Errors: Usage for a request the
// server refuses (a model not pulled is a 404), Invalid for a bad option, Execution for a server
// that fails, cannot be reached or answers with something unreadable; a cancelled ctx returns
// its error, unclassified.
func (c *Client) Chat(ctx context.Context, req ports.ChatRequest) (ports.ChatResponse, error) {
	model, err := chat.Model(name, req.Model, c.model)
	if err != nil {
		return ports.ChatResponse{}, err
	}
	body, err := encodeRequest(model, req, c.stream)
	if err != nil {
		return ports.ChatResponse{}, err
	}
	firstID := chat.CountCalls(req.Messages) + 1
	var out ports.ChatResponse
	err = c.http.Do(ctx, c.url, c.header, body, func(resp *http.Response) error {
		var err error
		if c.stream {
			out, err = decodeStream(resp.Body, firstID, req.OnDelta)
		} else {
			out, err = decodeResponse(resp.Body, firstID)
		}
		return err
	})
	if err != nil {
		return ports.ChatResponse{}, err
	}
	out.Model = cmp.Or(out.Model, model)
	return out, nil
}
