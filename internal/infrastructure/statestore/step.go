package statestore

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// stepEncoder writes one step's YAML as it appears under "states:", reusing the YAML of every
// tool call and conversation message that has not changed since the last encoding.
//
// An agent step is saved twice per tool call, and each save changes its counters and its last
// record or two. So the step is encoded in pieces: its skeleton, the step with each of its two
// lists replaced by a one-item placeholder, is encoded whenever it changes (it is small); each
// record is encoded alone and kept with a copy of the record it was encoded from; the step's
// YAML is the skeleton with the placeholders' text replaced by the records' YAML. A Save thus
// costs a comparison per record, not an encoding, and its cost grows with the number of
// records only by a copy of their text. The result is byte for byte what encodeYAML gives for
// the whole step (tests check, on random sequences of changes).
//
// A skeleton in which a placeholder's text is not found exactly once (a value of the step
// that holds the same text, or a go-yaml that prints nested lists otherwise) is encoded whole,
// as if it had no lists: slower, never wrong.
//
// The journal (see journal.go) uses the copies to find what changed in a step, and leaves
// the YAML of what it found to the next encoding: a skeleton or a record's YAML is then empty.
type stepEncoder struct {
	was      *state.StepState // deep copy of the skeleton last seen
	skeleton string           // its YAML ("" until encoded), or the whole step's if whole is set
	whole    *state.StepState // deep copy of a step encoded whole, nil if encoded in pieces
	// callAt and msgAt are the offsets of the placeholders' text in skeleton, -1 when absent.
	callAt, msgAt int
	calls         records[state.ToolCallRecord, savedCall]
	msgs          records[state.Message, savedMessage]
	// turns are copies of the step's turns, for the journal, which holds them as a list of
	// its own (they are in the skeleton's YAML).
	turns records[state.Turn, savedTurn]
}

// records is the YAML of a list's items of type T, each with a copy of the item it was
// encoded from, of type C. An item's YAML is "" until it is encoded. arr is the array of the
// list last seen, for updateSome.
type records[T, C any] struct {
	was  []C
	yaml []string
	arr  unsafe.Pointer
}

// Indentation of the items of a step's lists in the state file: "states:" at 0, the step's
// name at 2, its fields at 4 ("tool_calls:" and its items, "conversation:") and the
// conversation's fields at 6 ("messages:" and its items). A go-yaml that indents otherwise
// is detected: the placeholders are not found.
const (
	callIndent = "    "
	msgIndent  = "      "
)

// placeholderID marks the placeholders. A value of a step holding their whole text is not
// harmful, only slower: see stepEncoder.
const placeholderID = "awf-statestore-placeholder-5d2c81f0"

var (
	callPlaceholder = []state.ToolCallRecord{{ID: placeholderID}}
	msgPlaceholder  = []state.Message{{Role: placeholderID}}
)

// placeholderText is the YAML of each placeholder in a skeleton.
var placeholderText = sync.OnceValues(func() ([2]string, error) {
	call, err := encodeCall(callPlaceholder[0])
	if err != nil {
		return [2]string{}, err
	}
	msg, err := encodeMessage(msgPlaceholder[0])
	return [2]string{call, msg}, err
})

// stepChanges says what an update of a stepEncoder found changed since the last one: the
// step's fields other than its lists (record), and the indexes of the tool calls, messages
// and, for the journal, turns that changed or were added. whole is set when the step is
// encoded in one piece, without copies of its records: then nothing is known of what changed.
type stepChanges struct {
	record             bool
	calls, msgs, turns []int
	whole              bool
}

// encode appends the YAML of step name to parts.
func (s *stepEncoder) encode(parts []string, name string, st *state.StepState) ([]string, error) {
	if _, err := s.update(name, st); err != nil {
		return nil, err
	}
	if s.whole != nil {
		return append(parts, s.skeleton), nil
	}
	texts, err := placeholderText()
	if err != nil {
		return nil, fmt.Errorf("encode placeholders: %w", err)
	}
	return s.splice(parts, texts), nil
}

// update brings the encoder's copies and YAML up to date with st and says what changed.
func (s *stepEncoder) update(name string, st *state.StepState) (stepChanges, error) {
	return s.compare(name, st, false, nil)
}

// changes brings the encoder's copies up to date with st and says what changed, for the
// journal: the YAML of what changed is left to the next update, a record whose fields are the
// very values last seen is taken as unchanged without comparing what they hold (see
// sameCallIdentity and sameMessageIdentity), and with hint only the records it names, and
// those added, are compared (see records.updateSome). A step encoded whole says so, and
// nothing else.
func (s *stepEncoder) changes(name string, st *state.StepState, hint *ports.StepChanges) (stepChanges, error) {
	return s.compare(name, st, true, hint)
}

func (s *stepEncoder) compare(name string, st *state.StepState, journal bool, hint *ports.StepChanges) (stepChanges, error) {
	if s.whole != nil {
		if journal || equal(reflect.ValueOf(s.whole), reflect.ValueOf(st)) {
			return stepChanges{whole: true}, nil
		}
		*s = stepEncoder{} // try the pieces again
	}
	texts, err := placeholderText()
	if err != nil {
		return stepChanges{}, fmt.Errorf("encode placeholders: %w", err)
	}
	var ch stepChanges
	sk := skeletonOf(st)
	if journal {
		sk = withoutTurns(sk)
	}
	if !equal(reflect.ValueOf(s.was), reflect.ValueOf(sk)) {
		ch.record = true
		s.was, s.skeleton = deepCopy(sk), ""
	}
	if s.skeleton == "" && !journal {
		text, err := emit(map[string]*state.StepState{name: sk})
		if err != nil {
			return stepChanges{}, fmt.Errorf("encode step %q: %w", name, err)
		}
		s.skeleton = indent(text)
		hasCalls := sk != nil && len(sk.ToolCalls) > 0
		hasMsgs := sk != nil && sk.Conversation != nil && len(sk.Conversation.Messages) > 0
		s.callAt, s.msgAt = findOnce(s.skeleton, texts[0], hasCalls), findOnce(s.skeleton, texts[1], hasMsgs)
		if s.callAt == notOnce || s.msgAt == notOnce {
			return stepChanges{whole: true}, s.encodeWhole(name, st)
		}
	}
	var calls []state.ToolCallRecord
	var msgs []state.Message
	var turns []state.Turn
	if st != nil {
		calls, turns = st.ToolCalls, st.Turns
		if st.Conversation != nil {
			msgs = st.Conversation.Messages
		}
	}
	if journal && hint != nil {
		ch.calls = s.calls.updateSome(calls, hint.Calls, false, sameCallIdentity, saveCall)
		ch.msgs = s.msgs.updateSome(msgs, nil, true, sameMessageIdentity, saveMessage)
		ch.turns = s.turns.updateSome(turns, nil, true, sameTurnIdentity, saveTurn)
		return ch, nil
	}
	sameC, sameM, encC, encM := sameCall, sameSavedMessage, encodeCall, encodeMessage
	if journal {
		sameC, sameM, encC, encM = sameCallIdentity, sameMessageIdentity, nil, nil
	}
	if ch.calls, err = s.calls.update(calls, sameC, saveCall, encC); err != nil {
		return stepChanges{}, fmt.Errorf("encode step %q: %w", name, err)
	}
	if ch.msgs, err = s.msgs.update(msgs, sameM, saveMessage, encM); err != nil {
		return stepChanges{}, fmt.Errorf("encode step %q: %w", name, err)
	}
	ch.turns, _ = s.turns.update(turns, sameTurnIdentity, saveTurn, nil)
	return ch, nil
}

// withoutTurns returns sk without its turns, which the journal holds as a list of its own.
func withoutTurns(sk *state.StepState) *state.StepState {
	if sk == nil || sk.Turns == nil {
		return sk
	}
	c := *sk
	c.Turns = nil
	return &c
}

// encodeWhole encodes the step in one piece, for a skeleton in which the placeholders were not
// found, and keeps it until the step changes.
func (s *stepEncoder) encodeWhole(name string, st *state.StepState) error {
	text, err := emit(map[string]*state.StepState{name: st})
	if err != nil {
		*s = stepEncoder{}
		return fmt.Errorf("encode step %q: %w", name, err)
	}
	*s = stepEncoder{whole: deepCopy(st), skeleton: indent(text)}
	return nil
}

// splice appends the skeleton to parts with its placeholders replaced by the lists' items.
func (s *stepEncoder) splice(parts []string, texts [2]string) []string {
	type cut struct {
		at, n int
		items []string
	}
	cuts := make([]cut, 0, 2)
	if s.callAt >= 0 {
		cuts = append(cuts, cut{s.callAt, len(texts[0]), s.calls.yaml})
	}
	if s.msgAt >= 0 {
		cuts = append(cuts, cut{s.msgAt, len(texts[1]), s.msgs.yaml})
	}
	if len(cuts) == 2 && cuts[1].at < cuts[0].at {
		cuts[0], cuts[1] = cuts[1], cuts[0]
	}
	pos := 0
	for _, c := range cuts {
		parts = append(parts, s.skeleton[pos:c.at])
		parts = append(parts, c.items...)
		pos = c.at + c.n
	}
	return append(parts, s.skeleton[pos:])
}

// skeletonOf returns a shallow copy of st in which non-empty lists of tool calls and of
// messages are replaced by the placeholders, or st itself if it has none.
func skeletonOf(st *state.StepState) *state.StepState {
	if st == nil || len(st.ToolCalls) == 0 && (st.Conversation == nil || len(st.Conversation.Messages) == 0) {
		return st
	}
	sk := *st
	if len(st.ToolCalls) > 0 {
		sk.ToolCalls = callPlaceholder
	}
	if st.Conversation != nil && len(st.Conversation.Messages) > 0 {
		c := *st.Conversation
		c.Messages = msgPlaceholder
		sk.Conversation = &c
	}
	return &sk
}

// notOnce is findOnce's answer for a text that is not found exactly once.
const notOnce = -2

// findOnce returns the offset of the only occurrence of text in doc, which must start a line;
// -1 if want is false (the text is not expected), notOnce if there is not exactly one.
func findOnce(doc, text string, want bool) int {
	if !want {
		return -1
	}
	at := strings.Index(doc, text)
	if at <= 0 || doc[at-1] != '\n' || strings.Contains(doc[at+1:], text) {
		return notOnce
	}
	return at
}

// update makes r's copies those of items, and returns the indexes of the items that differ
// from the copies r held. With enc, it also makes r the YAML of items, encoding those that
// changed and those left unencoded; with a nil enc, the YAML of what changed is left empty.
func (r *records[T, C]) update(items []T, same func(*C, *T) bool, save func(T) C,
	enc func(T) (string, error)) ([]int, error) {
	r.arr = unsafe.Pointer(unsafe.SliceData(items))
	if len(items) < len(r.was) {
		r.was, r.yaml = r.was[:len(items)], r.yaml[:len(items)]
	}
	var changed []int
	for i := range items {
		if i < len(r.was) && same(&r.was[i], &items[i]) {
			continue
		}
		if i < len(r.was) {
			r.was[i], r.yaml[i] = save(items[i]), ""
		} else {
			r.was, r.yaml = append(r.was, save(items[i])), append(r.yaml, "")
		}
		changed = append(changed, i)
	}
	if enc == nil {
		return changed, nil
	}
	for i, text := range r.yaml {
		if text != "" {
			continue
		}
		text, err := enc(items[i])
		if err != nil {
			r.was, r.yaml = r.was[:i], r.yaml[:i] // not encoded: to be compared again
			return nil, err
		}
		r.yaml[i] = text
	}
	return changed, nil
}

// updateSome is update for the journal when the caller said what changed (ports.StepChanges):
// of the items r has copies of, only those at touched are compared (none with appended, which
// says that the list only grew at its end), and those after them are new. Its cost does not
// grow with the list. A list that is shorter than the copies, or with appended one that is not
// in the array last seen (it was replaced, or outgrew its array), is compared whole.
func (r *records[T, C]) updateSome(items []T, touched []int, appended bool, same func(*C, *T) bool,
	save func(T) C) []int {
	arr := unsafe.Pointer(unsafe.SliceData(items))
	if len(items) < len(r.was) || appended && arr != r.arr && len(r.was) > 0 {
		changed, _ := r.update(items, same, save, nil) // without enc, it cannot fail
		return changed
	}
	r.arr = arr
	var changed []int
	for _, i := range touched {
		if i >= 0 && i < len(r.was) && !same(&r.was[i], &items[i]) {
			r.was[i], r.yaml[i] = save(items[i]), ""
			changed = append(changed, i)
		}
	}
	slices.Sort(changed)
	for i := len(r.was); i < len(items); i++ {
		r.was, r.yaml = append(r.was, save(items[i])), append(r.yaml, "")
		changed = append(changed, i)
	}
	return changed
}

// savedTurn is a copy of a turn, with the turn's own Calls array, for sameTurnIdentity.
type savedTurn struct {
	turn  state.Turn
	calls *string
}

func saveTurn(t state.Turn) savedTurn {
	calls := unsafe.SliceData(t.Calls)
	t.Calls = slices.Clone(t.Calls)
	if t.Usage != nil {
		u := *t.Usage
		t.Usage = &u
	}
	return savedTurn{turn: t, calls: calls}
}

// sameTurnIdentity reports whether a turn holds the values the copy was saved from: its
// texts, and by identity its usage and its list of calls (see sameCallIdentity).
func sameTurnIdentity(saved *savedTurn, t *state.Turn) bool {
	a := &saved.turn
	return saved.calls == unsafe.SliceData(t.Calls) && len(a.Calls) == len(t.Calls) &&
		(a.Usage == nil) == (t.Usage == nil) && (a.Usage == nil || *a.Usage == *t.Usage) &&
		a.Text == t.Text && a.FinishReason == t.FinishReason && a.Divergence == t.Divergence
}

// encodeCall and encodeMessage give the YAML of one item of a step's lists, indented as it
// appears in the state file.
func encodeCall(c state.ToolCallRecord) (string, error) {
	text, err := emit([]state.ToolCallRecord{c})
	if err != nil {
		return "", fmt.Errorf("encode tool call %q: %w", c.ID, err)
	}
	return indentBy(text, callIndent), nil
}

func encodeMessage(m state.Message) (string, error) {
	text, err := emit([]state.Message{m})
	if err != nil {
		return "", fmt.Errorf("encode %s message: %w", m.Role, err)
	}
	return indentBy(text, msgIndent), nil
}

// savedCall is a copy of a tool call record, its arguments kept as keys and values: looking
// keys up in a map is several times faster than ranging over it. It also keeps the record's
// own Arguments map and Result pointer, for sameCallIdentity.
type savedCall struct {
	rec     state.ToolCallRecord // without Arguments
	nilArgs bool
	keys    []string
	values  []any
	args    unsafe.Pointer // the record's Arguments map
	result  *state.ToolCallResult
}

// saveCall copies a record deeply enough that changing the original in place cannot change
// the copy.
func saveCall(c state.ToolCallRecord) savedCall {
	sc := savedCall{rec: c, nilArgs: c.Arguments == nil, args: mapPointer(c.Arguments), result: c.Result}
	sc.rec.Arguments = nil
	if c.Result != nil {
		r := *c.Result
		sc.rec.Result = &r
	}
	if c.Recovery != nil {
		r := *c.Recovery
		sc.rec.Recovery = &r
	}
	for k, v := range c.Arguments {
		sc.keys = append(sc.keys, k)
		sc.values = append(sc.values, deepCopy(v))
	}
	return sc
}

// sameCall reports whether a record encodes as the copy saved of another. It runs for every
// call of a step at every Save, so it compares field by field, without reflection; a test
// checks that it notices a change in any field.
func sameCall(saved *savedCall, c *state.ToolCallRecord) bool {
	a := &saved.rec
	if a.ID != c.ID || a.Tool != c.Tool || a.InFlight != c.InFlight || !sameRecovery(a, c) {
		return false
	}
	if !a.Result.Equal(c.Result) {
		return false
	}
	if saved.nilArgs != (c.Arguments == nil) || len(saved.keys) != len(c.Arguments) {
		return false
	}
	for i, k := range saved.keys {
		if v, ok := c.Arguments[k]; !ok || !sameValue(saved.values[i], v) {
			return false
		}
	}
	return true
}

// sameCallIdentity reports whether a record holds the very values the copy was saved from:
// the same id, tool and in-flight flag, the same Arguments map, and the same Result pointer
// or, when not (the store's copy of a result whose output went to a file), an equal result.
// It does not look inside the map, nor inside a result it was given before, so it takes ten
// times less than sameCall, which matters at every save of a step of thousands of calls; a
// change made in place inside them is not seen by it (sameCall, at the next Save, sees it).
// The agent loop replaces a result rather than changing it, and never changes arguments.
func sameCallIdentity(saved *savedCall, c *state.ToolCallRecord) bool {
	a := &saved.rec
	if saved.result != c.Result && !a.Result.Equal(c.Result) {
		return false
	}
	return saved.args == mapPointer(c.Arguments) && a.ID == c.ID && a.Tool == c.Tool && a.InFlight == c.InFlight &&
		sameRecovery(a, c)
}

// sameRecovery compares what a record says about a call a crash cut off: its outcome, what
// resume decided, and its intent (by identity: a record's intent is replaced, never changed).
func sameRecovery(a, c *state.ToolCallRecord) bool {
	if a.Outcome != c.Outcome || mapPointer(a.Intent) != mapPointer(c.Intent) || (a.Recovery == nil) != (c.Recovery == nil) {
		return false
	}
	return a.Recovery == nil || *a.Recovery == *c.Recovery
}

// mapPointer returns what identifies a map: two map values are the same map when it is equal.
func mapPointer(m map[string]any) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&m))
}

// savedMessage is a copy of a message, and the message's own ToolCalls and Thinking arrays,
// for sameMessageIdentity.
type savedMessage struct {
	msg      state.Message // with its own ToolCalls and Thinking
	calls    *state.CallRef
	thinking *state.Thinking
}

func saveMessage(m state.Message) savedMessage {
	return savedMessage{msg: cloneMessage(m), calls: unsafe.SliceData(m.ToolCalls), thinking: unsafe.SliceData(m.Thinking)}
}

func sameSavedMessage(saved *savedMessage, m *state.Message) bool { return sameMessage(&saved.msg, m) }

// sameMessageIdentity is sameMessage with the message's tool calls and thinking compared by
// identity, as sameCallIdentity compares a record's: the same array, not the same contents.
func sameMessageIdentity(saved *savedMessage, m *state.Message) bool {
	a := &saved.msg
	return saved.calls == unsafe.SliceData(m.ToolCalls) && len(a.ToolCalls) == len(m.ToolCalls) &&
		saved.thinking == unsafe.SliceData(m.Thinking) && len(a.Thinking) == len(m.Thinking) &&
		a.Role == m.Role && a.Content == m.Content && a.ContentFile == m.ContentFile &&
		a.ContentSize == m.ContentSize && a.ToolCallID == m.ToolCallID && a.Name == m.Name && a.IsError == m.IsError
}

// sameMessage reports whether two messages encode the same; see sameCall.
func sameMessage(a, b *state.Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.ContentFile == b.ContentFile &&
		a.ContentSize == b.ContentSize && a.ToolCallID == b.ToolCallID && a.Name == b.Name &&
		a.IsError == b.IsError && slices.Equal(a.ToolCalls, b.ToolCalls) && slices.Equal(a.Thinking, b.Thinking)
}

func cloneMessage(m state.Message) state.Message {
	m.ToolCalls = slices.Clone(m.ToolCalls)
	m.Thinking = slices.Clone(m.Thinking)
	return m
}

// sameMap and sameValue compare the JSON-like values of tool call arguments: typed fast paths
// for what decoded JSON holds, equal for anything else.
func sameMap(a, b map[string]any) bool {
	if (a == nil) != (b == nil) || len(a) != len(b) {
		return false
	}
	for k, av := range a {
		bv, ok := b[k]
		if !ok || !sameValue(av, bv) {
			return false
		}
	}
	return true
}

func sameValue(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y) // -0 is not written as 0
	case int:
		y, ok := b.(int)
		return ok && x == y
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case map[string]any:
		y, ok := b.(map[string]any)
		return ok && sameMap(x, y)
	case []any:
		y, ok := b.([]any)
		if !ok || (x == nil) != (y == nil) || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValue(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return equal(reflect.ValueOf(a), reflect.ValueOf(b))
}
