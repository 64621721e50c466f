package anthropic

import (
	"cmp"
	"encoding/json"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/chat"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/httpx"
)

// event is one streamed event's data.
type event struct {
	Type         string          `json:"type"`
	Message      *response       `json:"message"`
	Index        int             `json:"index"`
	ContentBlock *contentBlock   `json:"content_block"`
	Delta        *delta          `json:"delta"`
	Usage        *usage          `json:"usage"`
	Error        json.RawMessage `json:"error"`
}

type delta struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	PartialJSON string `json:"partial_json"`
	Thinking    string `json:"thinking"`
	Signature   string `json:"signature"`
	StopReason  string `json:"stop_reason"`
}

// decodeStream reads a streamed message up to message_stop; a body that ends before it is
// truncated. Once text has gone to onDelta a failure is final, so that a retry cannot show the
// same text twice.
func decodeStream(body io.Reader, firstID int, onDelta func(string)) (ports.ChatResponse, error) {
	s := &stream{Deltas: chat.NewDeltas(onDelta), firstID: firstID, blocks: map[int]*blockState{}}
	events := httpx.NewSSE(body)
	for {
		ev, err := events.Next()
		if err != nil {
			return s.Fail(chat.StreamError(name, "message_stop", err))
		}
		if len(ev.Data) == 0 {
			continue
		}
		done, err := s.event(ev.Type, ev.Data)
		if err != nil {
			return s.Fail(err)
		}
		if done {
			return s.result(), nil
		}
	}
}

// stream assembles a message from its events.
type stream struct {
	chat.Deltas
	firstID int

	model  string
	input  int
	output int
	stop   string
	blocks map[int]*blockState
}

// blockState is a content block being streamed.
type blockState struct {
	typ   string
	text  strings.Builder
	id    string
	name  string
	input json.RawMessage // as content_block_start gave it
	json  strings.Builder // input_json_delta pieces
	// signature and data are a thinking block's signature and a redacted_thinking block's
	// data; a thinking block's text is in text.
	signature strings.Builder
	data      string
}

// event handles one event. Its type is read from the data, and from the event: line when the
// data does not say; unknown types are ignored, as the API's versioning policy asks.
func (s *stream) event(typ string, data []byte) (done bool, err error) {
	var e event
	if err := json.Unmarshal(data, &e); err != nil {
		return false, chat.Malformed(name, "stream event", data, err)
	}
	switch cmp.Or(e.Type, typ) {
	case "message_start":
		if e.Message != nil {
			s.model = e.Message.Model
			s.input, s.output = e.Message.Usage.input(), e.Message.Usage.OutputTokens
		}
	case "content_block_start":
		if e.ContentBlock != nil {
			cb := e.ContentBlock
			b := &blockState{typ: cb.Type, id: cb.ID, name: cb.Name, input: cb.Input, data: cb.Data}
			s.blocks[e.Index] = b
			switch b.typ {
			case "text":
				b.text.WriteString(cb.Text)
				s.Emit(cb.Text)
			case "thinking":
				b.text.WriteString(cb.Thinking)
				b.signature.WriteString(cb.Signature)
			}
		}
	case "content_block_delta":
		s.delta(e.Index, e.Delta)
	case "message_delta":
		if e.Delta != nil && e.Delta.StopReason != "" {
			s.stop = e.Delta.StopReason
		}
		if e.Usage != nil {
			s.output = e.Usage.OutputTokens
			if in := e.Usage.input(); in > 0 {
				s.input = in
			}
		}
	case "message_stop":
		return true, nil
	case "error":
		if len(e.Error) == 0 {
			e.Error = data
		}
		return false, streamError(e.Error)
	}
	return false, nil
}

// delta adds a text_delta, an input_json_delta, a thinking_delta or a signature_delta to its
// block; other deltas (citations) are not used.
func (s *stream) delta(index int, d *delta) {
	if d == nil {
		return
	}
	b := s.blocks[index]
	if b == nil { // a delta without its content_block_start: take the block from the delta
		b = &blockState{typ: "text"}
		if d.Type == "input_json_delta" {
			b.typ = "tool_use"
		}
		s.blocks[index] = b
	}
	switch d.Type {
	case "text_delta":
		b.text.WriteString(d.Text)
		s.Emit(d.Text)
	case "input_json_delta":
		b.json.WriteString(d.PartialJSON)
	case "thinking_delta":
		b.text.WriteString(d.Thinking)
	case "signature_delta":
		b.signature.WriteString(d.Signature)
	}
}

func (s *stream) result() ports.ChatResponse {
	var text strings.Builder
	out := ports.ChatResponse{Model: s.model, Usage: tokens(s.input, s.output)}
	for _, i := range slices.Sorted(maps.Keys(s.blocks)) {
		b := s.blocks[i]
		switch b.typ {
		case "text":
			text.WriteString(b.text.String())
		case "tool_use":
			id := b.id
			if id == "" {
				id = chat.CallID(s.firstID + len(out.ToolCalls))
			}
			out.ToolCalls = append(out.ToolCalls, state.CallRef{ID: id, Name: b.name, Arguments: b.arguments()})
		default:
			if t, ok := thinking(b.typ, b.text.String(), b.signature.String(), b.data); ok {
				out.Thinking = append(out.Thinking, t)
			}
		}
	}
	out.Content = text.String()
	out.FinishReason = finishReason(s.stop, len(out.ToolCalls) > 0)
	return out
}

// arguments is the joined input_json_delta pieces; with none (a tool without parameters
// streams "" or nothing), the input content_block_start carried, which is usually {}.
func (b *blockState) arguments() string {
	if strings.TrimSpace(b.json.String()) == "" {
		return chat.Arguments(b.input)
	}
	return chat.ArgumentsText(b.json.String())
}
