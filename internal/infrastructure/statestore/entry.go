package statestore

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/regfile"
)

// journalEntry is one line of a run's journal: what changed in one step since the line
// before it, or since the state file. Seq numbers the lines of a run from 1, without gaps
// and across state files: a state file records the last one it holds (journal_seq), so
// lines at or below it are known to be folded in already.
//
// Added says that the step is new: it is added to the run, at the end of its order, before
// the rest of the entry applies. Lists change by index: Len is the list's new length (it is
// cut or padded with empty items) and Set the items that changed or were added. Record is the
// step without its tool calls and its conversation's messages, present when any of its other
// fields changed.
type journalEntry struct {
	Seq       int64                             `json:"seq"`
	UpdatedAt time.Time                         `json:"updated_at"`
	Step      string                            `json:"step"`
	Added     bool                              `json:"added,omitempty"`
	Record    *state.StepState                  `json:"record,omitempty"`
	ToolCalls *listChange[state.ToolCallRecord] `json:"tool_calls,omitempty"`
	Messages  *listChange[state.Message]        `json:"messages,omitempty"`
	Turns     *listChange[state.Turn]           `json:"turns,omitempty"`
}

// listLens are the lengths of a step's lists as the journal last knew them.
type listLens struct{ calls, msgs, turns int }

// listChange is the new length of a list and the items that changed.
type listChange[T any] struct {
	Len int          `json:"len"`
	Set []indexed[T] `json:"set,omitempty"`
}

// indexed is an item of a list and its index.
type indexed[T any] struct {
	At    int `json:"at"`
	Value T   `json:"value"`
}

// errNotJournaled says that an entry cannot hold a change exactly as the state file would:
// a number JSON cannot write, text that is not valid UTF-8, a value of a type the state file
// writes its own way. The change is then saved by rewriting the state file.
var errNotJournaled = errors.New("the change cannot be journaled exactly")

// newEntry builds the entry for the changes ch found in step name, whose record as written
// (large outputs moved to files) is st. An entry with no change still records updated_at.
func newEntry(seq int64, updated time.Time, name string, st *state.StepState, ch stepChanges,
	prev listLens) (journalEntry, error) {
	en := journalEntry{Seq: seq, UpdatedAt: updated, Step: name}
	var msgs []state.Message
	if st.Conversation != nil {
		msgs = st.Conversation.Messages
	}
	if ch.record {
		rec, err := recordOf(st)
		if err != nil {
			return en, err
		}
		en.Record = rec
	}
	if len(ch.calls) > 0 || len(st.ToolCalls) != prev.calls {
		en.ToolCalls = &listChange[state.ToolCallRecord]{Len: len(st.ToolCalls)}
		for _, i := range ch.calls {
			c := st.ToolCalls[i]
			args, err := jsonMap(c.Arguments)
			if err != nil {
				return en, fmt.Errorf("tool call %q: %w", c.ID, err)
			}
			c.Arguments = args
			en.ToolCalls.Set = append(en.ToolCalls.Set, indexed[state.ToolCallRecord]{i, c})
		}
	}
	// A step without a conversation has no messages: its record, changed, says so.
	if st.Conversation != nil && (len(ch.msgs) > 0 || len(msgs) != prev.msgs) {
		en.Messages = &listChange[state.Message]{Len: len(msgs)}
		for _, i := range ch.msgs {
			en.Messages.Set = append(en.Messages.Set, indexed[state.Message]{i, msgs[i]})
		}
	}
	if len(ch.turns) > 0 || len(st.Turns) != prev.turns {
		en.Turns = &listChange[state.Turn]{Len: len(st.Turns)}
		for _, i := range ch.turns {
			en.Turns.Set = append(en.Turns.Set, indexed[state.Turn]{i, st.Turns[i]})
		}
	}
	return en, nil
}

// recordOf returns the step without its lists, its response in JSON's terms.
func recordOf(st *state.StepState) (*state.StepState, error) {
	rec := *st
	rec.ToolCalls, rec.Turns = nil, nil
	if st.Conversation != nil {
		conv := *st.Conversation
		conv.Messages = nil
		rec.Conversation = &conv
	}
	resp, err := jsonValue(st.Response)
	if err != nil {
		return nil, fmt.Errorf("response: %w", err)
	}
	rec.Response = resp
	return &rec, nil
}

// encodeEntry appends the line of en to buf.
func encodeEntry(buf *bytes.Buffer, en *journalEntry) error {
	start := buf.Len()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(en); err != nil {
		buf.Truncate(start)
		return fmt.Errorf("%w: %v", errNotJournaled, err)
	}
	// encoding/json writes text that is not valid UTF-8 with U+FFFD in its place, escaped;
	// valid text holding U+FFFD is written as it is. A false alarm (text holding the escape
	// itself) only costs a rewrite of the state file.
	if bytes.Contains(buf.Bytes()[start:], []byte(`\ufffd`)) {
		buf.Truncate(start)
		return fmt.Errorf("%w: text that is not valid UTF-8", errNotJournaled)
	}
	return nil
}

// jsonValue returns a dynamic value (a tool call's arguments, a step's response) as JSON
// must hold it to read back as the state file does (see fromJSON): integers as integers,
// floats with a decimal point or an exponent, json.Number as the string the state file makes
// of it. Values of other types are errNotJournaled.
func jsonValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, bool, string:
		return x, nil
	case int:
		return json.Number(strconv.Itoa(x)), nil
	case int64:
		return json.Number(strconv.FormatInt(x, 10)), nil
	case uint64:
		return json.Number(strconv.FormatUint(x, 10)), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%w: %v", errNotJournaled, x)
		}
		return json.Number(formatFloat(x, 64)), nil
	case json.Number:
		return string(x), nil
	case map[string]any:
		return jsonMap(x)
	case []any:
		if x == nil {
			return x, nil
		}
		out := make([]any, len(x))
		for i, e := range x {
			var err error
			if out[i], err = jsonValue(e); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: a value of type %T", errNotJournaled, v)
}

func jsonMap(m map[string]any) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		v, err := jsonValue(e)
		if err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, nil
}

// fromJSON turns the numbers of a value decoded with UseNumber into what the state file
// gives (see normalize): a number written with a point or an exponent is a float64, others
// an int (a uint64 above the int range).
func fromJSON(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if strings.ContainsAny(s, ".eE") {
			return strconv.ParseFloat(s, 64)
		}
		if i, err := strconv.ParseInt(s, 10, 0); err == nil {
			return int(i), nil
		}
		return strconv.ParseUint(s, 10, 64)
	case map[string]any:
		for k, e := range x {
			var err error
			if x[k], err = fromJSON(e); err != nil {
				return nil, err
			}
		}
	case []any:
		for i, e := range x {
			var err error
			if x[i], err = fromJSON(e); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

// decodeEntry parses one line of a journal.
func decodeEntry(line []byte) (journalEntry, error) {
	var en journalEntry
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(&en); err != nil {
		return en, err
	}
	if en.Step == "" || en.Seq <= 0 {
		return en, errors.New("no step or sequence number")
	}
	var err error
	if en.Record != nil {
		if en.Record.Response, err = fromJSON(en.Record.Response); err != nil {
			return en, fmt.Errorf("response: %w", err)
		}
	}
	if en.ToolCalls != nil {
		for i := range en.ToolCalls.Set {
			c := &en.ToolCalls.Set[i].Value
			if _, err := fromJSON(c.Arguments); err != nil {
				return en, fmt.Errorf("tool call %q: %w", c.ID, err)
			}
		}
	}
	return en, nil
}

// apply folds the entry into run. It changes nothing when it fails: an entry is checked
// whole first.
func (en *journalEntry) apply(run *state.RunState) error {
	if err := en.check(run); err != nil {
		return err
	}
	if en.Added {
		run.Step(en.Step)
	}
	st := run.States[en.Step]
	if en.Record != nil {
		calls, conv, turns := st.ToolCalls, st.Conversation, st.Turns
		*st = *en.Record
		st.ToolCalls = calls
		if st.Turns == nil { // an earlier awf wrote them in the record
			st.Turns = turns
		}
		if st.Conversation != nil {
			st.Conversation.Messages = nil
			if conv != nil {
				st.Conversation.Messages = conv.Messages
			}
		}
	}
	var err error
	if en.ToolCalls != nil {
		if st.ToolCalls, err = en.ToolCalls.apply(st.ToolCalls); err != nil {
			return fmt.Errorf("tool calls of step %q: %w", en.Step, err)
		}
	}
	if en.Messages != nil {
		if st.Conversation == nil {
			return fmt.Errorf("messages for step %q, which has no conversation", en.Step)
		}
		if st.Conversation.Messages, err = en.Messages.apply(st.Conversation.Messages); err != nil {
			return fmt.Errorf("messages of step %q: %w", en.Step, err)
		}
	}
	if en.Turns != nil {
		if st.Turns, err = en.Turns.apply(st.Turns); err != nil {
			return fmt.Errorf("turns of step %q: %w", en.Step, err)
		}
	}
	run.UpdatedAt = en.UpdatedAt
	return nil
}

// check reports why the entry cannot be folded into run, if it cannot.
func (en *journalEntry) check(run *state.RunState) error {
	st, ok := run.States[en.Step]
	switch {
	case en.Added && ok:
		return fmt.Errorf("step %q is added again", en.Step)
	case en.Added:
		st = &state.StepState{}
	case st == nil:
		return fmt.Errorf("step %q is not in the state file", en.Step)
	}
	if en.ToolCalls != nil {
		if err := en.ToolCalls.check(); err != nil {
			return fmt.Errorf("tool calls of step %q: %w", en.Step, err)
		}
	}
	if en.Turns != nil {
		if err := en.Turns.check(); err != nil {
			return fmt.Errorf("turns of step %q: %w", en.Step, err)
		}
	}
	if en.Messages != nil {
		conv := st.Conversation
		if en.Record != nil {
			conv = en.Record.Conversation
		}
		if conv == nil {
			return fmt.Errorf("messages for step %q, which has no conversation", en.Step)
		}
		if err := en.Messages.check(); err != nil {
			return fmt.Errorf("messages of step %q: %w", en.Step, err)
		}
	}
	return nil
}

// check reports a length or index that cannot be applied to a list.
func (c *listChange[T]) check() error {
	if c.Len < 0 {
		return fmt.Errorf("length %d", c.Len)
	}
	for _, s := range c.Set {
		if s.At < 0 || s.At >= c.Len {
			return fmt.Errorf("index %d of a list of %d", s.At, c.Len)
		}
	}
	return nil
}

// apply returns items changed as c says.
func (c *listChange[T]) apply(items []T) ([]T, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	if c.Len <= len(items) {
		items = items[:c.Len]
	} else {
		items = append(items, make([]T, c.Len-len(items))...)
	}
	for _, s := range c.Set {
		items[s.At] = s.Value
	}
	return items, nil
}

// errJournalGap says that a journal does not continue the state file read with it: another
// process rewrote the state file meanwhile, or the journal is damaged.
var errJournalGap = errors.New("the journal does not continue the state file")

// journalRead is what Load found in a journal.
type journalRead struct {
	entries []journalEntry // those after the state file's journal_seq, in order
	lines   []int          // the line of each entry
	last    int64          // the highest sequence number in the journal, 0 if none
	size    int64          // bytes read
	torn    bool           // the last line was cut short by a crash
	// dropped, when reading from the last valid line (lenient), says what was left out: the
	// first line that could not be read or applied, and the lines after it.
	dropped string
}

// readJournal reads the journal at path for a state file that holds its lines up to folded.
// A missing file is an empty journal. A last line without its newline was being written when
// a crash came and is ignored; any other line that does not parse, or whose sequence number
// does not follow, is an error naming the file and line, or with lenient the end of what is
// read, j.dropped saying so.
func readJournal(path string, folded int64, lenient bool) (j journalRead, err error) {
	defer func() {
		if err != nil && lenient && j.dropped == "" {
			j.dropped, err = dropped(err, j.size), nil
		}
	}()
	data, err := regfile.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return j, nil
	}
	if err != nil {
		return j, fmt.Errorf("read journal: %w", err)
	}
	j.size = int64(len(data))
	for n := 1; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			j.torn = true
			break
		}
		line := data[:i]
		data = data[i+1:]
		en, err := decodeEntry(line)
		if err != nil {
			return j, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		switch {
		case en.Seq <= j.last:
			return j, fmt.Errorf("%s:%d: sequence number %d after %d", path, n, en.Seq, j.last)
		case en.Seq <= folded:
		case en.Seq != max(j.last, folded)+1:
			return j, fmt.Errorf("%s:%d: %w: sequence number %d after %d", path, n, errJournalGap, en.Seq, max(j.last, folded))
		default:
			j.entries, j.lines = append(j.entries, en), append(j.lines, n)
		}
		j.last = en.Seq
	}
	return j, nil
}

// apply folds the entries into run; an error names the journal's file and line. With
// lenient, the entries from the first that does not apply are left out, j.dropped saying so
// (an entry that fails may have changed run in part; see journalEntry.apply's checks, made
// before any change).
func (j *journalRead) apply(run *state.RunState, path string, lenient bool) error {
	for i := range j.entries {
		if err := j.entries[i].apply(run); err != nil {
			err = fmt.Errorf("%s:%d: %w", path, j.lines[i], err)
			if !lenient {
				return err
			}
			j.dropped = dropped(err, j.size)
			return nil
		}
	}
	return nil
}

// dropped describes what reading a journal from its last valid line left out: the first line
// that could not be used, which err names, and every line after it.
func dropped(err error, size int64) string {
	return fmt.Sprintf("%v (this line and those after it were left out; the journal held %d bytes)", err, size)
}
