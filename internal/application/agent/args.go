package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// decodeArgs reads a call's arguments: a JSON object, with numbers kept as the model wrote
// them where they fit an int64 or a float64 exactly. Empty text is the empty object. Anything
// else is an error the model is told about.
func decodeArgs(text string) (map[string]any, error) {
	t := strings.TrimSpace(text)
	if t == "" {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("arguments hold more than one JSON value")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("arguments must be a JSON object, got %s", jsonKind(v))
	}
	return convertNumbers(obj).(map[string]any), nil
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}

// convertNumbers replaces json.Number values by int64 when integral and in range, else by
// float64 when the text round-trips exactly; other numbers stay json.Number (exact) rather
// than being rounded. State files then hold numbers, not quoted strings.
func convertNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = convertNumbers(e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = convertNumbers(e)
		}
		return x
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil && !math.IsInf(f, 0) && significantDigits(string(x)) <= 15 {
			return f
		}
		return x
	}
	return v
}

// significantDigits counts the digits of a JSON number's mantissa, leading zeros aside: a
// decimal with at most 15 of them survives a float64 round trip exactly.
func significantDigits(s string) int {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	n, leading := 0, true
	for _, c := range s {
		switch {
		case c == '0' && leading:
		case c >= '0' && c <= '9':
			leading = false
			n++
		}
	}
	return n
}

// callKey identifies a call by tool and arguments, whatever the order of keys, the spelling
// of numbers (1, 1.0) or the path the arguments took (model JSON, a state file read back).
// The breaker compares consecutive calls with it, and resume matches a call to its record.
func callKey(tool string, args map[string]any) string {
	var b bytes.Buffer
	b.WriteString(tool)
	b.WriteByte(0)
	data, err := json.Marshal(args)
	if err != nil {
		fmt.Fprintf(&b, "%v", args)
		return b.String()
	}
	var v any
	if json.Unmarshal(data, &v) != nil { // plain float64 numbers: one spelling each
		b.Write(data)
		return b.String()
	}
	norm, _ := json.Marshal(v) // maps marshal with sorted keys
	b.Write(norm)
	return b.String()
}
