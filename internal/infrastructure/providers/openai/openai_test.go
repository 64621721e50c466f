package openai

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/httpx"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/wiretest"
)

const testKey = "sk-test-0123456789abcdef"

func newClient(t *testing.T, srv *wiretest.Server, stream bool) *Client {
	t.Helper()
	c, err := New(Config{BaseURL: srv.URL + "/v1", Model: "gpt-4o-mini", APIKey: testKey, APIKeyEnv: "OPENAI_API_KEY", Stream: stream, HTTPClient: wiretest.Client()})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

const textReply = `{
  "id": "chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT",
  "object": "chat.completion",
  "created": 1741569952,
  "model": "gpt-4o-mini-2024-07-18",
  "choices": [
    {
      "index": 0,
      "message": {
        "role": "assistant",
        "content": "Hello! How can I help?",
        "refusal": null,
        "annotations": []
      },
      "logprobs": null,
      "finish_reason": "stop"
    }
  ],
  "usage": {
    "prompt_tokens": 19,
    "completion_tokens": 10,
    "total_tokens": 29,
    "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
    "completion_tokens_details": {"reasoning_tokens": 0}
  },
  "service_tier": "default",
  "system_fingerprint": "fp_06737a9306"
}`

// textWant is textReply decoded.
var textWant = ports.ChatResponse{Content: "Hello! How can I help?", FinishReason: "stop", Model: "gpt-4o-mini-2024-07-18",
	Usage: state.Tokens{Input: 19, Output: 10, Total: 29}}

func TestChatRequestBody(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
		req    ports.ChatRequest
		want   string
	}{
		{
			name: "plain text with system prompt",
			req:  ports.ChatRequest{System: "You are terse.", Messages: []state.Message{{Role: "user", Content: "Hello"}}},
			want: `{"model":"gpt-4o-mini","messages":[
				{"role":"system","content":"You are terse."},
				{"role":"user","content":"Hello"}]}`,
		},
		{
			name: "tools and options",
			req: ports.ChatRequest{
				Model:    "gpt-4.1",
				Messages: []state.Message{{Role: "user", Content: "Weather in Paris?"}},
				Tools:    []ports.ToolSchema{wiretest.WeatherTool, {Name: "now"}},
				Options: map[string]any{"temperature": 0.2, "max_tokens": 512, "top_p": 0.9, "seed": 7,
					"stop": []any{"END"}, "response_format": map[string]any{"type": "json_object"}, "model": "ignored"},
			},
			want: `{"model":"gpt-4.1","messages":[{"role":"user","content":"Weather in Paris?"}],
				"tools":[
					{"type":"function","function":{"name":"get_weather","description":"Weather for a city",
						"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}},
					{"type":"function","function":{"name":"now","parameters":{"type":"object","properties":{}}}}],
				"temperature":0.2,"max_tokens":512,"top_p":0.9,"seed":7,"stop":["END"],
				"response_format":{"type":"json_object"}}`,
		},
		{
			name: "tool results round trip",
			req: ports.ChatRequest{Messages: []state.Message{
				{Role: "user", Content: "Weather in Paris and Rome?"},
				{Role: "assistant", ToolCalls: []state.CallRef{
					{ID: "call_a", Name: "get_weather", Arguments: `{"city":"Paris"}`},
					{ID: "call_b", Name: "get_weather", Arguments: ""},
				}},
				{Role: "tool", ToolCallID: "call_a", Name: "get_weather", Content: "18C"},
				{Role: "tool", ToolCallID: "call_b", Name: "get_weather", Content: "missing city", IsError: true},
				{Role: "assistant", Content: "Let me retry.", ToolCalls: []state.CallRef{{ID: "call_c", Name: "get_weather", Arguments: `{"city":"Rome"}`}}},
				{Role: "tool", ToolCallID: "call_c", Content: "21C"},
				{Role: "assistant", Content: "Paris 18C, Rome 21C."},
				{Role: "user", Content: "Thanks"},
			}},
			want: `{"model":"gpt-4o-mini","messages":[
				{"role":"user","content":"Weather in Paris and Rome?"},
				{"role":"assistant","content":null,"tool_calls":[
					{"id":"call_a","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
					{"id":"call_b","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},
				{"role":"tool","content":"18C","tool_call_id":"call_a"},
				{"role":"tool","content":"missing city","tool_call_id":"call_b"},
				{"role":"assistant","content":"Let me retry.","tool_calls":[
					{"id":"call_c","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Rome\"}"}}]},
				{"role":"tool","content":"21C","tool_call_id":"call_c"},
				{"role":"assistant","content":"Paris 18C, Rome 21C."},
				{"role":"user","content":"Thanks"}]}`,
		},
		{
			name:   "streaming asks for usage",
			stream: true,
			req:    ports.ChatRequest{Messages: []state.Message{{Role: "user", Content: "<b>&</b>"}}},
			want: `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"<b>&</b>"}],
				"stream":true,"stream_options":{"include_usage":true}}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reply := textReply
			if tc.stream {
				reply = "data: [DONE]\n\n"
			}
			r := wiretest.Sent(t, newClient, tc.stream, reply, tc.req)
			r.Check(t, "/v1/chat/completions", map[string]string{"Authorization": "Bearer " + testKey, "Content-Type": "application/json"}, tc.want)
			if tc.stream && !strings.Contains(string(r.Body), `"<b>&</b>"`) {
				t.Errorf("body escapes HTML: %s", r.Body)
			}
		})
	}
}

func TestChatRejectsReservedOptionAndUnknownRole(t *testing.T) {
	srv := wiretest.New(t, wiretest.Reply{Body: textReply})
	c := newClient(t, srv, false)
	tests := []struct {
		name string
		req  ports.ChatRequest
		want string
	}{
		{"reserved option", ports.ChatRequest{Messages: []state.Message{{Role: "user", Content: "x"}}, Options: map[string]any{"messages": 1}},
			`openai: option "messages" is set by awf and cannot be overridden`},
		{"stream option on a client that does not stream", ports.ChatRequest{Options: map[string]any{"stream": true}},
			`openai: option "stream" is set by awf and cannot be overridden`},
		{"unknown role", ports.ChatRequest{Messages: []state.Message{{Role: "robot", Content: "x"}}},
			`openai: message 0 has unknown role "robot"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Chat(t.Context(), tc.req)
			if err == nil || err.Error() != tc.want || fault.KindOf(err) != fault.Invalid {
				t.Errorf("Chat = %v (%v), want %q (invalid)", err, fault.KindOf(err), tc.want)
			}
		})
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("server got %d requests, want 0", n)
	}
}

func TestChatResponse(t *testing.T) {
	// Two calls already in the conversation: generated ids continue from call_3.
	history := ports.ChatRequest{Messages: []state.Message{
		{Role: "user", Content: "go"},
		{Role: "assistant", ToolCalls: []state.CallRef{{ID: "call_1", Name: "now"}, {ID: "call_2", Name: "now"}}},
		{Role: "tool", ToolCallID: "call_1", Content: "12:00"},
		{Role: "tool", ToolCallID: "call_2", Content: "12:00"},
	}}
	tests := []wiretest.Case{
		{
			Name: "plain text",
			Req:  history,
			Body: textReply,
			Want: textWant,
		},
		{
			Name: "one tool call",
			Req:  history,
			Body: `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o-mini","choices":[{"index":0,
				"message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_DdmO9pD3xa9XTPNJ32zg2hcA","type":"function",
				"function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}],"refusal":null},"logprobs":null,"finish_reason":"tool_calls"}],
				"usage":{"prompt_tokens":80,"completion_tokens":17,"total_tokens":97}}`,
			Want: ports.ChatResponse{FinishReason: "tool_calls", Model: "gpt-4o-mini", Usage: state.Tokens{Input: 80, Output: 17, Total: 97},
				ToolCalls: []state.CallRef{{ID: "call_DdmO9pD3xa9XTPNJ32zg2hcA", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		},
		{
			Name: "several tool calls with text",
			Req:  history,
			Body: `{"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"Checking both.","tool_calls":[
				{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},
				{"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Rome\"}"}}]},"finish_reason":"tool_calls"}],
				"usage":{"prompt_tokens":5,"completion_tokens":6,"total_tokens":11}}`,
			Want: ports.ChatResponse{Content: "Checking both.", FinishReason: "tool_calls", Model: "gpt-4o", Usage: state.Tokens{Input: 5, Output: 6, Total: 11},
				ToolCalls: []state.CallRef{{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}, {ID: "call_2", Name: "get_weather", Arguments: `{"city":"Rome"}`}}},
		},
		{
			// Ollama's /v1 and some llama.cpp builds: arguments as an object, no ids, finish "stop",
			// no usage, no model.
			Name: "arguments as object, missing ids, stop with calls, no usage",
			Req:  history,
			Body: `{"choices":[{"message":{"role":"assistant","content":"","tool_calls":[
				{"function":{"name":"get_weather","arguments":{"city": "Paris"}}},
				{"type":"function","function":{"name":"now","arguments":{}}}]},"finish_reason":"stop"}]}`,
			Want: ports.ChatResponse{FinishReason: "tool_calls", Model: "gpt-4o-mini",
				ToolCalls: []state.CallRef{{ID: "call_3", Name: "get_weather", Arguments: `{"city":"Paris"}`}, {ID: "call_4", Name: "now", Arguments: `{}`}}},
		},
		{
			Name: "missing finish reason with calls, arguments empty, null and double-encoded",
			Req:  history,
			Body: `{"model":"qwen2.5","choices":[{"message":{"content":null,"tool_calls":[
				{"id":"a","function":{"name":"now","arguments":""}},
				{"id":"b","function":{"name":"now","arguments":null}},
				{"id":"c","function":{"name":"get_weather","arguments":"\"{\\\"city\\\":\\\"Oslo\\\"}\""}}]}}]}`,
			Want: ports.ChatResponse{FinishReason: "tool_calls", Model: "qwen2.5",
				ToolCalls: []state.CallRef{{ID: "a", Name: "now", Arguments: `{}`}, {ID: "b", Name: "now", Arguments: `{}`}, {ID: "c", Name: "get_weather", Arguments: `{"city":"Oslo"}`}}},
		},
		{
			Name: "content as parts, no finish reason, usage without total",
			Req:  history,
			Body: `{"model":"m","choices":[{"message":{"role":"assistant","content":[{"type":"text","text":"Hel"},{"type":"text","text":"lo"}]}}],
				"usage":{"prompt_tokens":3,"completion_tokens":2}}`,
			Want: ports.ChatResponse{Content: "Hello", FinishReason: "stop", Model: "m", Usage: state.Tokens{Input: 3, Output: 2, Total: 5}},
		},
		{
			Name: "length",
			Req:  history,
			Body: `{"model":"m","choices":[{"message":{"content":"Once upon"},"finish_reason":"length"}]}`,
			Want: ports.ChatResponse{Content: "Once upon", FinishReason: "length", Model: "m"},
		},
		{
			// A refusal comes with finish_reason "stop" and the explanation apart from the content.
			Name: "refusal",
			Req:  history,
			Body: `{"id":"chatcmpl-r","object":"chat.completion","created":1,"model":"gpt-4o-2024-08-06","choices":[{"index":0,
				"message":{"role":"assistant","content":null,"refusal":"I'm sorry, I cannot assist with that request."},
				"logprobs":null,"finish_reason":"stop"}],"usage":{"prompt_tokens":12,"completion_tokens":10,"total_tokens":22}}`,
			Want: ports.ChatResponse{FinishReason: "refusal", Refusal: "I'm sorry, I cannot assist with that request.", Model: "gpt-4o-2024-08-06",
				Usage: state.Tokens{Input: 12, Output: 10, Total: 22}},
		},
		{
			Name: "length inside tool arguments",
			Req:  history,
			Body: `{"model":"m","choices":[{"message":{"content":null,"tool_calls":[{"id":"c","type":"function",
				"function":{"name":"get_weather","arguments":"{\"city\":\"Par"}}]},"finish_reason":"length"}]}`,
			Want: ports.ChatResponse{FinishReason: "length", Model: "m",
				ToolCalls: []state.CallRef{{ID: "c", Name: "get_weather", Arguments: `{"city":"Par`}}},
		},
	}
	wiretest.Run(t, newClient, tests)
}

func TestChatErrors(t *testing.T) {
	tests := []wiretest.Case{
		{
			Name:    "401 is not retried",
			Replies: []wiretest.Reply{{Status: 401, Body: `{"error":{"message":"Incorrect API key provided: sk-test-************cdef. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`}},
			Err:     "openai: 401 Unauthorized: Incorrect API key provided: sk-test-************cdef. You can find your API key at https://platform.openai.com/account/api-keys.",
			Kind:    fault.Usage, Requests: 1,
		},
		{
			Name:    "404 unknown model",
			Replies: []wiretest.Reply{{Status: 404, Body: `{"error":{"message":"The model 'gpt-9' does not exist","type":"invalid_request_error","code":"model_not_found"}}`}},
			Err:     "openai: 404 Not Found: The model 'gpt-9' does not exist", Kind: fault.Usage, Requests: 1,
		},
		{
			Name:    "400 from a FastAPI server",
			Replies: []wiretest.Reply{{Status: 400, Body: `{"object":"error","message":"This model's maximum context length is 4096 tokens.","type":"BadRequestError","param":null,"code":400}`}},
			Err:     "openai: 400 Bad Request: This model's maximum context length is 4096 tokens.", Kind: fault.Usage, Requests: 1,
		},
		{
			Name:    "key echoed by a server is redacted",
			Replies: []wiretest.Reply{{Status: 403, Body: `{"error":"key ` + testKey + ` is not allowed"}`}},
			Err:     "openai: 403 Forbidden: key *** is not allowed", Kind: fault.Usage, Requests: 1,
		},
		{
			Name:    "error inside a 200 body",
			Replies: []wiretest.Reply{{Body: `{"error":{"message":"model crashed","type":"server_error"}}`}},
			Err:     "openai: error in response: model crashed", Kind: fault.Execution, Requests: 1,
		},
		{
			Name:    "no choices",
			Replies: []wiretest.Reply{{Body: `{"id":"x","choices":[]}`}},
			Err:     `openai: response has no message: "{\"id\":\"x\",\"choices\":[]}"`, Kind: fault.Execution, Requests: 1,
		},
		{
			Name:    "malformed body",
			Replies: []wiretest.Reply{{Body: `{"choices":[{"message":`}},
			Err:     `openai: malformed response: unexpected end of JSON input: "{\"choices\":[{\"message\":"`, Kind: fault.Execution, Requests: 1,
		},
		{
			Name:    "malformed chunk",
			Stream:  true,
			Replies: []wiretest.Reply{{Body: "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}\n\ndata: [DONE]\n\n"}},
			Err:     `openai: malformed stream chunk: unexpected end of JSON input: "{\"choices\":[{\"delta\":{\"content\":\"Hi\"}}"`, Kind: fault.Execution, Requests: 1,
			Deltas: []string{"Hi"},
		},
		{
			Name:    "stream error event",
			Stream:  true,
			Replies: []wiretest.Reply{{Body: "data: {\"error\":{\"message\":\"prompt too long\",\"code\":400}}\n\n"}},
			Err:     "openai: 400 Bad Request: prompt too long", Kind: fault.Usage, Requests: 1,
		},
	}
	wiretest.Run(t, newClient, tests)
}

func TestNewKey(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"openai without key", Config{Model: "gpt-4o"}, "openai: no API key: set OPENAI_API_KEY"},
		{"named variable empty", Config{BaseURL: "https://openrouter.ai/api/v1", APIKeyEnv: "OPENROUTER_API_KEY"}, "openai: no API key: set OPENROUTER_API_KEY"},
		{"key with line break", Config{APIKey: "sk-abc\nX-Evil: 1", APIKeyEnv: "K"}, "openai: the API key in K contains a line break"},
		{"bad base URL", Config{BaseURL: "localhost:8080"}, `openai: base URL "localhost:8080": want http(s)://host[:port][/path]`},
		{"local server needs none", Config{BaseURL: "http://localhost:11434/v1/"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("New(%+v) = %v, want no error", tc.cfg, err)
				}
				return
			}
			if err == nil || err.Error() != tc.want || fault.KindOf(err) != fault.Usage {
				t.Errorf("New(%+v) = %v (%v), want %q (usage)", tc.cfg, err, fault.KindOf(err), tc.want)
			}
		})
	}
}

func TestLocalServerGetsNoAuthorization(t *testing.T) {
	srv := wiretest.New(t, wiretest.Reply{Body: textReply})
	c, err := New(Config{BaseURL: srv.URL + "/v1/", Model: "llama3", Headers: map[string]string{"X-Trace": "1"}, HTTPClient: wiretest.Client()})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat(t.Context(), ports.ChatRequest{Messages: []state.Message{{Role: "user", Content: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	r := srv.Requests()[0]
	if got := r.Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization = %q, want none", got)
	}
	if got := r.Header.Get("X-Trace"); got != "1" {
		t.Errorf("X-Trace = %q, want 1", got)
	}
	if r.Path != "/v1/chat/completions" {
		t.Errorf("path = %q, want /v1/chat/completions", r.Path)
	}
}

func TestChatWithoutModel(t *testing.T) {
	c, err := New(Config{BaseURL: "http://localhost:1/v1"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Chat(t.Context(), ports.ChatRequest{})
	if want := "openai: no model: use --model, or set model: in the provider's definition or options.model in the step"; err == nil || err.Error() != want {
		t.Errorf("Chat = %v, want %q", err, want)
	}
}

func TestRetry(t *testing.T) {
	tests := []struct {
		name     string
		stream   bool
		replies  []wiretest.Reply
		minWait  time.Duration
		maxWait  time.Duration
		requests int
		want     string // error; "" for success
		kind     fault.Kind
	}{
		{
			name: "429 with Retry-After seconds",
			replies: []wiretest.Reply{
				{Status: 429, Header: map[string]string{"Retry-After": "2"}, Body: `{"error":{"message":"Rate limit reached","type":"requests"}}`},
				{Body: textReply},
			},
			minWait: 2 * time.Second, maxWait: 2 * time.Second, requests: 2,
		},
		{
			name: "429 with retry-after-ms",
			replies: []wiretest.Reply{
				{Status: 429, Header: map[string]string{"Retry-After-Ms": "1500", "Retry-After": "2"}, Body: `{}`},
				{Body: textReply},
			},
			minWait: 1500 * time.Millisecond, maxWait: 1500 * time.Millisecond, requests: 2,
		},
		{
			name: "Retry-After capped at a minute",
			replies: []wiretest.Reply{
				{Status: 503, Header: map[string]string{"Retry-After": "3600"}},
				{Body: textReply},
			},
			minWait: time.Minute, maxWait: time.Minute, requests: 2,
		},
		{
			name:    "500 then success backs off with jitter",
			replies: []wiretest.Reply{{Status: 500, Body: `{"error":{"message":"boom"}}`}, {Body: textReply}},
			minWait: 375 * time.Millisecond, maxWait: 500 * time.Millisecond, requests: 2,
		},
		{
			name:    "backoff doubles",
			replies: []wiretest.Reply{{Status: 502}, {Status: 504}, {Status: 529}, {Body: textReply}},
			minWait: (500 + 1000 + 2000) * 3 / 4 * time.Millisecond, maxWait: 3500 * time.Millisecond, requests: 4,
		},
		{
			name:    "gives up after three retries",
			replies: []wiretest.Reply{{Status: 503, Body: `{"error":{"message":"overloaded"}}`}},
			minWait: (500 + 1000 + 2000) * 3 / 4 * time.Millisecond, maxWait: 3500 * time.Millisecond, requests: 4,
			want: "openai: 503 Service Unavailable: overloaded (gave up after 4 attempts)",
			kind: fault.Execution,
		},
		{
			name:    "dropped connection is retried",
			replies: []wiretest.Reply{{Body: `{"choices":[`, Abort: true}, {Body: textReply}},
			minWait: 375 * time.Millisecond, maxWait: 500 * time.Millisecond, requests: 2,
		},
		{
			name:    "truncated stream before any text is retried",
			stream:  true,
			replies: []wiretest.Reply{{Body: "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n"}, {Body: "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"}},
			minWait: 375 * time.Millisecond, maxWait: 500 * time.Millisecond, requests: 2,
		},
		{
			name:     "400 is not retried",
			replies:  []wiretest.Reply{{Status: 400, Body: `{"error":{"message":"bad"}}`}, {Body: textReply}},
			requests: 1, want: "openai: 400 Bad Request: bad", kind: fault.Usage,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := wiretest.New(t, tc.replies...)
			synctest.Test(t, func(t *testing.T) {
				c := newClient(t, srv, tc.stream)
				start := time.Now()
				_, err := c.Chat(t.Context(), ports.ChatRequest{Messages: []state.Message{{Role: "user", Content: "hi"}}})
				waited := time.Since(start)
				if tc.want == "" && err != nil {
					t.Fatalf("Chat: %v", err)
				}
				if tc.want != "" && (err == nil || err.Error() != tc.want || fault.KindOf(err) != tc.kind) {
					t.Fatalf("Chat = %v (%v), want %q (%v)", err, fault.KindOf(err), tc.want, tc.kind)
				}
				if waited < tc.minWait || waited > tc.maxWait {
					t.Errorf("waited %v, want between %v and %v", waited, tc.minWait, tc.maxWait)
				}
			})
			if n := len(srv.Requests()); n != tc.requests {
				t.Errorf("server got %d requests, want %d", n, tc.requests)
			}
		})
	}
}

func TestRetryAfterHTTPDate(t *testing.T) {
	// A synctest bubble's clock starts at 2000-01-01 00:00:00 UTC.
	wiretest.Run(t, newClient, []wiretest.Case{{
		Name: "5s ahead",
		Replies: []wiretest.Reply{
			{Status: 429, Header: map[string]string{"Retry-After": "Sat, 01 Jan 2000 00:00:05 GMT"}},
			{Body: textReply}},
		Want: textWant, Waited: 5 * time.Second,
	}})
}

func TestNoRetryAfterText(t *testing.T) {
	srv := wiretest.New(t,
		wiretest.Reply{Body: "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n"},
		wiretest.Reply{Body: "data: {\"choices\":[{\"delta\":{\"content\":\"Hello\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"},
	)
	var deltas []string
	_, err := newClient(t, srv, true).Chat(t.Context(), ports.ChatRequest{OnDelta: func(s string) { deltas = append(deltas, s) }})
	if want := "openai: stream ended before [DONE]: response ended early"; err == nil || err.Error() != want {
		t.Fatalf("Chat = %v, want %q", err, want)
	}
	if !errors.Is(err, httpx.ErrTruncated) || fault.KindOf(err) != fault.Execution {
		t.Errorf("Chat error %v: want ErrTruncated, execution", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("server got %d requests, want 1: text already shown must not be retried", n)
	}
	if diff := cmp.Diff([]string{"Hel"}, deltas); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
}

func TestCancelStopsStream(t *testing.T) {
	srv := wiretest.New(t, wiretest.Reply{Body: "data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n", Hold: true})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, err := newClient(t, srv, true).Chat(ctx, ports.ChatRequest{OnDelta: func(string) { cancel() }})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Chat = %v, want context.Canceled", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("server got %d requests, want 1", n)
	}
}

func TestCancelStopsBackoff(t *testing.T) {
	srv := wiretest.New(t, wiretest.Reply{Status: 429, Header: map[string]string{"Retry-After": "30"}})
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		start := time.Now()
		_, err := newClient(t, srv, false).Chat(ctx, ports.ChatRequest{})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Chat = %v, want context.DeadlineExceeded", err)
		}
		if waited := time.Since(start); waited != 3*time.Second {
			t.Errorf("waited %v, want 3s", waited)
		}
	})
}
