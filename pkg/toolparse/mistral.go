package toolparse

import (
	"fmt"
	"strings"
)

const (
	mistralMarker = "[TOOL_CALLS]"
	mistralArgs   = "[ARGS]"
	mistralCallID = "[CALL_ID]"
)

// mistral matches [TOOL_CALLS] followed by a JSON array (or object) of calls, or by one or more
// calls of the tokenizer forms name{json}, name[ARGS]{json} and name[CALL_ID]id[ARGS]{json}.
// A later [TOOL_CALLS] starts a new match, and the separators between them are dropped.
func (s *scanner) mistral(i int) (match, error) {
	k := skipSpace(s.text, i+len(mistralMarker))
	end, calls, err := s.mistralBody(k)
	if err == nil {
		err = s.checkNames(calls)
	}
	if err != nil {
		return fail(mistralMarker, i, err)
	}
	return match{end: end, calls: calls, call: true}, nil
}

func (s *scanner) mistralBody(k int) (int, []Call, error) {
	if k < len(s.text) && (s.text[k] == '[' || s.text[k] == '{') {
		raw, end, err := decodeJSON(s.text, k)
		if err != nil {
			return 0, nil, err
		}
		calls, err := callsFromJSON(raw, true)
		return end, calls, err
	}
	var calls []Call
	for {
		end, c, err := s.mistralCall(k)
		if err != nil {
			return 0, nil, err
		}
		calls = append(calls, c)
		if k = skipSeps(s.text, end); !startsMistralCall(s.text, k) {
			return end, calls, nil
		}
	}
}

// startsMistralCall reports whether a name followed by [ARGS], [CALL_ID] or '{' is at k, so a
// call may follow the previous one without its own [TOOL_CALLS].
func startsMistralCall(src string, k int) bool {
	e := k + identLen(src[k:], true)
	if e == k {
		return false
	}
	rest := src[e:]
	return strings.HasPrefix(rest, mistralArgs) || strings.HasPrefix(rest, mistralCallID) ||
		strings.HasPrefix(rest, "{")
}

// mistralCall reads name{json}, name[ARGS]{json} or name[CALL_ID]id[ARGS]{json} at k.
func (s *scanner) mistralCall(k int) (int, Call, error) {
	n := identLen(s.text[k:], true)
	if n == 0 {
		return 0, Call{}, expected(s.text[k:], "a tool name")
	}
	c := Call{Name: s.text[k : k+n]}
	j := k + n
	if strings.HasPrefix(s.text[j:], mistralCallID) {
		j += len(mistralCallID)
		e := strings.Index(s.text[j:], mistralArgs)
		if e < 0 {
			return 0, Call{}, fmt.Errorf("tool %q: [CALL_ID] without [ARGS]", c.Name)
		}
		c.ID = strings.TrimSpace(s.text[j : j+e])
		if c.ID == "" || strings.ContainsAny(c.ID, "[]{} \t\n") {
			return 0, Call{}, fmt.Errorf("tool %q: bad call id %s", c.Name, snippet(s.text[j:j+e]))
		}
		j += e
	}
	if strings.HasPrefix(s.text[j:], mistralArgs) {
		j = skipSpace(s.text, j+len(mistralArgs))
	}
	if j >= len(s.text) || s.text[j] != '{' {
		return 0, Call{}, fmt.Errorf("tool %q: %w", c.Name, expected(s.text[j:], "a JSON object of arguments"))
	}
	end, args, err := jsonArgs(s.text, j)
	if err != nil {
		return 0, Call{}, fmt.Errorf("tool %q: %w", c.Name, err)
	}
	c.Arguments = args
	return end, c, nil
}

// identLen returns the length of the tool name at the start of s: a letter or '_' followed by
// letters, digits, '_' and, when loose, '-' and '.', which tool names (unlike Python's) may hold.
func identLen(s string, loose bool) int {
	n := 0
	for n < len(s) {
		c := s[n]
		ok := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(n > 0 && c >= '0' && c <= '9') || (n > 0 && loose && (c == '-' || c == '.'))
		if !ok {
			break
		}
		n++
	}
	return n
}
