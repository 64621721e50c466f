package openai

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/wiretest"
)

// chunk is one chat.completion.chunk as OpenAI sends it, around a choice's fields.
func chunk(choice string) string {
	return `data: {"id":"chatcmpl-BBfJ5","object":"chat.completion.chunk","created":1742315183,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_b8bc95a0ac","choices":[{"index":0,` + choice + `,"logprobs":null}],"usage":null}`
}

func content(s string) string {
	return chunk(fmt.Sprintf(`"delta":{"content":%q},"finish_reason":null`, s))
}

const (
	roleChunk  = `data: {"id":"chatcmpl-BBfJ5","object":"chat.completion.chunk","created":1742315183,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_b8bc95a0ac","choices":[{"index":0,"delta":{"role":"assistant","content":"","refusal":null},"logprobs":null,"finish_reason":null}],"usage":null}`
	usageChunk = `data: {"id":"chatcmpl-BBfJ5","object":"chat.completion.chunk","created":1742315183,"model":"gpt-4o-mini-2024-07-18","service_tier":"default","system_fingerprint":"fp_b8bc95a0ac","choices":[],"usage":{"prompt_tokens":82,"completion_tokens":18,"total_tokens":100,"prompt_tokens_details":{"cached_tokens":0,"audio_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}`
	done       = "data: [DONE]"
)

func finish(reason string) string { return chunk(`"delta":{},"finish_reason":"` + reason + `"`) }

func TestChatStream(t *testing.T) {
	usage := state.Tokens{Input: 82, Output: 18, Total: 100}
	const model = "gpt-4o-mini-2024-07-18"
	tests := []wiretest.Case{
		{
			Name:   "text",
			Stream: true,
			Body:   wiretest.SSE("\n", roleChunk, content("Hello"), content(" there"), content("!"), finish("stop"), usageChunk, done),
			Want:   ports.ChatResponse{Content: "Hello there!", FinishReason: "stop", Model: model, Usage: usage},
			Deltas: []string{"Hello", " there", "!"},
		},
		{
			Name:   "text with CRLF, event lines, comments and ids",
			Stream: true,
			Body: wiretest.SSE("\r\n", ": keep-alive", "event: message\nid: 1\n"+content("Hel"), "event: message\nid: 2\nretry: 100\n"+content("lo"),
				"event: message\n"+finish("stop"), usageChunk, "event: done\n"+done),
			Want:   ports.ChatResponse{Content: "Hello", FinishReason: "stop", Model: model, Usage: usage},
			Deltas: []string{"Hel", "lo"},
		},
		{
			Name:   "data split over lines in one event",
			Stream: true,
			Body:   "data: {\"choices\":[{\"index\":0,\ndata: \"delta\":{\"content\":\"Hi\"}}]}\n\ndata: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n",
			Want:   ports.ChatResponse{Content: "Hi", FinishReason: "stop", Model: "gpt-4o-mini"}, Deltas: []string{"Hi"},
		},
		{
			Name:   "tool calls by index, interleaved",
			Stream: true,
			Body: wiretest.SSE("\n",
				chunk(`"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_Pm7","type":"function","function":{"name":"get_weather","arguments":""}}],"refusal":null},"finish_reason":null`),
				chunk(`"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\""}}]},"finish_reason":null`),
				chunk(`"delta":{"tool_calls":[{"index":1,"id":"call_Qx2","type":"function","function":{"name":"get_weather","arguments":"{\"ci"}}]},"finish_reason":null`),
				chunk(`"delta":{"tool_calls":[{"index":0,"function":{"arguments":"city\":\"Paris\"}"}}]},"finish_reason":null`),
				chunk(`"delta":{"tool_calls":[{"index":1,"function":{"arguments":"ty\":\"Rome\"}"}}]},"finish_reason":null`),
				finish("tool_calls"), usageChunk, done),
			Want: ports.ChatResponse{FinishReason: "tool_calls", Model: model, Usage: usage, ToolCalls: []state.CallRef{
				{ID: "call_Pm7", Name: "get_weather", Arguments: `{"city":"Paris"}`},
				{ID: "call_Qx2", Name: "get_weather", Arguments: `{"city":"Rome"}`},
			}},
		},
		{
			// Ollama's /v1 before 0.5: whole call in one delta, then finish "stop".
			Name:   "whole call in one delta, finish stop",
			Stream: true,
			Body: wiretest.SSE("\n",
				`data: {"id":"chatcmpl-620","object":"chat.completion.chunk","created":1,"model":"llama3.2","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":"","tool_calls":[{"id":"call_ytmb9xve","index":0,"type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":null}]}`,
				`data: {"id":"chatcmpl-620","object":"chat.completion.chunk","created":1,"model":"llama3.2","system_fingerprint":"fp_ollama","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]}`,
				done),
			Want: ports.ChatResponse{FinishReason: "tool_calls", Model: "llama3.2", ToolCalls: []state.CallRef{{ID: "call_ytmb9xve", Name: "get_weather", Arguments: `{"city":"Paris"}`}}},
		},
		{
			Name:   "missing index: ids then position",
			Stream: true,
			Body: wiretest.SSE("\n",
				`data: {"choices":[{"delta":{"tool_calls":[{"id":"c1","type":"function","function":{"name":"get_weather","arguments":""}}]}}]}`,
				`data: {"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\"city\":"}}]}}]}`,
				`data: {"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"\"Oslo\"}"}}]}}]}`,
				`data: {"choices":[{"delta":{"tool_calls":[{"id":"c2","function":{"name":"now","arguments":"{}"}}]}}]}`,
				`data: {"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`, done),
			Want: ports.ChatResponse{FinishReason: "tool_calls", Model: "gpt-4o-mini", ToolCalls: []state.CallRef{
				{ID: "c1", Name: "get_weather", Arguments: `{"city":"Oslo"}`}, {ID: "c2", Name: "now", Arguments: `{}`},
			}},
		},
		{
			Name:   "missing index and id: generated ids, a new name starts a call",
			Stream: true,
			Body: wiretest.SSE("\n",
				`data: {"choices":[{"delta":{"tool_calls":[{"function":{"name":"get_weather","arguments":"{\"city\""}}]}}]}`,
				`data: {"choices":[{"delta":{"tool_calls":[{"function":{"arguments":":\"Oslo\"}"}}]}}]}`,
				`data: {"choices":[{"delta":{"tool_calls":[{"function":{"name":"get_weather","arguments":""}}]}}]}`,
				`data: {"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{\"city\":\"Rome\"}"}}]}}]}`,
				`data: {"choices":[{"delta":{"tool_calls":[{"function":{"name":"now"}}]}}]}`,
				`data: {"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`, done),
			Want: ports.ChatResponse{FinishReason: "tool_calls", Model: "gpt-4o-mini", ToolCalls: []state.CallRef{
				{ID: "call_1", Name: "get_weather", Arguments: `{"city":"Oslo"}`},
				{ID: "call_2", Name: "get_weather", Arguments: `{"city":"Rome"}`},
				{ID: "call_3", Name: "now", Arguments: `{}`},
			}},
		},
		{
			Name:   "several calls in one chunk without index or id",
			Stream: true,
			Body: wiretest.SSE("\n",
				`data: {"choices":[{"delta":{"tool_calls":[{"function":{"name":"a","arguments":"{\"x\":"}},{"function":{"name":"b","arguments":"{\"y\":"}}]}}]}`,
				`data: {"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"1}"}},{"function":{"arguments":"2}"}}]}}]}`,
				`data: {"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`, done),
			Want: ports.ChatResponse{FinishReason: "tool_calls", Model: "gpt-4o-mini", ToolCalls: []state.CallRef{
				{ID: "call_1", Name: "a", Arguments: `{"x":1}`}, {ID: "call_2", Name: "b", Arguments: `{"y":2}`},
			}},
		},
		{
			Name:   "same index reused for calls with other ids",
			Stream: true,
			Body: wiretest.SSE("\n",
				`data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"now","arguments":"{}"}}]}}]}`,
				`data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"now","arguments":"{}"}}]}}]}`,
				`data: {"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`, done),
			Want: ports.ChatResponse{FinishReason: "tool_calls", Model: "gpt-4o-mini", ToolCalls: []state.CallRef{
				{ID: "a", Name: "now", Arguments: `{}`}, {ID: "b", Name: "now", Arguments: `{}`},
			}},
		},
		{
			Name:   "arguments as objects",
			Stream: true,
			Body: wiretest.SSE("\n",
				`data: {"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"get_weather","arguments":{"city":"Paris"}}}]}}]}`,
				`data: {"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"now","arguments":{}}}]}}]}`,
				`data: {"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`, done),
			Want: ports.ChatResponse{FinishReason: "tool_calls", Model: "gpt-4o-mini", ToolCalls: []state.CallRef{
				{ID: "a", Name: "get_weather", Arguments: `{"city":"Paris"}`}, {ID: "b", Name: "now", Arguments: `{}`},
			}},
		},
		{
			Name:   "whole text and arguments so far in every delta",
			Stream: true,
			Body: wiretest.SSE("\n",
				`data: {"choices":[{"delta":{"content":"Hel"}}]}`,
				`data: {"choices":[{"delta":{"content":"Hello"}}]}`,
				`data: {"choices":[{"delta":{"content":"Hello wor"}}]}`,
				`data: {"choices":[{"delta":{"content":"Hello world","tool_calls":[{"index":0,"id":"a","function":{"name":"get_weather","arguments":"{\"ci"}}]}}]}`,
				`data: {"choices":[{"delta":{"content":"Hello world","tool_calls":[{"index":0,"id":"a","function":{"name":"get_weather","arguments":"{\"city\":\"Pa"}}]}}]}`,
				`data: {"choices":[{"delta":{"content":"Hello world","tool_calls":[{"index":0,"id":"a","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},"finish_reason":"tool_calls"}]}`,
				done),
			Want: ports.ChatResponse{Content: "Hello world", FinishReason: "tool_calls", Model: "gpt-4o-mini", ToolCalls: []state.CallRef{
				{ID: "a", Name: "get_weather", Arguments: `{"city":"Paris"}`},
			}},
			Deltas: []string{"Hel", "lo", " wor", "ld"},
		},
		{
			Name:   "whole message so far in every chunk",
			Stream: true,
			Body: wiretest.SSE("\n",
				`data: {"model":"local","choices":[{"message":{"role":"assistant","content":"Sure"}}]}`,
				`data: {"model":"local","choices":[{"message":{"role":"assistant","content":"Sure, one"}}]}`,
				`data: {"model":"local","choices":[{"message":{"role":"assistant","content":"Sure, one call.","tool_calls":[{"id":"x","function":{"name":"now","arguments":"{}"}}]},"finish_reason":"tool_calls"}]}`,
				done),
			Want:   ports.ChatResponse{Content: "Sure, one call.", FinishReason: "tool_calls", Model: "local", ToolCalls: []state.CallRef{{ID: "x", Name: "now", Arguments: `{}`}}},
			Deltas: []string{"Sure", ", one", " call."},
		},
		{
			Name:   "deltas, then the whole message repeated",
			Stream: true,
			Body: wiretest.SSE("\n",
				`data: {"choices":[{"delta":{"content":"Hel"}}]}`,
				`data: {"choices":[{"delta":{"content":"lo"}}]}`,
				`data: {"choices":[{"delta":{"content":" world","tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"a\":"}}]}}]}`,
				`data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}}]}`,
				`data: {"choices":[{"delta":{"content":"Hello world","tool_calls":[{"index":0,"function":{"arguments":"{\"a\":1}"}}]},"finish_reason":"tool_calls"}]}`,
				done),
			Want: ports.ChatResponse{Content: "Hello world", FinishReason: "tool_calls", Model: "gpt-4o-mini", ToolCalls: []state.CallRef{
				{ID: "a", Name: "f", Arguments: `{"a":1}`},
			}},
			Deltas: []string{"Hel", "lo", " world"},
		},
		{
			Name:   "no [DONE] after a finish reason, usage missing",
			Stream: true,
			Body:   wiretest.SSE("\n", content("Done"), finish("stop")),
			Want:   ports.ChatResponse{Content: "Done", FinishReason: "stop", Model: model}, Deltas: []string{"Done"},
		},
		{
			Name:   "server that ignores stream: true",
			Stream: true,
			Body:   "\n " + textReply,
			Want:   textWant,
			Deltas: []string{"Hello! How can I help?"},
		},
		{
			Name:   "usage in the finishing chunk, no blank lines between events",
			Stream: true,
			Body: "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\ndata: {\"choices\":[{\"delta\":{\"content\":\"b\"}}]}\n" +
				"data: {\"model\":\"qwen\",\"choices\":[{\"delta\":{},\"finish_reason\":\"length\"}],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2,\"total_tokens\":3}}\ndata: [DONE]\n",
			Want:   ports.ChatResponse{Content: "ab", FinishReason: "length", Model: "qwen", Usage: state.Tokens{Input: 1, Output: 2, Total: 3}},
			Deltas: []string{"a", "b"},
		},
		{
			Name:   "refusal in pieces",
			Stream: true,
			Body: wiretest.SSE("\n",
				chunk(`"delta":{"role":"assistant","content":null,"refusal":""},"finish_reason":null`),
				chunk(`"delta":{"refusal":"I'm sorry, "},"finish_reason":null`),
				chunk(`"delta":{"refusal":"I can't help with that."},"finish_reason":null`),
				finish("stop"), usageChunk, done),
			Want: ports.ChatResponse{FinishReason: "refusal", Refusal: "I'm sorry, I can't help with that.", Model: model, Usage: usage},
		},
		{
			Name:   "cut off at the token limit",
			Stream: true,
			Body:   wiretest.SSE("\n", roleChunk, content("Once upon a"), finish("length"), usageChunk, done),
			Want:   ports.ChatResponse{Content: "Once upon a", FinishReason: "length", Model: model, Usage: usage},
			Deltas: []string{"Once upon a"},
		},
	}
	wiretest.Run(t, newClient, tests)
}

func TestChatStreamTruncated(t *testing.T) {
	tests := []struct {
		name  string
		reply wiretest.Reply
		want  string
	}{
		{"closed before [DONE]", wiretest.Reply{Body: wiretest.SSE("\n", roleChunk, content("Hel"))},
			"openai: stream ended before [DONE]: response ended early (gave up after 4 attempts)"},
		{"cut inside a line", wiretest.Reply{Body: roleChunk + "\n\n" + content("Hel")[:30]},
			"openai: stream ended before [DONE]: event cut off: response ended early (gave up after 4 attempts)"},
		{"connection dropped", wiretest.Reply{Body: wiretest.SSE("\n", roleChunk), Abort: true},
			"openai: read stream: unexpected EOF (gave up after 4 attempts)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := wiretest.New(t, tc.reply)
			synctest.Test(t, func(t *testing.T) {
				_, err := newClient(t, srv, true).Chat(t.Context(), ports.ChatRequest{})
				if err == nil || err.Error() != tc.want {
					t.Errorf("Chat = %v, want %q", err, tc.want)
				}
			})
		})
	}
}

// streamBody is a stream of n events (n even, at least 12): text, then one tool call whose arguments come in pieces.
func streamBody(n int) []byte {
	var b bytes.Buffer
	b.WriteString(roleChunk + "\n\n")
	for i := range n / 2 {
		b.WriteString(content(fmt.Sprintf("word%d ", i)) + "\n\n")
	}
	b.WriteString(chunk(`"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"write_file","arguments":""}}]},"finish_reason":null`) + "\n\n")
	for i := range n/2 - 3 {
		b.WriteString(chunk(fmt.Sprintf(`"delta":{"tool_calls":[{"index":0,"function":{"arguments":%q}}]},"finish_reason":null`, piece(i, n/2-3))) + "\n\n")
	}
	b.WriteString(finish("tool_calls") + "\n\n" + usageChunk + "\n\ndata: [DONE]\n\n")
	return b.Bytes()
}

func piece(i, n int) string {
	switch i {
	case 0:
		return `{"path":"a.txt","content":"`
	case n - 1:
		return `"}`
	}
	return strings.Repeat("x", 8)
}

func BenchmarkDecodeStream200(b *testing.B) {
	wiretest.Bench(b, streamBody(200), decodeStream)
}
