package loader

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// structuredHint is the fix for a list or mapping input that structuredInput cannot take.
const structuredHint = `make each string either plain text or one whole {{ }} ("{{ inputs.a }}"), or build the value in one expression: '{{ [inputs.a, "b"] }}'`

// structuredInput turns a list or mapping given as a workflow step's input into the text the
// called workflow gets, which converts it by the input's declared type (an array or object
// input parses it; a string input keeps it): compact JSON when it holds no template, else one
// template whose expression builds the same value, so that every string that is a whole
// {{ }} gets its value (any type) and the result is JSON whatever the values hold (templates
// render lists and maps as compact JSON). A string mixing text and {{ }} is an error: spliced
// into JSON text its value could break the JSON.
func structuredInput(v any) (string, error) {
	expr, templated, err := exprLiteral(v)
	if err != nil {
		return "", err
	}
	if templated {
		return "{{ " + expr + " }}", nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("cannot be JSON: %w", err)
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// exprLiteral writes v as an expr-lang literal, a whole-template string as its expression;
// templated reports whether there was one.
func exprLiteral(v any) (expr string, templated bool, err error) {
	switch x := v.(type) {
	case nil:
		return "nil", false, nil
	case string:
		return stringLiteral(x)
	case bool:
		return strconv.FormatBool(x), false, nil
	case int64:
		return strconv.FormatInt(x, 10), false, nil
	case uint64:
		return strconv.FormatUint(x, 10), false, nil
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64), false, nil
	case []any:
		parts := make([]string, len(x))
		for i, item := range x {
			p, t, err := exprLiteral(item)
			if err != nil {
				return "", false, fmt.Errorf("item %d: %w", i, err)
			}
			parts[i], templated = p, templated || t
		}
		return "[" + strings.Join(parts, ", ") + "]", templated, nil
	case map[string]any:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if strings.Contains(k, "{{") {
				return "", false, fmt.Errorf("key %q: a key cannot be a template", k)
			}
			p, t, err := exprLiteral(x[k])
			if err != nil {
				return "", false, fmt.Errorf("key %q: %w", k, err)
			}
			parts = append(parts, strconv.Quote(k)+": "+p)
			templated = templated || t
		}
		return "{" + strings.Join(parts, ", ") + "}", templated, nil
	}
	return "", false, fmt.Errorf("a value of type %T cannot be an input", v)
}

// stringLiteral is a string as an expr literal, or the expression of a whole {{ }}.
func stringLiteral(s string) (string, bool, error) {
	if !strings.Contains(s, "{{") {
		return strconv.Quote(s), false, nil
	}
	inner, whole := strings.CutPrefix(strings.TrimSpace(s), "{{")
	inner, closed := strings.CutSuffix(inner, "}}")
	if !whole || !closed || strings.Contains(inner, "{{") {
		return "", false, fmt.Errorf("%q mixes text and {{ }} inside a list or mapping", s)
	}
	inner = strings.TrimSpace(inner)
	if len(inner) > 1 && inner[0] == '.' && isLetter(inner[1]) {
		inner = inner[1:] // {{ .inputs.x }} means {{ inputs.x }}
	}
	return "(" + inner + ")", true, nil
}

func isLetter(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
