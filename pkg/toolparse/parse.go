// Package toolparse finds the tool calls that models and CLI agents without native tool calling
// write into their text, and splits that text into calls, prose and reasoning. It follows a
// written policy: it never repairs a malformed call but reports it, so the caller can tell the
// model and let it retry; it does no I/O and uses only the standard library.
package toolparse

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Call is one tool call found in the text.
type Call struct {
	// ID is the call's id as the text gives it (an OpenAI "id", a Mistral [CALL_ID]) or, when
	// the text has none, "call_N" with N the call's 1-based position among the calls, so the
	// same text always yields the same ids.
	ID string `json:"id"`
	// Name is the tool's name; it is never empty.
	Name string `json:"name"`
	// Arguments is always a compact JSON object. Number text is kept exactly as written
	// (12345678901234567890 and 1e400 survive), because a float64 round trip loses digits.
	Arguments json.RawMessage `json:"arguments"`
}

// Options tell Parse which tools exist. The zero value allows any tool name and types every
// XML value as a string.
type Options struct {
	// Tools lists the allowed tool names; when empty every name is allowed. JSON and pythonic
	// calls written without a marker count as calls only when their names are allowed, since
	// otherwise they may be data the model was asked to write; after a marker an unknown name
	// is an error.
	Tools []string
	// Schemas maps a tool name to the JSON schema of its parameters ({"type":"object",
	// "properties":{...}}). XML forms carry only text, so a value becomes an integer, number,
	// boolean, null, array or object only where the schema says so; JSON forms ignore it.
	Schemas map[string]json.RawMessage
}

// Result is what Parse found in the text.
type Result struct {
	// Calls are the calls in the order they appear; nil when there are none.
	Calls []Call `json:"calls"`
	// Content is the text that is not a call or reasoning, trimmed, without end tokens such as
	// <|eot_id|>; a person or the next turn of the conversation reads it.
	Content string `json:"content"`
	// Reasoning is the inner text of a leading <think>...</think> or [THINK]...[/THINK] block,
	// trimmed. Calls written inside it are not calls: the model was still thinking.
	Reasoning string `json:"reasoning"`
}

// Parse splits text into calls, content and reasoning. It is safe for concurrent use and never
// panics.
//
// It recognises OpenAI-style JSON calls and envelopes, DeepSeek's marker tokens, Claude's
// <function_calls> XML and the XML of Qwen3-Coder, MiniMax and GLM, Hermes <tool_call> and its
// relatives, Mistral's [TOOL_CALLS] forms, Llama's <|python_tag|>, pythonic call lists (bare or
// in <|python_start|> or <|tool_call_start|>) and JSON calls in json, tool_call or unlabelled
// markdown fences. Inline code, fences in other languages and a leading reasoning block never
// hold calls; end tokens such as <|eot_id|> are dropped.
//
// JSON or a pythonic list without a marker is a call only when it names allowed tools;
// otherwise it is prose. Parse returns an error when the text holds a malformed call: one after
// an explicit marker, or one that the output starts with (or that directly follows a call) and
// that names an allowed tool. Malformed means invalid or truncated JSON, arguments that are not
// an object, a missing name, an unknown tool after a marker, positional pythonic arguments,
// unclosed XML, or an XML value that does not fit its schema type. Nothing is repaired, so the
// model can be told and retry; the only leniencies are "parameters" for "arguments", a missing
// "arguments" after a marker (meaning {}), and a missing closing tag at the very end of the
// output after a complete JSON or pythonic payload. One bad call makes the whole output an
// error, and the Result is then the zero value.
func Parse(text string, opts Options) (Result, error) {
	reasoning, start := leadingReasoning(text)
	s := newScanner(text, opts, start)
	if err := s.scan(); err != nil {
		return Result{}, err
	}
	s.write(text[s.prose:])
	return Result{
		Calls:     assignIDs(s.calls),
		Content:   strings.TrimSpace(s.content.String()),
		Reasoning: reasoning,
	}, nil
}

// scanner walks the text once, left to right, trying each form where its first byte can start.
type scanner struct {
	text    string
	opts    Options
	allowed map[string]bool
	props   map[string]map[string]json.RawMessage // parsed Schemas, by tool
	first   int                                   // first non-space byte after the reasoning
	calls   []Call
	content strings.Builder
	prose   int          // start of the text not yet written to content
	hadCall bool         // a call ends at prose
	dead    map[int]bool // offsets of JSON openers known not to parse; see markDead
}

// match is what one form found at an offset. end <= the offset means nothing matched.
type match struct {
	end   int    // offset after the matched text
	calls []Call // the calls, when call is set
	call  bool   // the text is a call; otherwise it is prose the scanner skips whole
}

func newScanner(text string, opts Options, start int) *scanner {
	allowed := make(map[string]bool, len(opts.Tools))
	for _, t := range opts.Tools {
		allowed[t] = true
	}
	return &scanner{text: text, opts: opts, allowed: allowed, first: skipSpace(text, start), prose: start}
}

func (s *scanner) scan() error {
	for i := s.prose; i < len(s.text); {
		j := strings.IndexAny(s.text[i:], "<[{`~")
		if j < 0 {
			return nil
		}
		i += j
		m, err := s.match(i)
		if err != nil {
			return err
		}
		if m.call {
			s.emit(i, m)
		}
		i = max(m.end, i+1)
	}
	return nil
}

// match dispatches on the byte at i to the forms that can start there.
func (s *scanner) match(i int) (match, error) {
	switch s.text[i] {
	case '<':
		return s.tag(i)
	case '[':
		if strings.HasPrefix(s.text[i:], mistralMarker) {
			return s.mistral(i)
		}
		return s.unmarkedList(i)
	case '{':
		return s.unmarkedJSON(i)
	}
	return s.fenceOrCode(i)
}

// tag matches the forms introduced by a tag or special token.
func (s *scanner) tag(i int) (match, error) {
	rest := s.text[i:]
	switch {
	case strings.HasPrefix(rest, "<tool_call>"):
		return s.hermes(i)
	case strings.HasPrefix(rest, "<function_call>"):
		return s.wrappedJSON(i, "<function_call>", "</function_call>")
	case strings.HasPrefix(rest, "<function_calls>"):
		return s.invokes(i, "<function_calls>", "</function_calls>")
	case strings.HasPrefix(rest, "<"+antml+"function_calls>"):
		return s.invokes(i, "<"+antml+"function_calls>", "</"+antml+"function_calls>")
	case strings.HasPrefix(rest, "<minimax:tool_call>"):
		return s.invokes(i, "<minimax:tool_call>", "</minimax:tool_call>")
	case strings.HasPrefix(rest, "<function="), strings.HasPrefix(rest, "<function name="):
		return s.functionTag(i)
	case strings.HasPrefix(rest, pythonTag):
		return s.pythonTag(i)
	case strings.HasPrefix(rest, "<|python_start|>"):
		return s.pyWrapped(i, "<|python_start|>", "<|python_end|>")
	case strings.HasPrefix(rest, "<|tool_call_start|>"):
		return s.pyWrapped(i, "<|tool_call_start|>", "<|tool_call_end|>")
	case strings.HasPrefix(rest, dsCallsBegin):
		return s.deepseekBlock(i)
	case strings.HasPrefix(rest, dsCallBegin):
		return s.deepseekSingle(i)
	}
	return match{}, nil
}

// emit records a call match at i. Separators between adjacent calls belong to the calls; any
// other text before the call is content.
func (s *scanner) emit(i int, m match) {
	if gap := s.text[s.prose:i]; !s.hadCall || !onlySeps(gap) {
		s.write(gap)
	}
	s.calls = append(s.calls, m.calls...)
	s.prose, s.hadCall = m.end, true
}

// write appends prose to the content, dropping end tokens.
func (s *scanner) write(prose string) {
	for _, t := range endTokens {
		prose = strings.ReplaceAll(prose, t, "")
	}
	s.content.WriteString(prose)
}

// strict reports whether an unmarked call at i must parse: the output starts there, or it
// directly follows a call.
func (s *scanner) strict(i int) bool {
	return i == s.first || (s.hadCall && onlySeps(s.text[s.prose:i]))
}

// allowedName reports whether name is one of Options.Tools, or any name when Tools is empty.
func (s *scanner) allowedName(name string) bool {
	return len(s.opts.Tools) == 0 || s.allowed[name]
}

func (s *scanner) allAllowed(calls []Call) bool {
	for _, c := range calls {
		if !s.allowedName(c.Name) {
			return false
		}
	}
	return true
}

// checkNames fails on the first call to a tool that is not allowed; it is used after markers.
func (s *scanner) checkNames(calls []Call) error {
	for _, c := range calls {
		if !s.allowedName(c.Name) {
			return fmt.Errorf("unknown tool %q (allowed: %s)", c.Name, strings.Join(s.opts.Tools, ", "))
		}
	}
	return nil
}

// parseError is a malformed call: the form, where it starts, and what is wrong.
type parseError struct {
	form   string
	offset int
	err    error
}

func (e *parseError) Error() string {
	return fmt.Sprintf("toolparse: %s at offset %d: %v", e.form, e.offset, e.err)
}

func (e *parseError) Unwrap() error { return e.err }

func fail(form string, offset int, err error) (match, error) {
	return match{}, &parseError{form: form, offset: offset, err: err}
}

// leadingReasoning returns the trimmed inner text of a reasoning block that opens the text and
// the offset after it. An unclosed block runs to the end: the model never finished thinking.
func leadingReasoning(text string) (string, int) {
	k := skipSpace(text, 0)
	for _, p := range [][2]string{{"<think>", "</think>"}, {"[THINK]", "[/THINK]"}} {
		if !strings.HasPrefix(text[k:], p[0]) {
			continue
		}
		body := k + len(p[0])
		e := strings.Index(text[body:], p[1])
		if e < 0 {
			return strings.TrimSpace(text[body:]), len(text)
		}
		return strings.TrimSpace(text[body : body+e]), body + e + len(p[1])
	}
	return "", 0
}

// assignIDs gives "call_N" to calls without an id, N being the call's position, skipping ids
// the text already used.
func assignIDs(calls []Call) []Call {
	taken := make(map[string]bool, len(calls))
	for _, c := range calls {
		taken[c.ID] = true
	}
	n := 0
	for i := range calls {
		if calls[i].ID != "" {
			continue
		}
		n = max(n, i)
		for n++; taken["call_"+strconv.Itoa(n)]; n++ {
		}
		calls[i].ID = "call_" + strconv.Itoa(n)
		taken[calls[i].ID] = true
	}
	return calls
}

// endTokens end a turn or a message; they are never content.
var endTokens = []string{
	"<|eot_id|>", "<|eom_id|>", "<|im_end|>", "</s>", "<|end|>", "<|endoftext|>",
	"<|end_of_text|>", "<end_of_turn>", "<｜end▁of▁sentence｜>",
}

// endTokenAt returns the length of the end token at s[i:], or 0.
func endTokenAt(s string, i int) int {
	if s[i] != '<' {
		return 0
	}
	for _, t := range endTokens {
		if strings.HasPrefix(s[i:], t) {
			return len(t)
		}
	}
	return 0
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// skipSpace returns the offset of the first non-space byte at or after i.
func skipSpace(s string, i int) int {
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	return i
}

// skipSeps returns the offset of the first byte at or after i that is not space, ';', ',' or
// part of an end token.
func skipSeps(s string, i int) int {
	for i < len(s) {
		switch {
		case isSpace(s[i]) || s[i] == ';' || s[i] == ',':
			i++
		case endTokenAt(s, i) > 0:
			i += endTokenAt(s, i)
		default:
			return i
		}
	}
	return i
}

// onlySeps reports whether s holds only separators between calls.
func onlySeps(s string) bool { return skipSeps(s, 0) == len(s) }

// onlyEnd reports whether s holds only space and end tokens: the output ends there.
func onlyEnd(s string) bool {
	for i := 0; i < len(s); {
		switch n := endTokenAt(s, i); {
		case isSpace(s[i]):
			i++
		case n > 0:
			i += n
		default:
			return false
		}
	}
	return true
}

// closeWrap finishes a wrapped form whose calls end at end: it expects the closing tag after
// optional space, or, when lenient, accepts the end of the output instead.
func (s *scanner) closeWrap(end int, closing string, lenient bool) (int, error) {
	k := skipSpace(s.text, end)
	switch {
	case strings.HasPrefix(s.text[k:], closing):
		return k + len(closing), nil
	case lenient && onlyEnd(s.text[k:]):
		return end, nil
	case onlyEnd(s.text[k:]):
		return 0, fmt.Errorf("missing %s (truncated output?)", closing)
	}
	return 0, fmt.Errorf("unexpected %s before %s", snippet(s.text[k:]), closing)
}

// snippet quotes the start of s for an error message.
func snippet(s string) string {
	const n = 24
	if len(s) > n {
		return strconv.Quote(s[:n]) + "..."
	}
	return strconv.Quote(s)
}

// expected reports that rest does not start with what, or that the output ended before it.
func expected(rest, what string) error {
	if onlyEnd(rest) {
		return fmt.Errorf("expected %s, found the end of the output (truncated?)", what)
	}
	return fmt.Errorf("expected %s, got %s", what, snippet(rest))
}
