package toolparse

import (
	"errors"
	"strings"
)

// fence is a markdown code block opened by ``` or ~~~ at the start of a line.
type fence struct {
	label     string // lower-cased first word of the info string
	bodyStart int
	bodyEnd   int
	end       int // after the closing fence, or the end of the text when it is unclosed
}

// fenceOrCode matches a fenced block or skips an inline code span, which never holds a call.
func (s *scanner) fenceOrCode(i int) (match, error) {
	if f, ok := openFence(s.text, i); ok {
		return s.fence(i, f)
	}
	if s.text[i] == '`' {
		return match{end: codeSpanEnd(s.text, i)}, nil
	}
	return match{}, nil
}

// fence reads the calls of a fenced block. A block labelled tool_call is a marker; one labelled
// json, or unlabelled, is a call only if it holds nothing but calls to allowed tools; any other
// language is prose.
func (s *scanner) fence(i int, f fence) (match, error) {
	switch f.label {
	case "tool_call", "tool_calls":
		calls, err := s.fenceCalls(f, true)
		if err == nil {
			err = s.checkNames(calls)
		}
		if err != nil {
			return fail("```"+f.label+" block", i, err)
		}
		return match{end: f.end, calls: calls, call: true}, nil
	case "json", "":
		calls, err := s.fenceCalls(f, false)
		switch {
		case err == nil && s.allAllowed(calls):
			return match{end: f.end, calls: calls, call: true}, nil
		case err != nil && s.strict(i) && s.looksLikeCall(s.text[f.bodyStart:f.bodyEnd]):
			return fail("```"+f.label+" block", i, err)
		}
	}
	return match{end: f.end}, nil
}

// fenceCalls reads a fenced block's body, which must hold only JSON calls and separators.
func (s *scanner) fenceCalls(f fence, marked bool) ([]Call, error) {
	src := s.text[:f.bodyEnd]
	k := skipSpace(src, f.bodyStart)
	if k >= len(src) || (src[k] != '{' && src[k] != '[') {
		return nil, errors.New("expected a JSON call")
	}
	end, calls, err := jsonSeq(src, k, marked)
	if err != nil {
		return nil, err
	}
	if rest := src[skipSeps(src, end):]; rest != "" {
		return nil, errors.New("unexpected " + snippet(rest) + " after the calls")
	}
	return calls, nil
}

// openFence reads the opening line of a fence at i: three or more backticks or tildes, only
// indentation before them on the line, and an info string.
func openFence(text string, i int) (fence, bool) {
	c := text[i]
	n := runLen(text[i:], c)
	if n < 3 || !lineStart(text, i) {
		return fence{}, false
	}
	infoEnd := lineEnd(text, i)
	info := strings.TrimSpace(text[i+n : infoEnd])
	if c == '`' && strings.Contains(info, "`") {
		return fence{}, false
	}
	f := fence{bodyStart: min(infoEnd+1, len(text)), bodyEnd: len(text), end: len(text)}
	if fields := strings.Fields(info); len(fields) > 0 {
		f.label = strings.ToLower(fields[0])
	}
	for pos := f.bodyStart; pos < len(text); pos = lineEnd(text, pos) + 1 {
		line := strings.TrimLeft(text[pos:lineEnd(text, pos)], " \t")
		if m := runLen(line, c); m >= n && strings.TrimSpace(line[m:]) == "" {
			f.bodyEnd, f.end = pos, lineEnd(text, pos)
			break
		}
	}
	return f, true
}

// lineStart reports whether only spaces and tabs precede i on its line.
func lineStart(text string, i int) bool {
	j := i
	for j > 0 && (text[j-1] == ' ' || text[j-1] == '\t') {
		j--
	}
	return j == 0 || text[j-1] == '\n'
}

// lineEnd returns the offset of the newline ending the line at i, or the end of the text.
func lineEnd(text string, i int) int {
	if e := strings.IndexByte(text[i:], '\n'); e >= 0 {
		return i + e
	}
	return len(text)
}

// runLen returns how many times c repeats at the start of s.
func runLen(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// codeSpanEnd returns the offset after the inline code span opened by the backticks at i, or
// after the backticks when no run of the same length closes them.
func codeSpanEnd(text string, i int) int {
	n := runLen(text[i:], '`')
	for j := i + n; j < len(text); {
		k := strings.IndexByte(text[j:], '`')
		if k < 0 {
			break
		}
		j += k
		m := runLen(text[j:], '`')
		if m == n {
			return j + m
		}
		j += m
	}
	return i + n
}
