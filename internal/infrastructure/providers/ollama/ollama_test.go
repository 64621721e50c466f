package ollama

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/wiretest"
)

func newClient(t *testing.T, srv *wiretest.Server, stream bool) *Client {
	t.Helper()
	c, err := New(Config{BaseURL: srv.URL, Model: "qwen2.5-coder:7b", Stream: stream, HTTPClient: wiretest.Client()})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

const textReply = `{"model":"qwen2.5-coder:7b","created_at":"2025-03-12T14:13:43.416799Z","message":{"role":"assistant","content":"Hello! How are you today?"},
"done_reason":"stop","done":true,"total_duration":5191566416,"load_duration":2154458,"prompt_eval_count":26,"prompt_eval_duration":383809000,"eval_count":298,"eval_duration":4799921000}`

// textWant is textReply decoded.
var textWant = ports.ChatResponse{Content: "Hello! How are you today?", FinishReason: "stop", Model: "qwen2.5-coder:7b", Usage: state.Tokens{Input: 26, Output: 298, Total: 324}}

func TestChatRequestBody(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
		req    ports.ChatRequest
		want   string
	}{
		{
			name: "plain text, stream false sent",
			req:  ports.ChatRequest{System: "You are terse.", Messages: []state.Message{{Role: "user", Content: "Hello"}}},
			want: `{"model":"qwen2.5-coder:7b","stream":false,"messages":[
				{"role":"system","content":"You are terse."},{"role":"user","content":"Hello"}]}`,
		},
		{
			name: "tools and options",
			req: ports.ChatRequest{
				Model:    "llama3.1",
				Messages: []state.Message{{Role: "user", Content: "Weather?"}},
				Tools:    []ports.ToolSchema{wiretest.WeatherTool},
				Options: map[string]any{"temperature": 0, "max_tokens": 256, "seed": 1, "stop": "END", "num_ctx": 8192,
					"keep_alive": "10m", "think": false, "options": map[string]any{"top_k": 20},
					"response_format": map[string]any{"type": "json_object"}, "model": "ignored"},
			},
			want: `{"model":"llama3.1","stream":false,"messages":[{"role":"user","content":"Weather?"}],
				"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather for a city",
					"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}],
				"format":"json","keep_alive":"10m","think":false,
				"options":{"temperature":0,"num_predict":256,"seed":1,"stop":["END"],"num_ctx":8192,"top_k":20}}`,
		},
		{
			name: "json schema format",
			req: ports.ChatRequest{Messages: []state.Message{{Role: "user", Content: "Age?"}},
				Options: map[string]any{"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{"name": "a", "schema": map[string]any{"type": "object"}}}}},
			want: `{"model":"qwen2.5-coder:7b","stream":false,"messages":[{"role":"user","content":"Age?"}],"format":{"type":"object"}}`,
		},
		{
			name: "tool results round trip",
			req: ports.ChatRequest{Messages: []state.Message{
				{Role: "user", Content: "Weather in Paris?"},
				{Role: "assistant", ToolCalls: []state.CallRef{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}, {ID: "call_2", Name: "now", Arguments: ""}}},
				{Role: "tool", ToolCallID: "call_1", Content: "18C"},
				{Role: "tool", ToolCallID: "call_2", Name: "now", Content: "no clock", IsError: true},
				{Role: "assistant", Content: "It is 18C."},
			}},
			want: `{"model":"qwen2.5-coder:7b","stream":false,"messages":[
				{"role":"user","content":"Weather in Paris?"},
				{"role":"assistant","content":"","tool_calls":[
					{"id":"call_1","function":{"name":"get_weather","arguments":{"city":"Paris"}}},
					{"id":"call_2","function":{"name":"now","arguments":{}}}]},
				{"role":"tool","content":"18C","tool_name":"get_weather","tool_call_id":"call_1"},
				{"role":"tool","content":"no clock","tool_name":"now","tool_call_id":"call_2"},
				{"role":"assistant","content":"It is 18C."}]}`,
		},
		{
			name:   "streaming",
			stream: true,
			req:    ports.ChatRequest{Messages: []state.Message{{Role: "user", Content: "Hi"}}},
			want:   `{"model":"qwen2.5-coder:7b","stream":true,"messages":[{"role":"user","content":"Hi"}]}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reply := textReply
			if tc.stream {
				reply = doneLine + "\n"
			}
			r := wiretest.Sent(t, newClient, tc.stream, reply, tc.req)
			r.Check(t, "/api/chat", map[string]string{"Authorization": ""}, tc.want)
		})
	}
}

func TestChatBadOptions(t *testing.T) {
	srv := wiretest.New(t, wiretest.Reply{Body: textReply})
	c := newClient(t, srv, false)
	tests := []struct {
		opts map[string]any
		want string
	}{
		{map[string]any{"stop": 3}, "ollama: option stop: want a string or a list of strings, got 3"},
		{map[string]any{"options": "x"}, "ollama: option options: want a map, got x"},
		{map[string]any{"stream": true}, `ollama: option "stream" is set by awf and cannot be overridden`},
		{map[string]any{"response_format": "json"}, "ollama: option response_format: want {type: json_object} or {type: json_schema, json_schema: {schema: ...}}, got json"},
	}
	for _, tc := range tests {
		_, err := c.Chat(t.Context(), ports.ChatRequest{Options: tc.opts})
		if err == nil || err.Error() != tc.want || fault.KindOf(err) != fault.Invalid {
			t.Errorf("Chat(options %v) = %v, want %q (invalid)", tc.opts, err, tc.want)
		}
	}
}

func TestChatResponse(t *testing.T) {
	history := ports.ChatRequest{Messages: []state.Message{{Role: "user", Content: "go"}, {Role: "assistant", ToolCalls: []state.CallRef{{ID: "call_1", Name: "now"}}}, {Role: "tool", ToolCallID: "call_1", Content: "noon"}}}
	tests := []wiretest.Case{
		{
			Name: "text",
			Req:  history,
			Body: textReply,
			Want: textWant,
		},
		{
			Name: "tool calls, arguments as object and as string, no ids",
			Req:  history,
			Body: `{"model":"llama3.2","created_at":"2024-07-22T20:33:28.123648Z","message":{"role":"assistant","content":"","tool_calls":[
				{"function":{"name":"get_weather","arguments":{"city":"Paris, FR"}}},
				{"function":{"index":1,"name":"now","arguments":"{}"}}]},
				"done_reason":"stop","done":true,"total_duration":885095291,"prompt_eval_count":122,"eval_count":33}`,
			Want: ports.ChatResponse{FinishReason: "tool_calls", Model: "llama3.2", Usage: state.Tokens{Input: 122, Output: 33, Total: 155},
				ToolCalls: []state.CallRef{{ID: "call_2", Name: "get_weather", Arguments: `{"city":"Paris, FR"}`}, {ID: "call_3", Name: "now", Arguments: `{}`}}},
		},
		{
			Name: "tool call with id, thinking ignored, length",
			Req:  history,
			Body: `{"model":"qwen3","message":{"role":"assistant","content":"Sure","thinking":"hmm","tool_calls":[{"id":"call_x1","function":{"name":"now","arguments":{}}}]},"done_reason":"length","done":true,"eval_count":5}`,
			Want: ports.ChatResponse{Content: "Sure", FinishReason: "length", Model: "qwen3", Usage: state.Tokens{Output: 5, Total: 5},
				ToolCalls: []state.CallRef{{ID: "call_x1", Name: "now", Arguments: `{}`}}},
		},
		{
			Name: "answer cut off at num_predict",
			Req:  history,
			Body: `{"model":"qwen3","message":{"role":"assistant","content":"Once upon a"},"done_reason":"length","done":true,"prompt_eval_count":3,"eval_count":4}`,
			Want: ports.ChatResponse{Content: "Once upon a", FinishReason: "length", Model: "qwen3", Usage: state.Tokens{Input: 3, Output: 4, Total: 7}},
		},
	}
	wiretest.Run(t, newClient, tests)
}

func line(content string) string {
	return fmt.Sprintf(`{"model":"qwen2.5-coder:7b","created_at":"2025-03-12T08:52:19.385406455Z","message":{"role":"assistant","content":%q},"done":false}`, content)
}

const doneLine = `{"model":"qwen2.5-coder:7b","created_at":"2025-03-12T08:52:20.1Z","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"total_duration":4883583458,"load_duration":1334875,"prompt_eval_count":26,"prompt_eval_duration":342546000,"eval_count":282,"eval_duration":4535599000}`

func TestChatStream(t *testing.T) {
	usage := state.Tokens{Input: 26, Output: 282, Total: 308}
	tests := []wiretest.Case{
		{
			Name:   "text",
			Stream: true,
			Body:   strings.Join([]string{line("The"), line(" sky"), line(" is blue."), doneLine}, "\n") + "\n",
			Want:   ports.ChatResponse{Content: "The sky is blue.", FinishReason: "stop", Model: "qwen2.5-coder:7b", Usage: usage},
			Deltas: []string{"The", " sky", " is blue."},
		},
		{
			Name:   "CRLF, blank lines, no final newline",
			Stream: true,
			Body:   line("Hi") + "\r\n\r\n" + doneLine,
			Want:   ports.ChatResponse{Content: "Hi", FinishReason: "stop", Model: "qwen2.5-coder:7b", Usage: usage},
			Deltas: []string{"Hi"},
		},
		{
			Name:   "tool calls, each whole in its line",
			Stream: true,
			Body: strings.Join([]string{
				line("Let me look."),
				`{"model":"qwen2.5-coder:7b","created_at":"2025-03-12T08:52:19.5Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"Paris"}}}]},"done":false}`,
				`{"model":"qwen2.5-coder:7b","created_at":"2025-03-12T08:52:19.6Z","message":{"role":"assistant","content":"","tool_calls":[{"id":"call_k2","function":{"index":1,"name":"now","arguments":{}}}]},"done":false}`,
				doneLine}, "\n") + "\n",
			Want: ports.ChatResponse{Content: "Let me look.", FinishReason: "tool_calls", Model: "qwen2.5-coder:7b", Usage: usage,
				ToolCalls: []state.CallRef{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}, {ID: "call_k2", Name: "now", Arguments: `{}`}}},
			Deltas: []string{"Let me look."},
		},
		{
			Name:   "answer cut off at num_predict",
			Stream: true,
			Body:   line("Once") + "\n" + line(" upon") + "\n" + strings.Replace(doneLine, `"done_reason":"stop"`, `"done_reason":"length"`, 1) + "\n",
			Want:   ports.ChatResponse{Content: "Once upon", FinishReason: "length", Model: "qwen2.5-coder:7b", Usage: usage},
			Deltas: []string{"Once", " upon"},
		},
	}
	wiretest.Run(t, newClient, tests)
}

func TestChatErrors(t *testing.T) {
	tests := []wiretest.Case{
		{
			Name:    "model not pulled is not retried",
			Replies: []wiretest.Reply{{Status: 404, Body: `{"error":"model \"qwen9\" not found, try pulling it first"}`}},
			Err:     `ollama: 404 Not Found: model "qwen9" not found, try pulling it first`, Kind: fault.Usage, Requests: 1,
		},
		{
			Name:    "busy server with Retry-After then success",
			Replies: []wiretest.Reply{{Status: 503, Header: map[string]string{"Retry-After": "3"}, Body: `{"error":"server busy, please try again.  maximum pending requests exceeded"}`}, {Body: textReply}},
			Want:    textWant, Requests: 2, Waited: 3 * time.Second,
		},
		{
			Name:    "500 then success",
			Replies: []wiretest.Reply{{Status: 500, Body: `{"error":"llama runner process has terminated: signal: killed"}`}, {Body: textReply}},
			Want:    textWant, Requests: 2,
		},
		{
			Name:    "error line mid-stream after text",
			Stream:  true,
			Replies: []wiretest.Reply{{Body: line("Hel") + "\n" + `{"error":"an error was encountered while running the model: unexpected EOF"}` + "\n"}},
			Err:     "ollama: error in response: an error was encountered while running the model: unexpected EOF", Kind: fault.Execution, Requests: 1,
			Deltas: []string{"Hel"},
		},
		{
			Name:    "stream closed before done",
			Stream:  true,
			Replies: []wiretest.Reply{{Body: line("Hel") + "\n"}},
			Err:     "ollama: stream ended before done: response ended early", Kind: fault.Execution, Requests: 1,
			Deltas: []string{"Hel"},
		},
		{
			Name:    "stream cut inside a line",
			Stream:  true,
			Replies: []wiretest.Reply{{Body: line("Hel") + "\n" + line("lo")[:20]}},
			Err:     "ollama: stream ended before done: line cut off: response ended early", Kind: fault.Execution, Requests: 1,
			Deltas: []string{"Hel"},
		},
		{
			Name:    "malformed line",
			Stream:  true,
			Replies: []wiretest.Reply{{Body: line("Hel") + "\n{not json}\n" + doneLine + "\n"}},
			Err:     `ollama: malformed stream line: invalid character 'n' looking for beginning of object key string: "{not json}"`, Kind: fault.Execution, Requests: 1,
			Deltas: []string{"Hel"},
		},
	}
	wiretest.Run(t, newClient, tests)
}

func TestServerDown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Port 1 on loopback: nothing listens there.
		c, err := New(Config{BaseURL: "http://127.0.0.1:1", Model: "m", HTTPClient: wiretest.Client()})
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.Chat(t.Context(), ports.ChatRequest{})
		want := "ollama: post http://127.0.0.1:1/api/chat: dial tcp 127.0.0.1:1: connect: connection refused (is ollama running at http://127.0.0.1:1?) (gave up after 4 attempts)"
		if err == nil || err.Error() != want || fault.KindOf(err) != fault.Execution {
			t.Errorf("Chat = %v, want %q (execution)", err, want)
		}
	})
}

func TestNewKey(t *testing.T) {
	_, err := New(Config{APIKeyEnv: "OLLAMA_API_KEY"})
	if want := "ollama: no API key: set OLLAMA_API_KEY"; err == nil || err.Error() != want || fault.KindOf(err) != fault.Usage {
		t.Errorf("New = %v, want %q (usage)", err, want)
	}
	srv := wiretest.New(t, wiretest.Reply{Body: textReply})
	c, err := New(Config{BaseURL: srv.URL, Model: "m", APIKey: "ollama-key-123456", APIKeyEnv: "OLLAMA_API_KEY"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat(t.Context(), ports.ChatRequest{}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer ollama-key-123456" {
		t.Errorf("Authorization = %q, want the bearer key", got)
	}
}

func streamBody(n int) []byte {
	var b bytes.Buffer
	for i := range n - 2 {
		b.WriteString(line(fmt.Sprintf("word%d ", i)) + "\n")
	}
	b.WriteString(`{"model":"qwen2.5-coder:7b","created_at":"2025-03-12T08:52:19.5Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"write_file","arguments":{"path":"a.txt","content":"` + strings.Repeat("x", 800) + `"}}}]},"done":false}` + "\n")
	b.WriteString(doneLine + "\n")
	return b.Bytes()
}

func BenchmarkDecodeStream200(b *testing.B) {
	wiretest.Bench(b, streamBody(200), decodeStream)
}
