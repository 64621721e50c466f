package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/wiretest"
)

const testKey = "sk-ant-api03-test-0123456789"

func newClient(t *testing.T, srv *wiretest.Server, stream bool) *Client {
	t.Helper()
	c, err := New(Config{BaseURL: srv.URL, Model: "claude-sonnet-4-20250514", APIKey: testKey, Stream: stream, HTTPClient: wiretest.Client()})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return c
}

const textReply = `{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-sonnet-4-20250514",
"content":[{"type":"text","text":"Hello! How can I help?"}],"stop_reason":"end_turn","stop_sequence":null,
"usage":{"input_tokens":12,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":9,"service_tier":"standard"}}`

var weatherTool = ports.ToolSchema{
	Name:        "get_weather",
	Description: "Weather for a city",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
}

func TestChatRequestBody(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
		req    ports.ChatRequest
		want   string
	}{
		{
			name: "plain text, system prompt top-level",
			req: ports.ChatRequest{System: "You are terse.", Messages: []state.Message{
				{Role: "system", Content: "Answer in French."}, {Role: "user", Content: "Hello"}}},
			want: `{"model":"claude-sonnet-4-20250514","max_tokens":4096,"system":"You are terse.\n\nAnswer in French.",
				"messages":[{"role":"user","content":[{"type":"text","text":"Hello"}]}]}`,
		},
		{
			name: "tools and options",
			req: ports.ChatRequest{
				Model:    "claude-3-5-haiku-latest",
				Messages: []state.Message{{Role: "user", Content: "Weather in Paris?"}},
				Tools:    []ports.ToolSchema{weatherTool, {Name: "now", Description: "Current time"}},
				Options: map[string]any{"max_tokens": 1024, "temperature": 0.2, "top_p": 0.9, "top_k": 40, "stop": "END",
					"seed": 7, "response_format": map[string]any{"type": "json_object"}, "model": "ignored",
					"tool_choice": map[string]any{"type": "auto"}},
			},
			want: `{"model":"claude-3-5-haiku-latest","max_tokens":1024,
				"messages":[{"role":"user","content":[{"type":"text","text":"Weather in Paris?"}]}],
				"tools":[
					{"name":"get_weather","description":"Weather for a city","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}},
					{"name":"now","description":"Current time","input_schema":{"type":"object","properties":{}}}],
				"stop_sequences":["END"],"temperature":0.2,"top_p":0.9,"top_k":40,"tool_choice":{"type":"auto"}}`,
		},
		{
			name: "tool results round trip, same roles merged",
			req: ports.ChatRequest{Messages: []state.Message{
				{Role: "user", Content: "Weather in Paris and Rome?"},
				{Role: "assistant", Content: "I'll check both.", ToolCalls: []state.CallRef{
					{ID: "toolu_01", Name: "get_weather", Arguments: `{"city":"Paris"}`},
					{ID: "toolu_02", Name: "get_weather", Arguments: ""},
				}},
				{Role: "tool", ToolCallID: "toolu_01", Name: "get_weather", Content: "18C"},
				{Role: "tool", ToolCallID: "toolu_02", Name: "get_weather", Content: "missing city", IsError: true},
				{Role: "user", Content: "Also Oslo."},
				{Role: "assistant", ToolCalls: []state.CallRef{{ID: "call_3", Name: "get_weather", Arguments: `not json`}}},
				{Role: "tool", ToolCallID: "call_3", Content: ""},
				{Role: "assistant", Content: "  "},
				{Role: "assistant", Content: "Paris 18C."},
			}},
			want: `{"model":"claude-sonnet-4-20250514","max_tokens":4096,"messages":[
				{"role":"user","content":[{"type":"text","text":"Weather in Paris and Rome?"}]},
				{"role":"assistant","content":[
					{"type":"text","text":"I'll check both."},
					{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{"city":"Paris"}},
					{"type":"tool_use","id":"toolu_02","name":"get_weather","input":{}}]},
				{"role":"user","content":[
					{"type":"tool_result","tool_use_id":"toolu_01","content":"18C"},
					{"type":"tool_result","tool_use_id":"toolu_02","content":"missing city","is_error":true},
					{"type":"text","text":"Also Oslo."}]},
				{"role":"assistant","content":[{"type":"tool_use","id":"call_3","name":"get_weather","input":{}}]},
				{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_3"}]},
				{"role":"assistant","content":[{"type":"text","text":"Paris 18C."}]}]}`,
		},
		{
			name:   "streaming",
			stream: true,
			req:    ports.ChatRequest{Messages: []state.Message{{Role: "user", Content: "Hi"}}},
			want: `{"model":"claude-sonnet-4-20250514","max_tokens":4096,"stream":true,
				"messages":[{"role":"user","content":[{"type":"text","text":"Hi"}]}]}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := textReply
			if tc.stream {
				body = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
			}
			srv := wiretest.New(t, wiretest.Reply{Body: body})
			if _, err := newClient(t, srv, tc.stream).Chat(t.Context(), tc.req); err != nil {
				t.Fatalf("Chat: %v", err)
			}
			r := srv.Requests()[0]
			wiretest.JSONEqual(t, r.Body, tc.want)
			if r.Method != "POST" || r.Path != "/v1/messages" {
				t.Errorf("request = %s %s, want POST /v1/messages", r.Method, r.Path)
			}
			for h, want := range map[string]string{"X-Api-Key": testKey, "Anthropic-Version": "2023-06-01", "Content-Type": "application/json", "Authorization": ""} {
				if got := r.Header.Get(h); got != want {
					t.Errorf("header %s = %q, want %q", h, got, want)
				}
			}
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
		{map[string]any{"max_tokens": "lots"}, "anthropic: option max_tokens: want a positive integer, got lots"},
		{map[string]any{"max_tokens": 1.5}, "anthropic: option max_tokens: want a positive integer, got 1.5"},
		{map[string]any{"stop": 3}, "anthropic: option stop: want a string or a list of strings, got 3"},
		{map[string]any{"messages": []any{}}, `anthropic: option "messages" is set by awf and cannot be overridden`},
	}
	for _, tc := range tests {
		_, err := c.Chat(t.Context(), ports.ChatRequest{Messages: []state.Message{{Role: "user", Content: "x"}}, Options: tc.opts})
		if err == nil || err.Error() != tc.want || fault.KindOf(err) != fault.Invalid {
			t.Errorf("Chat(options %v) = %v, want %q (invalid)", tc.opts, err, tc.want)
		}
	}
}

func TestChatResponse(t *testing.T) {
	tests := []struct {
		name string
		body string
		want ports.ChatResponse
	}{
		{
			name: "text",
			body: textReply,
			want: ports.ChatResponse{Content: "Hello! How can I help?", FinishReason: "stop", Model: "claude-sonnet-4-20250514", Usage: state.Tokens{Input: 12, Output: 9, Total: 21}},
		},
		{
			name: "text and one tool call",
			body: `{"id":"msg_01Aq9w938a90dw8q","type":"message","role":"assistant","model":"claude-sonnet-4-20250514",
				"content":[{"type":"text","text":"I'll check the weather."},{"type":"tool_use","id":"toolu_01A09q90qw90lq917835lq9","name":"get_weather","input":{"city": "Paris"}}],
				"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":100,"cache_read_input_tokens":28,"output_tokens":89}}`,
			want: ports.ChatResponse{Content: "I'll check the weather.", FinishReason: "tool_calls", Model: "claude-sonnet-4-20250514", Usage: state.Tokens{Input: 600, Output: 89, Total: 689},
				ToolCalls: []state.CallRef{{ID: "toolu_01A09q90qw90lq917835lq9", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		},
		{
			name: "several tool calls, thinking ignored, missing id",
			body: `{"type":"message","model":"claude-opus-4-1","content":[
				{"type":"thinking","thinking":"Two cities.","signature":"EqQBCgIYAhIM"},
				{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}},
				{"type":"tool_use","name":"now","input":{}}],
				"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}}`,
			want: ports.ChatResponse{FinishReason: "tool_calls", Model: "claude-opus-4-1", Usage: state.Tokens{Input: 10, Output: 5, Total: 15},
				ToolCalls: []state.CallRef{{ID: "toolu_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}, {ID: "call_2", Name: "now", Arguments: `{}`}}},
		},
		{
			name: "max tokens, text in several blocks",
			body: `{"type":"message","model":"m","content":[{"type":"text","text":"Once "},{"type":"text","text":"upon"}],"stop_reason":"max_tokens","usage":{"input_tokens":1,"output_tokens":2}}`,
			want: ports.ChatResponse{Content: "Once upon", FinishReason: "length", Model: "m", Usage: state.Tokens{Input: 1, Output: 2, Total: 3}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := wiretest.New(t, wiretest.Reply{Body: tc.body})
			got, err := newClient(t, srv, false).Chat(t.Context(), ports.ChatRequest{Messages: []state.Message{{Role: "user", Content: "hi"}}})
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Chat response mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// ev is one event as the API writes it: an event: line and a data: line.
func ev(data string) string {
	var head struct{ Type string }
	if err := json.Unmarshal([]byte(data), &head); err != nil {
		panic(fmt.Sprintf("bad test event %s: %v", data, err))
	}
	return "event: " + head.Type + "\ndata: " + data
}

const (
	messageStart = `{"type":"message_start","message":{"id":"msg_014p7gG3wDgGV9EUtLvnow3U","type":"message","role":"assistant","model":"claude-sonnet-4-20250514","stop_sequence":null,"usage":{"input_tokens":472,"output_tokens":2},"content":[],"stop_reason":null}}`
	ping         = `{"type": "ping"}`
	messageStop  = `{"type":"message_stop"}`
)

func textDelta(i int, s string) string {
	return fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%q}}`, i, s)
}

func jsonDelta(i int, s string) string {
	return fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"input_json_delta","partial_json":%q}}`, i, s)
}

func blockStop(i int) string { return fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i) }

func messageDelta(stop string, out int) string {
	return fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stop, out)
}

const textStart = `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`

func toolStart(i int, id, name string) string {
	return fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":{"type":"tool_use","id":%q,"name":%q,"input":{}}}`, i, id, name)
}

func sse(eol string, datas ...string) string {
	events := make([]string, len(datas))
	for i, d := range datas {
		events[i] = ev(d)
	}
	return wiretest.SSE(eol, events...)
}

func TestChatStream(t *testing.T) {
	const model = "claude-sonnet-4-20250514"
	tests := []struct {
		name   string
		body   string
		want   ports.ChatResponse
		deltas []string
	}{
		{
			name:   "text",
			body:   sse("\n", messageStart, textStart, ping, textDelta(0, "Hello"), textDelta(0, "!"), blockStop(0), messageDelta("end_turn", 15), messageStop),
			want:   ports.ChatResponse{Content: "Hello!", FinishReason: "stop", Model: model, Usage: state.Tokens{Input: 472, Output: 15, Total: 487}},
			deltas: []string{"Hello", "!"},
		},
		{
			name:   "text with CRLF",
			body:   sse("\r\n", messageStart, textStart, textDelta(0, "Hi"), blockStop(0), messageDelta("end_turn", 3), messageStop),
			want:   ports.ChatResponse{Content: "Hi", FinishReason: "stop", Model: model, Usage: state.Tokens{Input: 472, Output: 3, Total: 475}},
			deltas: []string{"Hi"},
		},
		{
			name: "data lines only, no event lines",
			body: wiretest.SSE("\n", "data: "+messageStart, "data: "+textStart, "data: "+textDelta(0, "Hi"), "data: "+messageDelta("end_turn", 3), "data: "+messageStop),
			want: ports.ChatResponse{Content: "Hi", FinishReason: "stop", Model: model, Usage: state.Tokens{Input: 472, Output: 3, Total: 475}}, deltas: []string{"Hi"},
		},
		{
			name: "text and tool calls",
			body: sse("\n", messageStart, textStart, textDelta(0, "Okay, let me check."), blockStop(0),
				toolStart(1, "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather"), jsonDelta(1, ""), jsonDelta(1, `{"city":`), jsonDelta(1, ` "Paris"}`), blockStop(1),
				toolStart(2, "toolu_02", "now"), jsonDelta(2, ""), blockStop(2),
				messageDelta("tool_use", 89), messageStop),
			want: ports.ChatResponse{Content: "Okay, let me check.", FinishReason: "tool_calls", Model: model, Usage: state.Tokens{Input: 472, Output: 89, Total: 561},
				ToolCalls: []state.CallRef{{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "get_weather", Arguments: `{"city": "Paris"}`}, {ID: "toolu_02", Name: "now", Arguments: `{}`}}},
			deltas: []string{"Okay, let me check."},
		},
		{
			name:   "proxy that ignores stream: true",
			body:   textReply,
			want:   ports.ChatResponse{Content: "Hello! How can I help?", FinishReason: "stop", Model: model, Usage: state.Tokens{Input: 12, Output: 9, Total: 21}},
			deltas: []string{"Hello! How can I help?"},
		},
		{
			name: "thinking ignored, cache usage, unknown events",
			body: sse("\n",
				`{"type":"message_start","message":{"model":"claude-opus-4-1","usage":{"input_tokens":5,"cache_read_input_tokens":100,"output_tokens":1}}}`,
				`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think."}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM"}}`,
				blockStop(0),
				`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":"Yes"}}`,
				`{"type":"some_future_event","index":1}`,
				blockStop(1), messageDelta("end_turn", 7), messageStop),
			want:   ports.ChatResponse{Content: "Yes", FinishReason: "stop", Model: "claude-opus-4-1", Usage: state.Tokens{Input: 105, Output: 7, Total: 112}},
			deltas: []string{"Yes"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := wiretest.New(t, wiretest.Reply{Body: tc.body})
			var deltas []string
			got, err := newClient(t, srv, true).Chat(t.Context(), ports.ChatRequest{Messages: []state.Message{{Role: "user", Content: "hi"}},
				OnDelta: func(s string) { deltas = append(deltas, s) }})
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Chat response mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.deltas, deltas); diff != "" {
				t.Errorf("deltas mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestChatErrors(t *testing.T) {
	tests := []struct {
		name     string
		stream   bool
		replies  []wiretest.Reply
		want     string
		kind     fault.Kind
		requests int
	}{
		{
			name:    "401 is not retried",
			replies: []wiretest.Reply{{Status: 401, Body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`}},
			want:    "anthropic: 401 Unauthorized: invalid x-api-key", kind: fault.Usage, requests: 1,
		},
		{
			name:     "529 overloaded then success",
			replies:  []wiretest.Reply{{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, {Body: textReply}},
			requests: 2,
		},
		{
			name:    "overloaded four times",
			replies: []wiretest.Reply{{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}},
			want:    "anthropic: 529 Overloaded: Overloaded (gave up after 4 attempts)", kind: fault.Execution, requests: 4,
		},
		{
			name:     "error event before any text is retried",
			stream:   true,
			replies:  []wiretest.Reply{{Body: sse("\n", messageStart, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)}, {Body: sse("\n", messageStart, messageStop)}},
			requests: 2,
		},
		{
			name:   "error event after text is final",
			stream: true,
			replies: []wiretest.Reply{{Body: sse("\n", messageStart, textStart, textDelta(0, "Hel"),
				`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)}},
			want: "anthropic: 529 Overloaded: Overloaded", kind: fault.Execution, requests: 1,
		},
		{
			name:    "stream closed before message_stop",
			stream:  true,
			replies: []wiretest.Reply{{Body: sse("\n", messageStart, textStart, textDelta(0, "Hel"), messageDelta("end_turn", 3))}},
			want:    "anthropic: stream ended before message_stop: response ended early", kind: fault.Execution, requests: 1,
		},
		{
			name:    "connection dropped mid-stream",
			stream:  true,
			replies: []wiretest.Reply{{Body: sse("\n", messageStart, textStart, textDelta(0, "Hel")), Abort: true}},
			want:    "anthropic: read stream: unexpected EOF", kind: fault.Execution, requests: 1,
		},
		{
			name:    "malformed event",
			stream:  true,
			replies: []wiretest.Reply{{Body: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\n\n"}},
			want:    `anthropic: malformed stream event: unexpected end of JSON input: "{\"type\":\"message_start\",\"message\":{"`, kind: fault.Execution, requests: 1,
		},
		{
			name:    "not a message",
			replies: []wiretest.Reply{{Body: `{"ok":true}`}},
			want:    `anthropic: response is not a message: "{\"ok\":true}"`, kind: fault.Execution, requests: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := wiretest.New(t, tc.replies...)
			synctest.Test(t, func(t *testing.T) {
				_, err := newClient(t, srv, tc.stream).Chat(t.Context(), ports.ChatRequest{Messages: []state.Message{{Role: "user", Content: "hi"}}, OnDelta: func(string) {}})
				if tc.want == "" {
					if err != nil {
						t.Fatalf("Chat: %v", err)
					}
					return
				}
				if err == nil || err.Error() != tc.want {
					t.Fatalf("Chat error = %v, want %q", err, tc.want)
				}
				if got := fault.KindOf(err); got != tc.kind {
					t.Errorf("KindOf(%v) = %v, want %v", err, got, tc.kind)
				}
			})
			if n := len(srv.Requests()); n != tc.requests {
				t.Errorf("server got %d requests, want %d", n, tc.requests)
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	srv := wiretest.New(t,
		wiretest.Reply{Status: 429, Header: map[string]string{"Retry-After": "7"}, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`},
		wiretest.Reply{Body: textReply})
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		got, err := newClient(t, srv, false).Chat(t.Context(), ports.ChatRequest{Messages: []state.Message{{Role: "user", Content: "hi"}}})
		if err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited != 7*time.Second {
			t.Errorf("waited %v, want 7s", waited)
		}
		if got.Content != "Hello! How can I help?" {
			t.Errorf("Content = %q", got.Content)
		}
	})
}

func TestNewKey(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string
	}{
		{Config{}, "anthropic: no API key: set ANTHROPIC_API_KEY"},
		{Config{APIKeyEnv: "CLAUDE_KEY", APIKey: "  "}, "anthropic: no API key: set CLAUDE_KEY"},
	}
	for _, tc := range tests {
		_, err := New(tc.cfg)
		if err == nil || err.Error() != tc.want || fault.KindOf(err) != fault.Usage {
			t.Errorf("New(%+v) = %v, want %q (usage)", tc.cfg, err, tc.want)
		}
	}
}

func streamBody(n int) []byte {
	var b bytes.Buffer
	write := func(d string) { b.WriteString(ev(d) + "\n\n") }
	write(messageStart)
	write(textStart)
	for i := range n/2 - 4 {
		write(textDelta(0, fmt.Sprintf("word%d ", i)))
	}
	write(blockStop(0))
	write(toolStart(1, "toolu_1", "write_file"))
	write(jsonDelta(1, `{"path":"a.txt","content":"`))
	for range n/2 - 5 {
		write(jsonDelta(1, strings.Repeat("x", 8)))
	}
	write(jsonDelta(1, `"}`))
	write(blockStop(1))
	write(messageDelta("tool_use", 200))
	write(messageStop)
	return b.Bytes()
}

func BenchmarkDecodeStream200(b *testing.B) {
	body := streamBody(200)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		out, err := decodeStream(bytes.NewReader(body), 1, func(string) {})
		if err != nil || len(out.ToolCalls) != 1 || !json.Valid([]byte(out.ToolCalls[0].Arguments)) {
			b.Fatalf("decodeStream = %+v, %v", out, err)
		}
	}
}
