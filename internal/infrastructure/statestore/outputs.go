package statestore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/infrastructure/regfile"
)

// Large outputs live in <dir>/<run-id>/ as files named after their step and tool call:
// "<step>.output" and "<step>.<call-id>.output"; large contents of conversation messages (a
// tool's reply repeats its output) as "<step>.message-<index>.content". A changed output is
// written under the other of two names, the key or the key with ".1" appended, so the file
// the committed state file refers to is never overwritten: a crash before the new state file
// is renamed into place leaves the old state with its old output. The file it replaces is
// deleted after the commit.
const (
	outputExt  = ".output"
	contentExt = ".content"
	altSuffix  = ".1"
	maxNameLen = 100 // bytes of a name component before it is shortened with a hash
)

// blob is a large output as this store last committed it.
type blob struct {
	file string // relative to the store directory, slash-separated: "<run-id>/<name>"
	// content is the text written, so that an unchanged output is recognised in O(1): the
	// caller passes the same string again, and comparing a string with itself stops at the
	// pointer. It is dropped once the run has finished, and size and sum take over.
	content string
	size    int64
	sum     [sha256.Size]byte
}

// same reports whether s is the text this blob holds.
func (b blob) same(s string) bool {
	if b.content != "" || b.size == 0 {
		return b.content == s
	}
	return int64(len(s)) == b.size && sumString(s) == b.sum
}

// sumString hashes s in place: converting a 10 MB output to []byte would copy it.
func sumString(s string) [sha256.Size]byte {
	return sha256.Sum256(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// forget drops the text of the blob, keeping what is needed to recognise it.
func (b blob) forget() blob {
	if b.content == "" {
		return b
	}
	return blob{file: b.file, size: int64(len(b.content)), sum: sumString(b.content)}
}

// pendingWrite is a large output to write before the state file.
type pendingWrite struct {
	name    string // inside the run's directory
	content string
}

// externalizer builds the copy of a run that is marshalled: large outputs replaced by file
// references. It never modifies the run it is given.
type externalizer struct {
	threshold int
	runID     string
	old       map[string]blob // what the last commit wrote, by key
	next      map[string]blob // what this one refers to
	writes    []pendingWrite
	seen      map[string]*seenTexts // by step; kept from Save to Save
}

// seenTexts are the outputs of a step's tool calls and the contents of its messages, by
// position, that were last found to stay in the state file. A Save looks at every one of
// them: comparing a string with itself is free.
type seenTexts struct{ outputs, contents []string }

// large reports whether an output goes to a file: above the threshold. Output that is not
// valid UTF-8 stays in the state file below it, as !!binary (see stringStyle).
func (x *externalizer) large(s string) bool {
	return len(s) > x.threshold
}

// stays reports whether the text at position i of a list, whose texts found to stay last
// time are seen, stays in the state file; !large(s), remembered.
func (x *externalizer) stays(seen []string, i int, s string) bool {
	if seen[i] == s {
		return true
	}
	if x.large(s) {
		return false
	}
	seen[i] = s
	return true
}

// run returns a shallow copy of r in which only the steps with large outputs are copied.
func (x *externalizer) run(r *state.RunState) *state.RunState {
	cp := *r
	if r.States == nil {
		return &cp
	}
	cp.States = make(map[string]*state.StepState, len(r.States))
	for name, st := range r.States {
		cp.States[name] = x.step(name, st)
	}
	return &cp
}

func (x *externalizer) step(name string, st *state.StepState) *state.StepState {
	if st == nil {
		return nil
	}
	var msgs []state.Message
	if st.Conversation != nil {
		msgs = st.Conversation.Messages
	}
	seen := x.seenOf(name, len(st.ToolCalls), len(msgs))
	copyCalls := x.callsNeedCopy(st.ToolCalls, seen.outputs)
	copyMsgs := x.messagesNeedCopy(msgs, seen.contents)
	if !copyCalls && !copyMsgs && !x.large(st.Output) && st.OutputFile == "" && st.OutputSize == 0 {
		return st
	}
	sc := *st
	sc.Output, sc.OutputFile, sc.OutputSize = x.content(stepKey(name), st.Output)
	if copyCalls {
		sc.ToolCalls = x.calls(name, st.ToolCalls, seen.outputs)
	}
	if copyMsgs {
		conv := *st.Conversation
		conv.Messages = x.messages(name, msgs, seen.contents)
		sc.Conversation = &conv
	}
	return &sc
}

// changedStep is step for a journal line whose changes ch are known: it looks only at the
// tool calls and messages that changed, and returns st itself when neither they nor the
// step's output go to a file (nearly always), step's copy otherwise.
func (x *externalizer) changedStep(name string, st *state.StepState, ch stepChanges) *state.StepState {
	if x.large(st.Output) || st.OutputFile != "" || st.OutputSize != 0 {
		return x.step(name, st)
	}
	var msgs []state.Message
	if st.Conversation != nil {
		msgs = st.Conversation.Messages
	}
	seen := x.seenOf(name, len(st.ToolCalls), len(msgs))
	for _, i := range ch.calls {
		if r := st.ToolCalls[i].Result; r != nil && x.resultNeedsCopy(r, seen.outputs, i) {
			return x.step(name, st)
		}
	}
	for _, i := range ch.msgs {
		if x.messageNeedsCopy(&msgs[i], seen.contents, i) {
			return x.step(name, st)
		}
	}
	return st
}

// seenOf returns the texts seen of step name, sized for its lists.
func (x *externalizer) seenOf(name string, calls, msgs int) *seenTexts {
	seen := x.seen[name]
	if seen == nil {
		seen = &seenTexts{}
		x.seen[name] = seen
	}
	seen.outputs = resize(seen.outputs, calls)
	seen.contents = resize(seen.contents, msgs)
	return seen
}

func resize(s []string, n int) []string {
	if n <= len(s) {
		return s[:n]
	}
	return append(s, make([]string, n-len(s))...)
}

// calls returns a copy of a step's tool calls with large outputs moved to files.
func (x *externalizer) calls(step string, calls []state.ToolCallRecord, seen []string) []state.ToolCallRecord {
	out := make([]state.ToolCallRecord, len(calls))
	names := callNames(calls)
	for i, c := range calls {
		out[i] = c
		if c.Result == nil || !x.resultNeedsCopy(c.Result, seen, i) {
			continue
		}
		rc := *c.Result
		rc.Output, rc.OutputFile, rc.OutputSize = x.content(callKey(step, names[i]), rc.Output)
		out[i].Result = &rc
	}
	return out
}

// messages returns a copy of a conversation's messages with large contents moved to files.
func (x *externalizer) messages(step string, msgs []state.Message, seen []string) []state.Message {
	out := make([]state.Message, len(msgs))
	for i, m := range msgs {
		if x.messageNeedsCopy(&m, seen, i) {
			m.Content, m.ContentFile, m.ContentSize = x.content(messageKey(step, i), m.Content)
		}
		out[i] = m
	}
	return out
}

// content returns what a record holds in the state file for a text: the text itself, or, if
// it is large, no text and the file that holds it under key with its size.
func (x *externalizer) content(key, text string) (string, string, int64) {
	if !x.large(text) {
		return text, "", 0
	}
	return "", x.blob(key, text), int64(len(text))
}

// callsNeedCopy and messagesNeedCopy report whether a step's list differs in the file: a
// large text, or OutputFile and ContentFile fields (owned by the store) to clear.
func (x *externalizer) callsNeedCopy(calls []state.ToolCallRecord, seen []string) bool {
	for i, c := range calls {
		if c.Result != nil && x.resultNeedsCopy(c.Result, seen, i) {
			return true
		}
	}
	return false
}

func (x *externalizer) resultNeedsCopy(r *state.ToolCallResult, seen []string, i int) bool {
	return !x.stays(seen, i, r.Output) || r.OutputFile != "" || r.OutputSize != 0
}

func (x *externalizer) messagesNeedCopy(msgs []state.Message, seen []string) bool {
	for i := range msgs {
		if x.messageNeedsCopy(&msgs[i], seen, i) {
			return true
		}
	}
	return false
}

func (x *externalizer) messageNeedsCopy(m *state.Message, seen []string, i int) bool {
	return !x.stays(seen, i, m.Content) || m.ContentFile != "" || m.ContentSize != 0
}

// blob returns the file that holds content under key, scheduling a write unless the last
// commit wrote the same content.
func (x *externalizer) blob(key, content string) string {
	prev, ok := x.old[key]
	if ok && prev.same(content) {
		x.next[key] = prev
		return prev.file
	}
	name := key
	if ok && prev.file == x.runID+"/"+key {
		name = key + altSuffix
	}
	b := blob{file: x.runID + "/" + name, content: content}
	x.next[key] = b
	x.writes = append(x.writes, pendingWrite{name: name, content: content})
	return b.file
}

// stepKey, callKey and messageKey name the files of large outputs and message contents. Name
// components are escaped, so a "." separates them unambiguously, and the extensions keep
// messages apart from tool calls whatever their ids.
func stepKey(step string) string { return component(step) + outputExt }

func callKey(step, call string) string { return component(step) + "." + call + outputExt }

func messageKey(step string, i int) string {
	return component(step) + ".message-" + strconv.Itoa(i) + contentExt
}

// callNames gives each tool call of a step a distinct file name component: its escaped id,
// with "~<index>" added when the id is empty or repeated.
func callNames(calls []state.ToolCallRecord) []string {
	names := make([]string, len(calls))
	used := make(map[string]bool, len(calls))
	for i, c := range calls {
		n := component(c.ID)
		if c.ID == "" || used[n] {
			n += "~" + strconv.Itoa(i)
		}
		used[n] = true
		names[i] = n
	}
	return names
}

// component escapes s for use in a file name: bytes other than ASCII letters, digits, '_' and
// '-' become %XX, and a long result is cut and made unique with a hash.
func component(s string) string {
	if s == "" {
		return "%"
	}
	var b strings.Builder
	for i := range len(s) {
		c := s[i]
		if safeByte(c) {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	out := b.String()
	if len(out) > maxNameLen {
		sum := sumString(s)
		out = out[:maxNameLen-17] + "~" + hex.EncodeToString(sum[:8])
	}
	return out
}

// safeByte reports whether c can appear in a file name as it is: an ASCII letter or digit,
// '_' or '-'.
func safeByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// restorer reads large outputs back into a loaded run and records them as committed.
type restorer struct {
	dir   string
	runID string
	blobs map[string]blob
}

func (r *restorer) run(rs *state.RunState) error {
	for name, st := range rs.States {
		if st == nil {
			continue
		}
		if err := r.output(stepKey(name), &st.Output, &st.OutputFile, &st.OutputSize); err != nil {
			return fmt.Errorf("output of step %q: %w", name, err)
		}
		names := callNames(st.ToolCalls)
		for i, c := range st.ToolCalls {
			if c.Result == nil {
				continue
			}
			res := c.Result
			if err := r.output(callKey(name, names[i]), &res.Output, &res.OutputFile, &res.OutputSize); err != nil {
				return fmt.Errorf("output of step %q tool call %q: %w", name, c.ID, err)
			}
		}
		if st.Conversation == nil {
			continue
		}
		for i := range st.Conversation.Messages {
			m := &st.Conversation.Messages[i]
			if err := r.output(messageKey(name, i), &m.Content, &m.ContentFile, &m.ContentSize); err != nil {
				return fmt.Errorf("content of step %q message %d: %w", name, i, err)
			}
		}
	}
	return nil
}

// output reads the file a record refers to into *out and clears the reference.
func (r *restorer) output(key string, out, file *string, size *int64) error {
	if *file == "" {
		*size = 0
		return nil
	}
	rel := *file
	if !filepath.IsLocal(filepath.FromSlash(rel)) || !strings.HasPrefix(path.Clean(rel), r.runID+"/") {
		return fmt.Errorf("output file %q is outside the run's directory", rel)
	}
	p := filepath.Join(r.dir, filepath.FromSlash(rel))
	data, err := regfile.ReadFile(p)
	if err != nil {
		return err
	}
	if int64(len(data)) != *size {
		return fmt.Errorf("%s holds %d bytes, the state file says %d", p, len(data), *size)
	}
	*out = string(data)
	r.blobs[key] = blob{file: rel, content: *out}
	*file, *size = "", 0
	return nil
}
