// Package openai is the provider for the OpenAI Chat Completions API and the servers that copy
// it (Ollama's /v1, vLLM, llama.cpp, LM Studio): native tools and tool_calls, streamed or not,
// tolerant of the ways compatible servers deviate from OpenAI. It implements ports.Provider.
package openai

import (
	"cmp"
	"context"
	"io"
	"net/http"
	"time"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/chat"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/httpx"
)

const name = "openai"

// DefaultBaseURL is OpenAI's API; a compatible server's base URL ends in /v1 likewise.
const DefaultBaseURL = "https://api.openai.com/v1"

// DefaultKeyEnv names the variable a missing key is asked for in when Config.APIKeyEnv is empty.
const DefaultKeyEnv = "OPENAI_API_KEY"

// DefaultTimeout bounds one attempt when Config.Timeout is zero.
const DefaultTimeout = chat.DefaultTimeout

var _ ports.Provider = (*Client)(nil)

// Config says where the API is and how to talk to it.
type Config struct {
	// BaseURL is the API root; requests go to BaseURL + "/chat/completions". Empty means
	// [DefaultBaseURL].
	BaseURL string
	// Model is used when a request names none.
	Model string
	// APIKey is sent as a bearer token. It is required for OpenAI itself (the default BaseURL)
	// and whenever APIKeyEnv is set; local servers need none.
	APIKey string
	// APIKeyEnv is the environment variable the key was read from, named in errors.
	APIKeyEnv string
	// HTTPClient sends requests; nil means one with no timeout of its own.
	HTTPClient *http.Client
	// Stream asks for server-sent events, passing text to ChatRequest.OnDelta as it arrives.
	Stream bool
	// MaxRetries is the number of retries after a failed attempt: 0 means 3, negative none.
	MaxRetries int
	// Headers are added to every request after awf's own, so they can override them.
	Headers map[string]string
	// Timeout bounds each attempt, streamed reply included: 0 means [DefaultTimeout], negative
	// none.
	Timeout time.Duration
}

// Client is an OpenAI-compatible provider. It is safe for concurrent use.
type Client struct {
	url    string
	model  string
	stream bool
	header http.Header
	http   *httpx.Client
}

// New checks cfg and returns a client. A bad base URL, or a missing key where one is required
// (`openai: no API key: set OPENAI_API_KEY`), is a Usage error.
func New(cfg Config) (*Client, error) {
	base, err := chat.BaseURL(name, cfg.BaseURL, DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	header := http.Header{}
	header.Set("Content-Type", "application/json")
	header.Set("Accept", "application/json")
	if cfg.Stream {
		header.Set("Accept", "text/event-stream")
	}
	header.Set("User-Agent", "awf")
	key := ""
	if cfg.APIKey != "" || cfg.APIKeyEnv != "" || base == DefaultBaseURL {
		if key, err = chat.Key(name, cfg.APIKey, cmp.Or(cfg.APIKeyEnv, DefaultKeyEnv)); err != nil {
			return nil, err
		}
		header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range cfg.Headers {
		header.Set(k, v)
	}
	return &Client{
		url:    base + "/chat/completions",
		model:  cfg.Model,
		stream: cfg.Stream,
		header: header,
		http: &httpx.Client{
			Provider: name,
			HTTP:     cfg.HTTPClient,
			Retry:    httpx.DefaultBackoff(chat.Retries(cfg.MaxRetries)),
			Timeout:  chat.Timeout(cfg.Timeout),
			Secret:   key,
		},
	}, nil
}

// Chat sends the conversation and returns the model's reply. Errors: Usage for a request the
// API refuses as malformed or unauthorised (4xx), Invalid for an option awf sets itself,
// Execution for a server that fails or answers with something unreadable; a cancelled ctx
// returns its error, unclassified.
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
		out, err = c.decode(resp.Body, firstID, req.OnDelta)
		return err
	})
	if err != nil {
		return ports.ChatResponse{}, err
	}
	out.Model = cmp.Or(out.Model, model)
	return out, nil
}

// decode reads a reply, streamed or whole. A server that ignores "stream": true answers with
// the whole reply; its text goes to onDelta at once.
func (c *Client) decode(body io.Reader, firstID int, onDelta func(string)) (ports.ChatResponse, error) {
	if !c.stream {
		return decodeResponse(body, firstID)
	}
	body, whole := httpx.Whole(body)
	if !whole {
		return decodeStream(body, firstID, onDelta)
	}
	out, err := decodeResponse(body, firstID)
	if err == nil && onDelta != nil && out.Content != "" {
		onDelta(out.Content)
	}
	return out, err
}
