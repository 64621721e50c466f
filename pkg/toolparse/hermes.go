package toolparse

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// hermes matches <tool_call>...</tool_call>. Hermes and Qwen put JSON calls in it, Qwen3-Coder
// <function=...> elements, and GLM a tool name followed by <arg_key>/<arg_value> pairs.
func (s *scanner) hermes(i int) (match, error) {
	const open, closing = "<tool_call>", "</tool_call>"
	end, calls, lenient, err := s.hermesBody(skipSpace(s.text, i+len(open)))
	if err == nil {
		end, err = s.closeWrap(end, closing, lenient)
	}
	if err == nil {
		err = s.checkNames(calls)
	}
	if err != nil {
		return fail(open, i, err)
	}
	return match{end: end, calls: calls, call: true}, nil
}

// hermesBody reads the calls inside <tool_call> at k. lenient says the body is complete by
// itself, so a missing closing tag at the end of the output is not a truncation.
func (s *scanner) hermesBody(k int) (end int, calls []Call, lenient bool, err error) {
	rest := s.text[k:]
	switch {
	case rest != "" && (rest[0] == '{' || rest[0] == '['):
		end, calls, err = jsonSeq(s.text, k, true)
		return end, calls, true, err
	case startsFunction(rest):
		end, calls, err = s.functions(k)
		return end, calls, true, err
	}
	end, c, err := s.glm(k)
	return end, []Call{c}, false, err
}

// functions reads adjacent <function ...> elements at k.
func (s *scanner) functions(k int) (int, []Call, error) {
	var calls []Call
	for {
		end, c, err := s.function(k)
		if err != nil {
			return 0, nil, err
		}
		calls = append(calls, c)
		k = skipSpace(s.text, end)
		if !startsFunction(s.text[k:]) {
			return end, calls, nil
		}
	}
}

// startsFunction reports whether rest opens a <function=x> or <function name="x"> element.
func startsFunction(rest string) bool {
	return strings.HasPrefix(rest, "<function=") || strings.HasPrefix(rest, "<function name=")
}

// functionTag matches a <function=x> or <function name="x"> element outside <tool_call>, as
// Llama 3.1's custom tool format and Qwen3-Coder write it.
func (s *scanner) functionTag(i int) (match, error) {
	end, c, err := s.function(i)
	if err == nil {
		err = s.checkNames([]Call{c})
	}
	if err != nil {
		return fail("<function>", i, err)
	}
	return match{end: end, calls: []Call{c}, call: true}, nil
}

// function reads <function=x>{json}</function>, <function name="x">{json}</function> or
// <function=x><parameter=p>v</parameter></function> at k.
func (s *scanner) function(k int) (int, Call, error) {
	name, j, err := functionOpen(s.text, k)
	if err != nil {
		return 0, Call{}, err
	}
	if j = skipSpace(s.text, j); j < len(s.text) && s.text[j] == '{' {
		end, args, err := jsonArgs(s.text, j)
		if err == nil {
			end, err = s.closeWrap(end, "</function>", true)
		}
		return end, Call{Name: name, Arguments: args}, err
	}
	params, end, err := qwenParams(s.text, j)
	if err != nil {
		return 0, Call{}, fmt.Errorf("<function=%s>: %w", name, err)
	}
	args, err := s.xmlArgs(name, params)
	return end, Call{Name: name, Arguments: args}, err
}

// functionOpen reads the opening tag <function=x> or <function name="x"> at k and returns the
// name and the offset after the tag.
func functionOpen(src string, k int) (string, int, error) {
	if !strings.HasPrefix(src[k:], "<function=") {
		return nameAttr(src, k+len("<function"))
	}
	j := k + len("<function=")
	gt := strings.IndexByte(src[j:], '>')
	if gt < 0 {
		return "", 0, errors.New("unclosed <function= tag")
	}
	name := strings.TrimSpace(src[j : j+gt])
	if name == "" || strings.ContainsAny(name, "<\n") {
		return "", 0, fmt.Errorf("bad function name %s", snippet(name))
	}
	return name, j + gt + 1, nil
}

// glm reads GLM's body at k: a tool name, then <arg_key>/<arg_value> pairs or a JSON object.
func (s *scanner) glm(k int) (int, Call, error) {
	e := k
	for e < len(s.text) && !strings.ContainsRune("<{\n", rune(s.text[e])) {
		e++
	}
	name := strings.TrimSpace(s.text[k:e])
	if !toolName(name) {
		return 0, Call{}, fmt.Errorf("expected a JSON call, <function=...> or a tool name, got %s", snippet(s.text[k:]))
	}
	if j := skipSpace(s.text, e); j < len(s.text) && s.text[j] == '{' {
		end, args, err := jsonArgs(s.text, j)
		return end, Call{Name: name, Arguments: args}, err
	}
	params, end, err := glmParams(s.text, e)
	if err != nil {
		return 0, Call{}, err
	}
	args, err := s.xmlArgs(name, params)
	return end, Call{Name: name, Arguments: args}, err
}

// jsonArgs reads a JSON arguments object at src[j] and returns the offset after it.
func jsonArgs(src string, j int) (int, []byte, error) {
	raw, end, err := decodeJSON(src, j)
	if err != nil {
		return 0, nil, err
	}
	args, err := compactObject(raw)
	return end, args, err
}

// toolName reports whether a bare word can be a tool name: letters, digits and _ - . : / @.
// It keeps GLM's form from taking a fence or a sentence for a name.
func toolName(name string) bool {
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("_-.:/@", r) {
			return false
		}
	}
	return name != ""
}
