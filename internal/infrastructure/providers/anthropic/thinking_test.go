package anthropic

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/wiretest"
)

// thinkingServer plays a model with extended thinking that calls a tool, and enforces the rule
// Anthropic documents for such conversations: the last assistant turn with tool_use must come
// back starting with the thinking blocks of that turn, unmodified (signatures are checked), or
// the request is refused with 400. Its first reply carries a thinking block, a
// redacted_thinking block and a tool call; any later one is the final answer.
type thinkingServer struct {
	stream bool

	mu       sync.Mutex
	requests int
}

// issued are the reasoning blocks of the first reply, as the API sends them.
var issued = []map[string]any{
	{"type": "thinking", "thinking": "The user wants the weather in Paris: call the tool.", "signature": "EuYBCkQYAiJAhk1+sig"},
	{"type": "redacted_thinking", "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpPkNRj2YfWXGm"},
}

const thinkingModel = "claude-sonnet-4-20250514"

func (s *thinkingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Thinking map[string]any `json:"thinking"`
		Messages []struct {
			Role    string           `json:"role"`
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		reject(w, "invalid JSON: "+err.Error())
		return
	}
	if req.Thinking == nil {
		reject(w, "this test server expects thinking to be enabled")
		return
	}
	last := -1
	for i, m := range req.Messages {
		for _, b := range m.Content {
			if m.Role == "assistant" && b["type"] == "tool_use" {
				last = i
			}
		}
	}
	if last >= 0 {
		content := req.Messages[last].Content
		for j, want := range issued {
			if j >= len(content) || content[j]["type"] != want["type"] {
				found := "nothing"
				if j < len(content) {
					found = fmt.Sprint(content[j]["type"])
				}
				reject(w, fmt.Sprintf("messages.%d.content.%d.type: Expected `thinking` or `redacted_thinking`, but found `%s`. "+
					"When `thinking` is enabled, a final `assistant` message must start with a thinking block", last, j, found))
				return
			}
			if !reflect.DeepEqual(content[j], want) {
				reject(w, fmt.Sprintf("messages.%d.content.%d: Invalid `signature` in `%s` block", last, j, want["type"]))
				return
			}
		}
	}
	s.mu.Lock()
	s.requests++
	n := s.requests
	s.mu.Unlock()
	if n == 1 {
		s.reply(w, "tool_use", append(issued[:len(issued):len(issued)],
			map[string]any{"type": "tool_use", "id": "toolu_01", "name": "get_weather", "input": map[string]any{"city": "Paris"}}))
		return
	}
	s.reply(w, "end_turn", []map[string]any{{"type": "text", "text": "18C in Paris."}})
}

// reply answers with a message of those blocks, whole or as a stream.
func (s *thinkingServer) reply(w http.ResponseWriter, stop string, blocks []map[string]any) {
	if !s.stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"type": "message", "role": "assistant", "model": thinkingModel,
			"content": blocks, "stop_reason": stop, "usage": map[string]int{"input_tokens": 10, "output_tokens": 20}})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	var events []string
	events = append(events, messageStart)
	for i, b := range blocks {
		start, deltas := map[string]any{}, []map[string]any{}
		for k, v := range b {
			start[k] = v
		}
		switch b["type"] {
		case "thinking": // streamed as the API does: empty start, then thinking and signature deltas
			start["thinking"], start["signature"] = "", ""
			deltas = append(deltas, map[string]any{"type": "thinking_delta", "thinking": b["thinking"]},
				map[string]any{"type": "signature_delta", "signature": b["signature"]})
		case "text":
			start["text"] = ""
			deltas = append(deltas, map[string]any{"type": "text_delta", "text": b["text"]})
		case "tool_use":
			input, _ := json.Marshal(b["input"])
			start["input"] = map[string]any{}
			deltas = append(deltas, map[string]any{"type": "input_json_delta", "partial_json": string(input)})
		}
		events = append(events, mustJSON(map[string]any{"type": "content_block_start", "index": i, "content_block": start}))
		for _, d := range deltas {
			events = append(events, mustJSON(map[string]any{"type": "content_block_delta", "index": i, "delta": d}))
		}
		events = append(events, blockStop(i))
	}
	events = append(events, messageDelta(stop, 20), messageStop)
	_, _ = io.WriteString(w, sse("\n", events...))
}

func reject(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg}})
}

func mustJSON(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(data)
}

// TestThinkingRoundTrip: with extended thinking, the reply's thinking and redacted_thinking
// blocks are kept and sent back exactly with the next request, which a server enforcing the
// API's rule accepts; the same conversation without them, or with a thinking text changed, is
// refused as the real API refuses it.
func TestThinkingRoundTrip(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			ts := httptest.NewServer(&thinkingServer{stream: stream})
			defer ts.Close()
			c, err := New(Config{BaseURL: ts.URL, Model: thinkingModel, APIKey: testKey, Stream: stream, HTTPClient: wiretest.Client()})
			if err != nil {
				t.Fatal(err)
			}
			opts := map[string]any{"max_tokens": 16000, "thinking": map[string]any{"type": "enabled", "budget_tokens": 10000}}
			conv := []state.Message{{Role: "user", Content: "Weather in Paris?"}}
			first, err := c.Chat(t.Context(), ports.ChatRequest{Messages: conv, Options: opts, Tools: []ports.ToolSchema{wiretest.WeatherTool}})
			if err != nil {
				t.Fatalf("first turn: %v", err)
			}
			want := []state.Thinking{{Text: issued[0]["thinking"].(string), Signature: issued[0]["signature"].(string)}, {Redacted: issued[1]["data"].(string)}}
			if !reflect.DeepEqual(first.Thinking, want) || len(first.ToolCalls) != 1 {
				t.Fatalf("first turn: thinking %+v, calls %+v; want %+v and one call", first.Thinking, first.ToolCalls, want)
			}
			turn := func(thinking []state.Thinking) []state.Message {
				return append(conv[:1:1],
					state.Message{Role: "assistant", Content: first.Content, ToolCalls: first.ToolCalls, Thinking: thinking},
					state.Message{Role: "tool", ToolCallID: first.ToolCalls[0].ID, Name: "get_weather", Content: "18C"})
			}
			second, err := c.Chat(t.Context(), ports.ChatRequest{Messages: turn(first.Thinking), Options: opts, Tools: []ports.ToolSchema{wiretest.WeatherTool}})
			if err != nil || second.Content != "18C in Paris." {
				t.Fatalf("second turn with the thinking sent back: %+v, %v", second, err)
			}
			changed := []state.Thinking{{Text: want[0].Text + " ", Signature: want[0].Signature}, want[1]}
			for name, thinking := range map[string][]state.Thinking{"without thinking": nil, "thinking changed": changed} {
				_, err := c.Chat(t.Context(), ports.ChatRequest{Messages: turn(thinking), Options: opts, Tools: []ports.ToolSchema{wiretest.WeatherTool}})
				if err == nil || !strings.Contains(err.Error(), "400 Bad Request") {
					t.Errorf("%s: Chat = %v, want the server's 400 (the server must enforce the rule)", name, err)
				}
			}
		})
	}
}
