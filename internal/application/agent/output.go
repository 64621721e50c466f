package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/state"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// output returns the step's output and structured response once the model has answered. With
// output_format: json the answer must parse (code fences stripped) and conform to
// output_schema; the first time it does not, the model is told why and asked once more
// (again is true), the second time the step fails.
func (l *loop) output() (out string, resp any, again bool, err error) {
	if l.a.OutputFormat != "json" {
		return l.content, nil, false, nil
	}
	text, v, problem, err := l.parseJSON(l.content)
	if err != nil {
		return "", nil, false, err
	}
	if problem == "" {
		return text, convertNumbers(v), false, nil
	}
	if l.corrected {
		return "", nil, false, fault.New(fault.Execution,
			"output_format json: the reply does not conform after one correction: %s", problem)
	}
	l.corrected, l.lastOnly = true, true
	l.warn("output_format json: asking the model to correct its reply: " + problem)
	msg := "Your reply cannot be used: " + problem + ". Reply again with only the JSON value."
	if len(l.a.OutputSchema) > 0 {
		msg += " It must conform to the JSON Schema given in the instructions."
	}
	l.append(state.Message{Role: "user", Content: msg})
	return "", nil, true, nil
}

// parseJSON reads the reply as one JSON value and validates it. problem says, in words for
// the model, why the reply does not do; err is a fault in the step itself (a schema that does
// not compile).
func (l *loop) parseJSON(content string) (text string, v any, problem string, err error) {
	text = stripFence(content)
	if text == "" {
		return "", nil, "it is empty, and a JSON value was expected", nil
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return text, nil, fmt.Sprintf("it is not valid JSON (%v)", err), nil
	}
	if dec.More() {
		return text, nil, "it holds more than one JSON value, or text after the JSON value", nil
	}
	if len(l.a.OutputSchema) == 0 {
		return text, v, "", nil
	}
	schema, err := json.Marshal(l.a.OutputSchema)
	if err != nil {
		return "", nil, "", fault.New(fault.Invalid, "output_schema: %w", err)
	}
	errs, err := l.x.d.Schemas.Validate(schema, v)
	if err != nil {
		return "", nil, "", fmt.Errorf("output_schema: %w", err)
	}
	if len(errs) > 0 {
		return text, nil, "it does not conform to the output schema: " + tool.FieldErrors(errs), nil
	}
	return text, v, "", nil
}

// stripFence returns the body of the first markdown code fence in s when s holds one (models
// often wrap JSON in ```json ... ```), else s trimmed.
func stripFence(s string) string {
	s = strings.TrimSpace(s)
	for _, fence := range []string{"```", "~~~"} {
		start := strings.Index(s, fence)
		if start < 0 {
			continue
		}
		rest := s[start+len(fence):]
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			continue
		}
		body := rest[nl+1:]
		end := strings.Index(body, fence)
		if end < 0 {
			continue
		}
		return strings.TrimSpace(body[:end])
	}
	return s
}
