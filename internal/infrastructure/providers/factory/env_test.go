package factory_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/config"
	"github.com/awf-dev/awf/internal/infrastructure/providers/factory"
)

// wireServer answers one chat request of each provider's wire format and remembers the path
// and model it was asked for.
func wireServer(t *testing.T) (*httptest.Server, *atomic.Value) {
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model string `json:"model"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		got.Store(r.URL.Path + " " + body.Model)
		w.Header().Set("Content-Type", "application/json")
		switch {
		case strings.HasSuffix(r.URL.Path, "/chat/completions"):
			fmt.Fprint(w, `{"id":"x","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}`)
		case strings.HasSuffix(r.URL.Path, "/v1/messages"):
			fmt.Fprint(w, `{"id":"x","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
		case r.URL.Path == "/api/chat":
			fmt.Fprint(w, `{"model":"m","message":{"role":"assistant","content":"hi"},"done":true,"done_reason":"stop"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &got
}

// The variables the providers' official clients read name the server when the definition
// names none; a base_url in the definition still wins.
func TestBaseURLFromTheOfficialClientsVariables(t *testing.T) {
	srv, got := wireServer(t)
	hostport := strings.TrimPrefix(srv.URL, "http://")
	tests := []struct {
		provider, env, value, want string
	}{
		{"openai", "OPENAI_BASE_URL", srv.URL + "/v1", "/v1/chat/completions m"},
		{"anthropic", "ANTHROPIC_BASE_URL", srv.URL, "/v1/messages m"},
		{"ollama", "OLLAMA_HOST", hostport, "/api/chat m"},
		{"ollama", "OLLAMA_HOST", "http://" + hostport, "/api/chat m"},
	}
	for _, tt := range tests {
		t.Run(tt.env+"="+tt.value, func(t *testing.T) {
			got.Store("")
			f := newFactory(t, factory.Options{Getenv: env(map[string]string{tt.env: tt.value, "OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"})})
			rp, err := f.Provider(t.Context(), ports.ProviderRef{Workflow: wf(nil), Step: "s", Name: tt.provider, Model: "m"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rp.Provider.Chat(t.Context(), ports.ChatRequest{Model: rp.Model, Messages: []state.Message{{Role: "user", Content: "hi"}}}); err != nil {
				t.Fatal(err)
			}
			if got.Load() != tt.want {
				t.Errorf("request = %q, want %q", got.Load(), tt.want)
			}
		})
	}
	t.Run("a base_url in the definition wins", func(t *testing.T) {
		got.Store("")
		f := newFactory(t, factory.Options{Getenv: env(map[string]string{"OLLAMA_HOST": "127.0.0.1:1"}),
			Providers: map[string]config.ProviderConfig{"ollama": {BaseURL: srv.URL, Model: "m"}}})
		rp, err := f.Provider(t.Context(), ports.ProviderRef{Workflow: wf(nil), Step: "s", Name: "ollama"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := rp.Provider.Chat(t.Context(), ports.ChatRequest{Model: rp.Model, Messages: []state.Message{{Role: "user", Content: "hi"}}}); err != nil {
			t.Fatal(err)
		}
		if got.Load() != "/api/chat m" {
			t.Errorf("request = %q", got.Load())
		}
	})
}

// --provider never carries a model written for the step's own provider to another one.
func TestProviderSwitchDropsTheStepsModel(t *testing.T) {
	step := ports.ProviderRef{Workflow: wf(nil), Step: "code", Name: "claude", Model: "claude-sonnet-4-20250514"}
	tests := []struct {
		name      string
		opts      factory.Options
		wantModel string
		wantErr   string
	}{
		{name: "no other model: the error says to set --model",
			opts:    factory.Options{Provider: "ollama"},
			wantErr: `--provider ollama replaces the step's provider "claude", and its model "claude-sonnet-4-20250514" is not carried over`},
		{name: "--model", opts: factory.Options{Provider: "ollama", Model: "qwen3"}, wantModel: "qwen3"},
		{name: "the provider's configured model",
			opts:      factory.Options{Provider: "ollama", Providers: map[string]config.ProviderConfig{"ollama": {Model: "llama3.1"}}},
			wantModel: "llama3.1"},
		{name: "the configured default model of another default provider is not used",
			opts:    factory.Options{Provider: "ollama", DefaultProvider: "anthropic", DefaultModel: "claude-x"},
			wantErr: "set --model"},
		{name: "the configured default model of that provider",
			opts:      factory.Options{Provider: "ollama", DefaultProvider: "ollama", DefaultModel: "qwen3"},
			wantModel: "qwen3"},
		{name: "the same provider keeps the step's model",
			opts:      factory.Options{Provider: "claude", Getenv: env(map[string]string{"ANTHROPIC_API_KEY": "k"})},
			wantModel: "claude-sonnet-4-20250514"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rp, err := newFactory(t, tt.opts).Provider(t.Context(), step)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || fault.KindOf(err) != fault.Usage {
					t.Fatalf("Provider = %v, want a usage error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rp.Model != tt.wantModel {
				t.Errorf("model = %q, want %q", rp.Model, tt.wantModel)
			}
		})
	}
}
