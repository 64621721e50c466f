package chat

import (
	"cmp"
	"context"
	"io"
	"net/http"
	"time"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/httpx"
)

// Config says where a model server is and how to talk to it. It is the Config of every HTTP
// provider (openai.Config, anthropic.Config and ollama.Config are this type), so the factory
// fills them alike; each provider's New says where requests go and when a key is required.
type Config struct {
	// BaseURL is the API root, http or https. Empty means the provider's default.
	BaseURL string
	// Model is used when a request names none.
	Model string
	// APIKey is the key sent with every request, when the provider requires one or when it
	// is set.
	APIKey string
	// APIKeyEnv is the environment variable the key was read from, named in errors. Set, it
	// makes a key required; empty means the provider's default variable.
	APIKeyEnv string
	// HTTPClient sends requests; nil means one with no timeout of its own.
	HTTPClient *http.Client
	// Stream asks for a streamed reply, passing text to ChatRequest.OnDelta as it arrives.
	Stream bool
	// MaxRetries is the number of retries after a failed attempt: 0 means 3, negative none.
	MaxRetries int
	// Headers are added to every request after awf's own, so they can override them.
	Headers map[string]string
	// Timeout bounds each attempt, streamed reply included: 0 means [DefaultTimeout],
	// negative none.
	Timeout time.Duration
}

// Streaming is how an API streams a reply.
type Streaming int

const (
	// Events is server-sent events (OpenAI, Anthropic). A server that ignores the request to
	// stream answers with one whole reply instead, which is read as such.
	Events Streaming = iota
	// JSONLines is one JSON object per line (Ollama). Every line is an object, so a whole reply
	// cannot be told from a stream and is not looked for.
	JSONLines
)

func (s Streaming) mediaType() string {
	if s == JSONLines {
		return "application/x-ndjson"
	}
	return "text/event-stream"
}

// Spec describes one provider's API to [NewEndpoint]: where requests go, how the key travels,
// and the provider's own wire format, which the endpoint calls but never looks into.
type Spec struct {
	// Provider names the adapter ("openai") and starts every error message.
	Provider string
	// DefaultBaseURL is used when Config.BaseURL is empty.
	DefaultBaseURL string
	// Path is added to the base URL: "/chat/completions".
	Path string
	// Streaming says what a streamed reply looks like.
	Streaming Streaming
	// KeyEnv is the variable a missing key is asked for in when Config.APIKeyEnv is empty.
	KeyEnv string
	// KeyHeader is the header that carries the key as is ("X-Api-Key"); empty means
	// "Authorization: Bearer KEY".
	KeyHeader string
	// NeedsKey reports whether a server at base requires a key even when the config names none
	// (OpenAI itself). Nil means a key is required only when Config.APIKey or APIKeyEnv is set.
	NeedsKey func(base string) bool
	// Header holds fixed headers of the API ("Anthropic-Version"), set before Config.Headers.
	Header map[string]string
	// Hint, when not nil, is added to network errors: "is ollama running at BASE?".
	Hint func(base string) string

	// Encode builds a request body for model; stream is Config.Stream.
	Encode func(model string, req ports.ChatRequest, stream bool) ([]byte, error)
	// Decode reads a whole reply. Calls without an id are numbered from firstID.
	Decode func(body io.Reader, firstID int) (ports.ChatResponse, error)
	// DecodeStream reads a streamed reply, passing text to onDelta (which may be nil).
	DecodeStream func(body io.Reader, firstID int, onDelta func(string)) (ports.ChatResponse, error)
}

// Endpoint is one provider's chat endpoint: the URL, the headers with the key, and the
// [httpx.Client] that posts each request with retries. It is safe for concurrent use.
type Endpoint struct {
	spec   Spec
	url    string
	model  string
	stream bool
	header http.Header
	http   *httpx.Client
}

// NewEndpoint checks cfg against spec and returns the endpoint. A bad base URL, or a missing
// key where one is required, is a Usage error (`openai: no API key: set OPENAI_API_KEY`).
func NewEndpoint(spec Spec, cfg Config) (*Endpoint, error) {
	base, err := BaseURL(spec.Provider, cfg.BaseURL, spec.DefaultBaseURL)
	if err != nil {
		return nil, err
	}
	key, err := spec.key(base, cfg)
	if err != nil {
		return nil, err
	}
	hint := ""
	if spec.Hint != nil {
		hint = spec.Hint(base)
	}
	return &Endpoint{
		spec:   spec,
		url:    base + spec.Path,
		model:  cfg.Model,
		stream: cfg.Stream,
		header: spec.header(key, cfg),
		http: &httpx.Client{
			Provider: spec.Provider,
			HTTP:     cfg.HTTPClient,
			Retry:    httpx.DefaultBackoff(Retries(cfg.MaxRetries)),
			Timeout:  Timeout(cfg.Timeout),
			Secret:   key,
			Hint:     hint,
		},
	}, nil
}

// key is the checked key to send, or "" when none is required and none is configured.
func (s Spec) key(base string, cfg Config) (string, error) {
	if cfg.APIKey == "" && cfg.APIKeyEnv == "" && (s.NeedsKey == nil || !s.NeedsKey(base)) {
		return "", nil
	}
	return Key(s.Provider, cfg.APIKey, cmp.Or(cfg.APIKeyEnv, s.KeyEnv))
}

// header is what every request carries: JSON in, JSON or a stream out, the key when there is
// one, the API's fixed headers, then the configured ones, which may override any of them.
func (s Spec) header(key string, cfg Config) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	if cfg.Stream {
		h.Set("Accept", s.Streaming.mediaType())
	}
	h.Set("User-Agent", "awf")
	switch {
	case key == "":
	case s.KeyHeader == "":
		h.Set("Authorization", "Bearer "+key)
	default:
		h.Set(s.KeyHeader, key)
	}
	for k, v := range s.Header {
		h.Set(k, v)
	}
	for k, v := range cfg.Headers {
		h.Set(k, v)
	}
	return h
}

// Chat picks the model (the request's, else the configured one), encodes the request, posts it
// and decodes the reply, whose Model defaults to the one asked for. Errors are those of the
// encoder (Invalid for a bad option), of [httpx.Client.Do] (Usage for a 4xx, Execution for a
// failing or unreachable server, ctx's own error when it ends) and of the decoder (Execution).
func (e *Endpoint) Chat(ctx context.Context, req ports.ChatRequest) (ports.ChatResponse, error) {
	model, err := Model(e.spec.Provider, req.Model, e.model)
	if err != nil {
		return ports.ChatResponse{}, err
	}
	body, err := e.spec.Encode(model, req, e.stream)
	if err != nil {
		return ports.ChatResponse{}, err
	}
	firstID := CountCalls(req.Messages) + 1
	var out ports.ChatResponse
	err = e.http.Do(ctx, e.url, e.header, body, func(resp *http.Response) error {
		var err error
		out, err = e.decode(resp.Body, firstID, req.OnDelta)
		return err
	})
	if err != nil {
		return ports.ChatResponse{}, err
	}
	out.Model = cmp.Or(out.Model, model)
	return out, nil
}

// decode reads a reply, streamed or whole. A server that ignores a request for events answers
// with the whole reply; its text goes to onDelta at once.
func (e *Endpoint) decode(body io.Reader, firstID int, onDelta func(string)) (ports.ChatResponse, error) {
	switch {
	case !e.stream:
		return e.spec.Decode(body, firstID)
	case e.spec.Streaming == JSONLines:
		return e.spec.DecodeStream(body, firstID, onDelta)
	}
	body, whole := httpx.Whole(body)
	if !whole {
		return e.spec.DecodeStream(body, firstID, onDelta)
	}
	out, err := e.spec.Decode(body, firstID)
	if err == nil && onDelta != nil && out.Content != "" {
		onDelta(out.Content)
	}
	return out, err
}
