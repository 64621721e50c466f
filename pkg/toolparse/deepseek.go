package toolparse

import (
	"errors"
	"fmt"
	"strings"
)

// DeepSeek's special tokens, spelled with U+FF5C (fullwidth bar) and U+2581 (lower block).
const (
	dsCallsBegin = "<｜tool▁calls▁begin｜>"
	dsCallsEnd   = "<｜tool▁calls▁end｜>"
	dsCallBegin  = "<｜tool▁call▁begin｜>"
	dsCallEnd    = "<｜tool▁call▁end｜>"
	dsSep        = "<｜tool▁sep｜>"
)

// deepseekBlock matches <｜tool▁calls▁begin｜> followed by calls and <｜tool▁calls▁end｜>.
// The end token may be missing at the end of the output when every call is complete.
func (s *scanner) deepseekBlock(i int) (match, error) {
	var calls []Call
	k := skipSpace(s.text, i+len(dsCallsBegin))
	for strings.HasPrefix(s.text[k:], dsCallBegin) {
		end, c, err := s.deepseekCall(k)
		if err != nil {
			return fail("DeepSeek tool calls", i, err)
		}
		calls, k = append(calls, c), skipSpace(s.text, end)
	}
	end, err := s.deepseekEnd(k, len(calls))
	if err == nil {
		err = s.checkNames(calls)
	}
	if err != nil {
		return fail("DeepSeek tool calls", i, err)
	}
	return match{end: end, calls: calls, call: true}, nil
}

// deepseekEnd expects the end of a block of n calls at k.
func (s *scanner) deepseekEnd(k, n int) (int, error) {
	switch rest := s.text[k:]; {
	case n == 0:
		return 0, errors.New("no call in the block")
	case strings.HasPrefix(rest, dsCallsEnd):
		return k + len(dsCallsEnd), nil
	case onlyEnd(rest):
		return k, nil
	default:
		return 0, fmt.Errorf("unexpected %s in the block", snippet(rest))
	}
}

// deepseekSingle matches a <｜tool▁call▁begin｜> call outside a calls block.
func (s *scanner) deepseekSingle(i int) (match, error) {
	end, c, err := s.deepseekCall(i)
	if err == nil {
		err = s.checkNames([]Call{c})
	}
	if err != nil {
		return fail("DeepSeek tool call", i, err)
	}
	return match{end: end, calls: []Call{c}, call: true}, nil
}

// deepseekCall reads one call at k: V3's
// <｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json\n{...}\n```<｜tool▁call▁end｜>
// or V3.1's <｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{...}<｜tool▁call▁end｜>.
func (s *scanner) deepseekCall(k int) (int, Call, error) {
	j := k + len(dsCallBegin)
	sep := strings.Index(s.text[j:], dsSep)
	if sep < 0 {
		return 0, Call{}, unexpectedIn(s.text[j:], dsCallBegin+" (no "+dsSep+")")
	}
	head := strings.TrimSpace(s.text[j : j+sep])
	j += sep + len(dsSep)
	name, j, fenced := head, skipSpace(s.text, j), false
	if head == "function" && !strings.HasPrefix(s.text[j:], "{") {
		e := lineEnd(s.text, j)
		name, j = strings.TrimSpace(s.text[j:e]), skipSpace(s.text, e)
		if fenced = strings.HasPrefix(s.text[j:], "```"); fenced {
			j = skipSpace(s.text, lineEnd(s.text, j))
		}
	}
	if name == "" || strings.ContainsAny(name, "<>{}\n") {
		return 0, Call{}, fmt.Errorf("bad tool name %s", snippet(name))
	}
	end, args, err := s.deepseekArgs(j, fenced)
	if err != nil {
		return 0, Call{}, fmt.Errorf("tool %q: %w", name, err)
	}
	return end, Call{Name: name, Arguments: args}, nil
}

// deepseekArgs reads the arguments object at j, its closing fence when fenced, and the call's
// end token.
func (s *scanner) deepseekArgs(j int, fenced bool) (int, []byte, error) {
	if j >= len(s.text) || s.text[j] != '{' {
		return 0, nil, expected(s.text[j:], "a JSON object of arguments")
	}
	end, args, err := jsonArgs(s.text, j)
	if err != nil {
		return 0, nil, err
	}
	if fenced {
		if end, err = s.closeWrap(end, "```", false); err != nil {
			return 0, nil, err
		}
	}
	end, err = s.closeWrap(end, dsCallEnd, false)
	return end, args, err
}
