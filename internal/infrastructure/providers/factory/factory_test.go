package factory_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/config"
	"github.com/awf-dev/awf/internal/infrastructure/loader"
	"github.com/awf-dev/awf/internal/infrastructure/providers/anthropic"
	"github.com/awf-dev/awf/internal/infrastructure/providers/cliagent"
	"github.com/awf-dev/awf/internal/infrastructure/providers/factory"
	"github.com/awf-dev/awf/internal/infrastructure/providers/ollama"
	"github.com/awf-dev/awf/internal/infrastructure/providers/openai"
	"github.com/awf-dev/awf/internal/infrastructure/providers/replay"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

func newFactory(t *testing.T, o factory.Options) *factory.Factory {
	t.Helper()
	if o.Getenv == nil {
		o.Getenv = env(nil)
	}
	f, err := factory.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func wf(providers map[string]workflow.ProviderConfig) *workflow.Workflow {
	return &workflow.Workflow{Name: "wf", Dir: "/tmp", Providers: providers}
}

func TestResolution(t *testing.T) {
	keys := env(map[string]string{"ANTHROPIC_API_KEY": "sk-ant", "OPENAI_API_KEY": "sk-oai", "LOCAL_KEY": "k"})
	workflowProviders := map[string]workflow.ProviderConfig{
		"local":  {Type: "openai", BaseURL: "http://localhost:11434/v1", Model: "qwen2.5-coder", Options: map[string]any{"temperature": 0.2, "stream": true}},
		"claude": {Model: "claude-from-workflow"}, // named after a built-in: the type may be left out
	}
	configProviders := map[string]config.ProviderConfig{
		"local": {Type: "ollama"}, // the workflow's definition wins
		"team":  {Type: "ollama", BaseURL: "http://gpu:11434", Model: "llama3.1", APIKeyEnv: "LOCAL_KEY"},
		"coder": {Type: "cli", Command: "codex exec", Options: map[string]any{"tool_format": "xml"}},
	}
	tests := []struct {
		name     string
		opts     factory.Options
		ref      ports.ProviderRef
		provider any
		resolved string
		model    string
		options  map[string]any
	}{
		{"workflow definition", factory.Options{}, ports.ProviderRef{Name: "local"}, &openai.Client{}, "local", "qwen2.5-coder", map[string]any{"temperature": 0.2}},
		{"built-in name, workflow model", factory.Options{}, ports.ProviderRef{Name: "claude"}, &anthropic.Client{}, "claude", "claude-from-workflow", nil},
		{"step model wins", factory.Options{}, ports.ProviderRef{Name: "claude", Model: "claude-step"}, &anthropic.Client{}, "claude", "claude-step", nil},
		{"--model wins", factory.Options{Model: "flag-model"}, ports.ProviderRef{Name: "claude", Model: "claude-step"}, &anthropic.Client{}, "claude", "flag-model", nil},
		{"config file definition", factory.Options{}, ports.ProviderRef{Name: "team"}, &ollama.Client{}, "team", "llama3.1", nil},
		{"--provider wins", factory.Options{Provider: "team"}, ports.ProviderRef{Name: "local"}, &ollama.Client{}, "team", "llama3.1", nil},
		{"default provider and model", factory.Options{DefaultProvider: "anthropic", DefaultModel: "default-model"}, ports.ProviderRef{}, &anthropic.Client{}, "anthropic", "default-model", nil},
		{"built-in openai", factory.Options{}, ports.ProviderRef{Name: "openai", Model: "gpt-4o"}, &openai.Client{}, "openai", "gpt-4o", nil},
		{"built-in cli", factory.Options{}, ports.ProviderRef{Name: "cli"}, &cliagent.Client{}, "cli", "", nil},
		{"cli from config", factory.Options{}, ports.ProviderRef{Name: "coder"}, &cliagent.Client{}, "coder", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Getenv, tc.opts.Providers = keys, configProviders
			f := newFactory(t, tc.opts)
			tc.ref.Workflow, tc.ref.Step = wf(workflowProviders), "s"
			rp, err := f.Provider(t.Context(), tc.ref)
			if err != nil {
				t.Fatal(err)
			}
			if got, want := fmt.Sprintf("%T", rp.Provider), fmt.Sprintf("%T", tc.provider); got != want {
				t.Errorf("provider is %s, want %s", got, want)
			}
			if rp.Name != tc.resolved || rp.Model != tc.model {
				t.Errorf("resolved %q model %q, want %q model %q", rp.Name, rp.Model, tc.resolved, tc.model)
			}
			if diff := cmp.Diff(tc.options, rp.Options); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCLIToolFormat(t *testing.T) {
	f := newFactory(t, factory.Options{Providers: map[string]config.ProviderConfig{
		"coder": {Type: "cli", Command: "codex exec", Options: map[string]any{"tool_format": "xml"}}}})
	for _, tc := range []struct{ step, want string }{{"", "xml"}, {"json", "json"}} {
		rp, err := f.Provider(t.Context(), ports.ProviderRef{Workflow: wf(nil), Step: "s", Name: "coder", ToolFormat: tc.step})
		if err != nil {
			t.Fatal(err)
		}
		if got := rp.Provider.(*cliagent.Client).Format(); got != tc.want {
			t.Errorf("step tool_format %q: format %q, want %q", tc.step, got, tc.want)
		}
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name string
		opts factory.Options
		ref  ports.ProviderRef
		kind fault.Kind
		want string
	}{
		{"no key", factory.Options{}, ports.ProviderRef{Name: "claude"}, fault.Usage, "no API key: set ANTHROPIC_API_KEY"},
		{"no key in the named variable", factory.Options{Providers: map[string]config.ProviderConfig{
			"team": {Type: "anthropic", APIKeyEnv: "TEAM_KEY"}}}, ports.ProviderRef{Name: "team"}, fault.Usage, "set TEAM_KEY"},
		{"openai needs its key", factory.Options{}, ports.ProviderRef{Name: "openai"}, fault.Usage, "set OPENAI_API_KEY"},
		{"unknown", factory.Options{}, ports.ProviderRef{Name: "cluade"}, fault.Usage, `unknown provider "cluade"`},
		{"none", factory.Options{}, ports.ProviderRef{}, fault.Usage, "names no provider"},
		{"no type", factory.Options{Providers: map[string]config.ProviderConfig{"x": {}}}, ports.ProviderRef{Name: "x"}, fault.Usage, `provider "x" in the config file's providers has no type`},
		{"bad option", factory.Options{Providers: map[string]config.ProviderConfig{
			"x": {Type: "ollama", Options: map[string]any{"stream": "yes"}}}}, ports.ProviderRef{Name: "x"}, fault.Usage, "options.stream: want true or false"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFactory(t, tc.opts)
			tc.ref.Workflow, tc.ref.Step = wf(nil), "s"
			_, err := f.Provider(t.Context(), tc.ref)
			if err == nil || fault.KindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v (kind %v), want %v containing %q", err, fault.KindOf(err), tc.kind, tc.want)
			}
		})
	}
	if _, err := factory.New(factory.Options{Getenv: env(nil), Replay: "a.yaml", Record: "b.yaml"}); fault.KindOf(err) != fault.Usage {
		t.Errorf("--replay with --record: err = %v, want a usage error", err)
	}
}

// completions is an OpenAI-compatible server answering every request with text, counting
// requests and remembering the last Authorization header.
func completions(t *testing.T, auth *atomic.Value) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth.Store(r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"x","model":"local-model","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestCompatibleServerNeverGetsTheOpenAIKey(t *testing.T) {
	var auth atomic.Value
	srv := completions(t, &auth)
	f := newFactory(t, factory.Options{Getenv: env(map[string]string{"OPENAI_API_KEY": "sk-secret"}),
		Providers: map[string]config.ProviderConfig{"local": {Type: "openai", BaseURL: srv.URL + "/v1", Model: "m"}}})
	rp, err := f.Provider(t.Context(), ports.ProviderRef{Workflow: wf(nil), Step: "s", Name: "local"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rp.Provider.Chat(t.Context(), ports.ChatRequest{Model: rp.Model, Messages: []state.Message{{Role: "user", Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if got := auth.Load(); got != "" {
		t.Errorf("Authorization = %q, want none for a server that is not OpenAI", got)
	}
}

func TestRecordThenReplay(t *testing.T) {
	var auth atomic.Value
	srv := completions(t, &auth)
	cassette := filepath.Join(t.TempDir(), "run.yaml")
	providers := map[string]config.ProviderConfig{"local": {Type: "openai", BaseURL: srv.URL + "/v1", Model: "m", APIKeyEnv: "LOCAL_KEY"}}
	req := ports.ChatRequest{Model: "m", Messages: []state.Message{{Role: "user", Content: "hi"}}}
	ref := ports.ProviderRef{Workflow: wf(nil), Step: "s", Name: "local"}

	rec := newFactory(t, factory.Options{Getenv: env(map[string]string{"LOCAL_KEY": "k"}), Providers: providers, Record: cassette})
	rp, err := rec.Provider(t.Context(), ref)
	if err != nil {
		t.Fatal(err)
	}
	live, err := rp.Provider.Chat(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := replay.Load(cassette)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(c.Interactions); n != 1 || c.Interactions[0].Workflow != "wf" || c.Interactions[0].Step != "s" {
		t.Fatalf("cassette = %+v, want one turn of wf/s", c.Interactions)
	}

	// Replaying needs neither the server nor the key.
	srv.Close()
	play := newFactory(t, factory.Options{Providers: providers, Replay: cassette})
	rp, err = play.Provider(t.Context(), ref)
	if err != nil {
		t.Fatal(err)
	}
	got, err := rp.Provider.Chat(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(live, got); diff != "" {
		t.Errorf("replayed reply (-live +replayed):\n%s", diff)
	}
	if rp.Name != "local (replayed)" {
		t.Errorf("Name = %q", rp.Name)
	}
	if u := play.Unplayed(); len(u) != 0 {
		t.Errorf("Unplayed = %v", u)
	}
}

func TestReplayProviderType(t *testing.T) {
	dir := t.TempDir()
	c := &replay.Cassette{Version: 1, Interactions: []replay.Interaction{{Workflow: "wf", Step: "s",
		Request: replay.Request{Messages: []state.Message{{Role: "user", Content: "hi"}}}, Response: replay.Response{Content: "recorded"}}}}
	data, err := replay.Encode(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "c.yaml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFactory(t, factory.Options{})
	w := &workflow.Workflow{Name: "wf", Dir: dir, Providers: map[string]workflow.ProviderConfig{
		"fixed": {Type: "replay", Options: map[string]any{"cassette": "c.yaml"}}}}
	rp, err := f.Provider(t.Context(), ports.ProviderRef{Workflow: w, Step: "s", Name: "fixed"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rp.Provider.Chat(t.Context(), ports.ChatRequest{Messages: []state.Message{{Role: "user", Content: "hi"}}})
	if err != nil || resp.Content != "recorded" {
		t.Errorf("Chat = %q, %v, want the recorded reply", resp.Content, err)
	}
}

func TestClientsAreShared(t *testing.T) {
	f := newFactory(t, factory.Options{Getenv: env(map[string]string{"ANTHROPIC_API_KEY": "k"})})
	a, err := f.Provider(t.Context(), ports.ProviderRef{Workflow: wf(nil), Step: "a", Name: "claude"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.Provider(t.Context(), ports.ProviderRef{Workflow: wf(nil), Step: "b", Name: "anthropic", Model: "other"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Provider != b.Provider {
		t.Error("claude and anthropic with the same settings got two clients, want one")
	}
}

// The example workflows resolve as documented: the local one needs no key, the quick start
// replays without one.
func TestExampleWorkflows(t *testing.T) {
	l := loader.New()
	local, err := l.Load("../../../../workflows/ollama-local.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f := newFactory(t, factory.Options{Getenv: env(map[string]string{"OPENAI_API_KEY": "sk-never-sent"})})
	a := local.Steps[0].Agent
	rp, err := f.Provider(t.Context(), ports.ProviderRef{Workflow: local, Step: local.Steps[0].Name, Name: a.Provider})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rp.Provider.(*openai.Client); !ok || rp.Model != "qwen2.5-coder:7b" {
		t.Errorf("ollama-local resolves to %T model %q", rp.Provider, rp.Model)
	}
	if diff := cmp.Diff(map[string]any{"temperature": 0.2}, rp.Options); diff != "" {
		t.Errorf("request options (-want +got):\n%s", diff)
	}

	quick, err := l.Load("../../../../workflows/autonomous-coding.yaml")
	if err != nil {
		t.Fatal(err)
	}
	f = newFactory(t, factory.Options{Replay: "../../../../workflows/cassettes/autonomous-coding.yaml"})
	model, _ := quick.Steps[0].Agent.Options["model"].(string)
	rp, err = f.Provider(t.Context(), ports.ProviderRef{Workflow: quick, Step: "implement_feature", Name: "claude", Model: model})
	if err != nil {
		t.Fatalf("the quick start under --replay: %v", err)
	}
	if rp.Name != "claude (replayed)" || rp.Model != "claude-sonnet-4-20250514" {
		t.Errorf("resolved %q model %q", rp.Name, rp.Model)
	}
}
