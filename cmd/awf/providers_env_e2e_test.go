package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// A newcomer with Ollama running switches the example's provider: OLLAMA_HOST names the server
// as it does for the ollama CLI, and the step's Claude model is not sent to Ollama.
func TestProviderSwitchUsesOllamaHostAndNoForeignModel(t *testing.T) {
	var mu sync.Mutex
	var models []string
	asked := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), models...)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Model string `json:"model"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		mu.Lock()
		models = append(models, r.URL.Path+" "+body.Model)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-ndjson")
		fmt.Fprintln(w, `{"model":"qwen3","message":{"role":"assistant","content":"done"},"done":true,"done_reason":"stop"}`)
	}))
	defer srv.Close()

	e := newEnv(t)
	e.write("agent.yaml", `name: agent
steps:
  - name: code
    type: agent
    provider: claude
    prompt: say done
    options:
      model: claude-sonnet-4-20250514
`)
	run := func(args ...string) result {
		cmd := e.cmd(t.Context(), args...)
		cmd.Env = append(cmd.Env, "OLLAMA_HOST="+strings.TrimPrefix(srv.URL, "http://"))
		return e.capture(cmd, args)
	}

	r := run("run", "agent.yaml", "--provider", "ollama")
	e.wantExit(r, 1, []string{"run", "agent.yaml", "--provider", "ollama"})
	if !strings.Contains(r.stderr, "set --model") || !strings.Contains(r.stderr, "claude-sonnet-4-20250514") {
		t.Errorf("stderr does not say the model was not carried over and to set --model:\n%s", r.stderr)
	}
	if got := asked(); len(got) != 0 {
		t.Errorf("Ollama was asked %v before a model was known", got)
	}

	args := []string{"run", "agent.yaml", "--provider", "ollama", "--model", "qwen3"}
	e.wantExit(run(args...), 0, args)
	if got := asked(); len(got) != 1 || got[0] != "/api/chat qwen3" {
		t.Errorf("Ollama got %v, want one /api/chat request for qwen3", got)
	}
}
