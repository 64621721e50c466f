package anthropic

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

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

// textWant is textReply decoded.
var textWant = ports.ChatResponse{Content: "Hello! How can I help?", FinishReason: "stop", Model: "claude-sonnet-4-20250514", Usage: state.Tokens{Input: 12, Output: 9, Total: 21}}

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
				Tools:    []ports.ToolSchema{wiretest.WeatherTool, {Name: "now", Description: "Current time"}},
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
			reply := textReply
			if tc.stream {
				reply = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
			}
			r := wiretest.Sent(t, newClient, tc.stream, reply, tc.req)
			r.Check(t, "/v1/messages", map[string]string{"X-Api-Key": testKey, "Anthropic-Version": "2023-06-01", "Content-Type": "application/json", "Authorization": ""}, tc.want)
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
	tests := []wiretest.Case{
		{
			Name: "text",
			Body: textReply,
			Want: textWant,
		},
		{
			Name: "text and one tool call",
			Body: `{"id":"msg_01Aq9w938a90dw8q","type":"message","role":"assistant","model":"claude-sonnet-4-20250514",
				"content":[{"type":"text","text":"I'll check the weather."},{"type":"tool_use","id":"toolu_01A09q90qw90lq917835lq9","name":"get_weather","input":{"city": "Paris"}}],
				"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":472,"cache_creation_input_tokens":100,"cache_read_input_tokens":28,"output_tokens":89}}`,
			Want: ports.ChatResponse{Content: "I'll check the weather.", FinishReason: "tool_calls", Model: "claude-sonnet-4-20250514", Usage: state.Tokens{Input: 600, Output: 89, Total: 689},
				ToolCalls: []state.CallRef{{ID: "toolu_01A09q90qw90lq917835lq9", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		},
		{
			Name: "several tool calls, thinking kept, missing id",
			Body: `{"type":"message","model":"claude-opus-4-1","content":[
				{"type":"thinking","thinking":"Two cities.","signature":"EqQBCgIYAhIM"},
				{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}},
				{"type":"tool_use","name":"now","input":{}}],
				"stop_reason":"tool_use","usage":{"input_tokens":10,"output_tokens":5}}`,
			Want: ports.ChatResponse{FinishReason: "tool_calls", Model: "claude-opus-4-1", Usage: state.Tokens{Input: 10, Output: 5, Total: 15},
				Thinking:  []state.Thinking{{Text: "Two cities.", Signature: "EqQBCgIYAhIM"}},
				ToolCalls: []state.CallRef{{ID: "toolu_1", Name: "get_weather", Arguments: `{"city":"Paris"}`}, {ID: "call_2", Name: "now", Arguments: `{}`}}},
		},
		{
			Name: "max tokens, text in several blocks",
			Body: `{"type":"message","model":"m","content":[{"type":"text","text":"Once "},{"type":"text","text":"upon"}],"stop_reason":"max_tokens","usage":{"input_tokens":1,"output_tokens":2}}`,
			Want: ports.ChatResponse{Content: "Once upon", FinishReason: "length", Model: "m", Usage: state.Tokens{Input: 1, Output: 2, Total: 3}},
		},
		{
			Name: "refusal",
			Body: `{"id":"msg_r","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"I can't help with that."}],
				"stop_reason":"refusal","stop_sequence":null,"usage":{"input_tokens":20,"output_tokens":8}}`,
			Want: ports.ChatResponse{Content: "I can't help with that.", FinishReason: "refusal", Model: "claude-sonnet-4-5", Usage: state.Tokens{Input: 20, Output: 8, Total: 28}},
		},
		{
			Name: "max tokens inside a tool call's input",
			Body: `{"type":"message","model":"m","content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}],"stop_reason":"max_tokens","usage":{"input_tokens":1,"output_tokens":2}}`,
			Want: ports.ChatResponse{FinishReason: "length", Model: "m", Usage: state.Tokens{Input: 1, Output: 2, Total: 3},
				ToolCalls: []state.CallRef{{ID: "toolu_1", Name: "get_weather", Arguments: `{}`}}},
		},
		{
			Name: "redacted thinking",
			Body: `{"type":"message","model":"claude-3-7-sonnet-20250219","content":[
				{"type":"thinking","thinking":"Hmm.","signature":"sig1"},
				{"type":"redacted_thinking","data":"EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pkY"},
				{"type":"text","text":"Done."}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":2}}`,
			Want: ports.ChatResponse{Content: "Done.", FinishReason: "stop", Model: "claude-3-7-sonnet-20250219", Usage: state.Tokens{Input: 1, Output: 2, Total: 3},
				Thinking: []state.Thinking{{Text: "Hmm.", Signature: "sig1"}, {Redacted: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGmKDxH4mPnZ5sQ7vB5URj2pkY"}}},
		},
	}
	wiretest.Run(t, newClient, tests)
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
	tests := []wiretest.Case{
		{
			Name:   "text",
			Stream: true,
			Body:   sse("\n", messageStart, textStart, ping, textDelta(0, "Hello"), textDelta(0, "!"), blockStop(0), messageDelta("end_turn", 15), messageStop),
			Want:   ports.ChatResponse{Content: "Hello!", FinishReason: "stop", Model: model, Usage: state.Tokens{Input: 472, Output: 15, Total: 487}},
			Deltas: []string{"Hello", "!"},
		},
		{
			Name:   "text with CRLF",
			Stream: true,
			Body:   sse("\r\n", messageStart, textStart, textDelta(0, "Hi"), blockStop(0), messageDelta("end_turn", 3), messageStop),
			Want:   ports.ChatResponse{Content: "Hi", FinishReason: "stop", Model: model, Usage: state.Tokens{Input: 472, Output: 3, Total: 475}},
			Deltas: []string{"Hi"},
		},
		{
			Name:   "data lines only, no event lines",
			Stream: true,
			Body:   wiretest.SSE("\n", "data: "+messageStart, "data: "+textStart, "data: "+textDelta(0, "Hi"), "data: "+messageDelta("end_turn", 3), "data: "+messageStop),
			Want:   ports.ChatResponse{Content: "Hi", FinishReason: "stop", Model: model, Usage: state.Tokens{Input: 472, Output: 3, Total: 475}}, Deltas: []string{"Hi"},
		},
		{
			Name:   "text and tool calls",
			Stream: true,
			Body: sse("\n", messageStart, textStart, textDelta(0, "Okay, let me check."), blockStop(0),
				toolStart(1, "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather"), jsonDelta(1, ""), jsonDelta(1, `{"city":`), jsonDelta(1, ` "Paris"}`), blockStop(1),
				toolStart(2, "toolu_02", "now"), jsonDelta(2, ""), blockStop(2),
				messageDelta("tool_use", 89), messageStop),
			Want: ports.ChatResponse{Content: "Okay, let me check.", FinishReason: "tool_calls", Model: model, Usage: state.Tokens{Input: 472, Output: 89, Total: 561},
				ToolCalls: []state.CallRef{{ID: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", Name: "get_weather", Arguments: `{"city": "Paris"}`}, {ID: "toolu_02", Name: "now", Arguments: `{}`}}},
			Deltas: []string{"Okay, let me check."},
		},
		{
			Name:   "proxy that ignores stream: true",
			Stream: true,
			Body:   textReply,
			Want:   textWant,
			Deltas: []string{"Hello! How can I help?"},
		},
		{
			Name:   "thinking kept, cache usage, unknown events",
			Stream: true,
			Body: sse("\n",
				`{"type":"message_start","message":{"model":"claude-opus-4-1","usage":{"input_tokens":5,"cache_read_input_tokens":100,"output_tokens":1}}}`,
				`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Let me think."}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM"}}`,
				blockStop(0),
				`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":"Yes"}}`,
				`{"type":"some_future_event","index":1}`,
				blockStop(1), messageDelta("end_turn", 7), messageStop),
			Want: ports.ChatResponse{Content: "Yes", FinishReason: "stop", Model: "claude-opus-4-1", Usage: state.Tokens{Input: 105, Output: 7, Total: 112},
				Thinking: []state.Thinking{{Text: "Let me think.", Signature: "EqQBCgIYAhIM"}}},
			Deltas: []string{"Yes"},
		},
		{
			Name:   "refusal",
			Stream: true,
			Body:   sse("\n", messageStart, textStart, textDelta(0, "I can't"), blockStop(0), messageDelta("refusal", 4), messageStop),
			Want:   ports.ChatResponse{Content: "I can't", FinishReason: "refusal", Model: model, Usage: state.Tokens{Input: 472, Output: 4, Total: 476}},
			Deltas: []string{"I can't"},
		},
		{
			Name:   "max tokens",
			Stream: true,
			Body:   sse("\n", messageStart, textStart, textDelta(0, "Once upon"), blockStop(0), messageDelta("max_tokens", 4), messageStop),
			Want:   ports.ChatResponse{Content: "Once upon", FinishReason: "length", Model: model, Usage: state.Tokens{Input: 472, Output: 4, Total: 476}},
			Deltas: []string{"Once upon"},
		},
		{
			Name:   "redacted thinking, then a tool call",
			Stream: true,
			Body: sse("\n", messageStart,
				`{"type":"content_block_start","index":0,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy3"}}`, blockStop(0),
				toolStart(1, "toolu_9", "now"), jsonDelta(1, "{}"), blockStop(1), messageDelta("tool_use", 9), messageStop),
			Want: ports.ChatResponse{FinishReason: "tool_calls", Model: model, Usage: state.Tokens{Input: 472, Output: 9, Total: 481},
				Thinking: []state.Thinking{{Redacted: "EmwKAhgBEgy3"}}, ToolCalls: []state.CallRef{{ID: "toolu_9", Name: "now", Arguments: `{}`}}},
		},
	}
	wiretest.Run(t, newClient, tests)
}

func TestChatErrors(t *testing.T) {
	tests := []wiretest.Case{
		{
			Name:    "401 is not retried",
			Replies: []wiretest.Reply{{Status: 401, Body: `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011CSHoEeqs5C35K2UUqR7Fy"}`}},
			Err:     "anthropic: 401 Unauthorized: invalid x-api-key", Kind: fault.Usage, Requests: 1,
		},
		{
			Name:    "529 overloaded then success",
			Replies: []wiretest.Reply{{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}, {Body: textReply}},
			Want:    textWant, Requests: 2,
		},
		{
			Name:    "overloaded four times",
			Replies: []wiretest.Reply{{Status: 529, Body: `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`}},
			Err:     "anthropic: 529 Overloaded: Overloaded (gave up after 4 attempts)", Kind: fault.Execution, Requests: 4,
		},
		{
			Name:     "error event before any text is retried",
			Stream:   true,
			Replies:  []wiretest.Reply{{Body: sse("\n", messageStart, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)}, {Body: sse("\n", messageStart, messageStop)}},
			Want:     ports.ChatResponse{FinishReason: "stop", Model: "claude-sonnet-4-20250514", Usage: state.Tokens{Input: 472, Output: 2, Total: 474}},
			Requests: 2,
		},
		{
			Name:   "error event after text is final",
			Stream: true,
			Replies: []wiretest.Reply{{Body: sse("\n", messageStart, textStart, textDelta(0, "Hel"),
				`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)}},
			Err: "anthropic: 529 Overloaded: Overloaded", Kind: fault.Execution, Requests: 1, Deltas: []string{"Hel"},
		},
		{
			Name:    "stream closed before message_stop",
			Stream:  true,
			Replies: []wiretest.Reply{{Body: sse("\n", messageStart, textStart, textDelta(0, "Hel"), messageDelta("end_turn", 3))}},
			Err:     "anthropic: stream ended before message_stop: response ended early", Kind: fault.Execution, Requests: 1,
			Deltas: []string{"Hel"},
		},
		{
			Name:    "connection dropped mid-stream",
			Stream:  true,
			Replies: []wiretest.Reply{{Body: sse("\n", messageStart, textStart, textDelta(0, "Hel")), Abort: true}},
			Err:     "anthropic: read stream: unexpected EOF", Kind: fault.Execution, Requests: 1,
			Deltas: []string{"Hel"},
		},
		{
			Name:    "malformed event",
			Stream:  true,
			Replies: []wiretest.Reply{{Body: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\n\n"}},
			Err:     `anthropic: malformed stream event: unexpected end of JSON input: "{\"type\":\"message_start\",\"message\":{"`, Kind: fault.Execution, Requests: 1,
		},
		{
			Name:    "not a message",
			Replies: []wiretest.Reply{{Body: `{"ok":true}`}},
			Err:     `anthropic: response is not a message: "{\"ok\":true}"`, Kind: fault.Execution, Requests: 1,
		},
	}
	wiretest.Run(t, newClient, tests)
}

func TestRetryAfter(t *testing.T) {
	wiretest.Run(t, newClient, []wiretest.Case{{
		Name: "429 with Retry-After",
		Replies: []wiretest.Reply{
			{Status: 429, Header: map[string]string{"Retry-After": "7"}, Body: `{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}`},
			{Body: textReply}},
		Want: textWant, Waited: 7 * time.Second,
	}})
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
	wiretest.Bench(b, streamBody(200), decodeStream)
}
