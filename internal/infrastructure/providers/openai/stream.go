package openai

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/chat"
	"github.com/awf-dev/awf/internal/infrastructure/providers/internal/httpx"
)

// decodeStream reads a streamed completion: server-sent events whose data is a chunk, up to
// "data: [DONE]". A body that ends without [DONE] is truncated unless a chunk already carried a
// finish reason (some compatible servers never send [DONE]). Once text has gone to onDelta a
// failure is final, so that a retry cannot show the same text twice.
func decodeStream(body io.Reader, firstID int, onDelta func(string)) (ports.ChatResponse, error) {
	s := &stream{Deltas: chat.NewDeltas(onDelta), firstID: firstID, byIndex: map[int]*call{}, byID: map[string]*call{}}
	events := httpx.NewSSE(body)
	for {
		ev, err := events.Next()
		switch {
		case err == io.EOF && s.finish != "":
			return s.result(), nil
		case err != nil:
			return s.Fail(chat.StreamError(name, "[DONE]", err))
		}
		done, err := s.event(ev.Data)
		if err != nil {
			return s.Fail(err)
		}
		if done {
			return s.result(), nil
		}
	}
}

// stream assembles a reply from chunks. Text and arguments are kept both ways a server may send
// them, as deltas to append and as the whole so far, until the stream shows which it is.
type stream struct {
	chat.Deltas
	firstID int

	text       strings.Builder // every content chunk appended: right for delta streams
	last       string          // the latest content chunk: right for cumulative streams
	chunks     int             // non-empty content chunks so far
	cumulative bool            // every content chunk so far extended the one before
	whole      bool            // a chunk carried a whole message: last is the content

	refusal strings.Builder // refusal pieces, as deltas (or whole, from a whole-message chunk)

	calls   []*call
	byIndex map[int]*call
	byID    map[string]*call

	finish string
	usage  *usage
	model  string
}

// event handles one event's data: a chunk, [DONE], or several chunks on consecutive data lines
// from a server that left out the blank lines between events.
func (s *stream) event(data []byte) (done bool, err error) {
	data = bytes.TrimSpace(data)
	switch {
	case len(data) == 0:
		return false, nil
	case string(data) == "[DONE]":
		return true, nil
	}
	var r response
	if err := json.Unmarshal(data, &r); err != nil {
		if bytes.IndexByte(data, '\n') < 0 {
			return false, chat.Malformed(name, "stream chunk", data, err)
		}
		for line := range bytes.Lines(data) {
			if done, err := s.event(line); done || err != nil {
				return done, err
			}
		}
		return false, nil
	}
	return false, s.chunk(&r)
}

func (s *stream) chunk(r *response) error {
	if err := httpx.EmbeddedError(name, r.Error); err != nil {
		return err
	}
	if r.Model != "" {
		s.model = r.Model
	}
	if r.Usage != nil {
		s.usage = r.Usage
	}
	if len(r.Choices) == 0 {
		return nil
	}
	c := r.Choices[0]
	if c.FinishReason != "" {
		s.finish = c.FinishReason
	}
	switch {
	case c.Delta != nil:
		s.addContent(string(c.Delta.Content))
		s.refusal.WriteString(string(c.Delta.Refusal))
		for j, tc := range c.Delta.ToolCalls {
			s.slot(j, len(c.Delta.ToolCalls), tc).add(tc)
		}
	case c.Message != nil:
		s.setMessage(c.Message)
	}
	return nil
}

// addContent takes a content delta. A stream whose every chunk extends the one before carries
// the whole text so far in each chunk: only the new end is passed on. A chunk equal to all the
// text so far, after several, is a server repeating the message at the end: it is dropped.
func (s *stream) addContent(d string) {
	if d == "" {
		return
	}
	s.chunks++
	switch {
	case s.whole:
		s.last += d
		s.Emit(d)
		return
	case s.chunks == 1:
		s.cumulative = true
		s.Emit(d)
	case s.cumulative && strings.HasPrefix(d, s.last):
		s.Emit(d[len(s.last):])
	case s.chunks > 2 && len(d) == s.text.Len() && d == s.text.String():
		return
	default:
		s.cumulative = false
		s.Emit(d)
	}
	s.text.WriteString(d)
	s.last = d
}

// setMessage takes a chunk carrying the whole message so far instead of a delta.
func (s *stream) setMessage(m *reply) {
	full, cur := string(m.Content), s.content()
	if strings.HasPrefix(full, cur) {
		s.Emit(full[len(cur):])
	}
	s.last, s.whole = full, true
	s.refusal.Reset()
	s.refusal.WriteString(string(m.Refusal))
	s.calls, s.byIndex, s.byID = nil, map[int]*call{}, map[string]*call{}
	for _, tc := range m.ToolCalls {
		c := s.newCall()
		c.id, c.name, c.object = tc.ID, tc.Function.Name, chat.Arguments(tc.Function.Arguments)
	}
}

func (s *stream) content() string {
	if s.whole || (s.cumulative && s.chunks >= 2) {
		return s.last
	}
	return s.text.String()
}

// slot finds the call a tool-call delta continues, or starts one: by index; by id when the
// index is missing or reused for a call with another id; else by position, the j-th of n
// deltas in the chunk, a lone delta continuing the last call unless it names a new one.
func (s *stream) slot(j, n int, tc replyCall) *call {
	if tc.Index != nil {
		c := s.byIndex[*tc.Index]
		if c != nil && (tc.ID == "" || c.id == "" || c.id == tc.ID) {
			return c
		}
		if c = s.byID[tc.ID]; c == nil {
			c = s.newCall()
		}
		s.byIndex[*tc.Index] = c
		return c
	}
	if tc.ID != "" {
		if c := s.byID[tc.ID]; c != nil {
			return c
		}
		return s.newCall()
	}
	if n > 1 {
		for len(s.calls) <= j {
			s.newCall()
		}
		return s.calls[j]
	}
	if len(s.calls) == 0 {
		return s.newCall()
	}
	last := s.calls[len(s.calls)-1]
	if name := tc.Function.Name; name != "" && last.name != "" && (name != last.name || last.complete() && !last.extendedBy(tc)) {
		return s.newCall()
	}
	return last
}

func (s *stream) newCall() *call {
	c := &call{stream: s}
	s.calls = append(s.calls, c)
	return c
}

func (s *stream) result() ports.ChatResponse {
	out := ports.ChatResponse{Content: s.content(), Model: s.model, Usage: s.usage.tokens()}
	for _, c := range s.calls {
		if c.name == "" && c.frags == 0 && c.object == "" {
			continue // a delta that started nothing
		}
		id := c.id
		if id == "" {
			id = chat.CallID(s.firstID + len(out.ToolCalls))
		}
		out.ToolCalls = append(out.ToolCalls, state.CallRef{ID: id, Name: c.name, Arguments: c.arguments()})
	}
	out.FinishReason, out.Refusal = finishOf(s.finish, s.refusal.String(), len(out.ToolCalls) > 0)
	return out
}

// call assembles one tool call's arguments from fragments, or takes them whole when a server
// sends them as an object.
type call struct {
	stream *stream
	id     string
	name   string
	args   strings.Builder
	first  string // the first fragment
	last   string // the latest fragment
	frags  int
	object string // arguments that came as an object, complete in themselves
}

func (c *call) add(tc replyCall) {
	if tc.ID != "" && c.id == "" {
		c.id = tc.ID
		c.stream.byID[tc.ID] = c
	}
	if tc.Function.Name != "" {
		c.name = tc.Function.Name
	}
	raw := bytes.TrimSpace(tc.Function.Arguments)
	if len(raw) == 0 || string(raw) == "null" {
		return
	}
	if raw[0] != '"' {
		c.object = chat.Arguments(raw)
		return
	}
	var frag string
	if json.Unmarshal(raw, &frag) != nil || frag == "" {
		return
	}
	if c.frags == 0 {
		c.first = frag
	}
	c.frags++
	c.args.WriteString(frag)
	c.last = frag
}

// complete reports whether the arguments so far form a JSON value.
func (c *call) complete() bool {
	return c.object != "" || c.frags > 0 && json.Valid([]byte(c.args.String()))
}

// extendedBy reports whether a delta repeats this call with its arguments so far, as a server
// sending the whole call in every chunk does.
func (c *call) extendedBy(tc replyCall) bool {
	var frag string
	if json.Unmarshal(tc.Function.Arguments, &frag) != nil {
		return false
	}
	return frag != "" && strings.HasPrefix(frag, c.last)
}

// arguments joins the fragments. When the joined text is not JSON but the latest fragment is
// JSON from the same start, the server sent the whole arguments so far in each fragment (or
// repeated them at the end), and the latest fragment is the arguments.
func (c *call) arguments() string {
	if c.object != "" {
		return c.object
	}
	joined := c.args.String()
	if c.frags > 1 && !json.Valid([]byte(joined)) && json.Valid([]byte(c.last)) && strings.HasPrefix(c.last, c.first) {
		return chat.ArgumentsText(c.last)
	}
	return chat.ArgumentsText(joined)
}
