package tool

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Param is one typed parameter of a tool defined in a file rather than in Go: a workflow's
// custom command tool, a manifest argument, a .tool file's @param. ObjectSchema turns a list
// of them into the JSON Schema a model sees and the registry validates against.
type Param struct {
	Name        string
	Type        string // string | integer | number | boolean | array | object | array<T>; "" is string
	Description string
	Required    bool
	Default     any
	HasDefault  bool
	Enum        []any
}

var paramName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`) })

// ParamTypes are the scalar and container types a Param may have; an array may name its item
// type as array<T>.
var ParamTypes = []string{"string", "integer", "number", "boolean", "array", "object"}

// CheckType reports whether t is a valid Param type, and why not.
func CheckType(t string) error {
	if t == "" || slices.Contains(ParamTypes, t) {
		return nil
	}
	if item, ok := arrayItem(t); ok {
		if item == "" || !slices.Contains(ParamTypes, item) {
			return fmt.Errorf("unknown item type %q in %q (want one of %s)", item, t, strings.Join(ParamTypes, ", "))
		}
		return nil
	}
	return fmt.Errorf("unknown type %q (want one of %s, or array<T>)", t, strings.Join(ParamTypes, ", "))
}

// CheckParams reports the first problem of a parameter list: a bad name, a duplicate, an
// unknown type.
func CheckParams(params []Param) error {
	seen := map[string]bool{}
	for _, p := range params {
		switch {
		case !paramName().MatchString(p.Name):
			return fmt.Errorf("parameter name %q: use letters, digits, _ and -, starting with a letter or _", p.Name)
		case seen[p.Name]:
			return fmt.Errorf("parameter %q is declared twice", p.Name)
		}
		seen[p.Name] = true
		if err := CheckType(p.Type); err != nil {
			return fmt.Errorf("parameter %q: %w", p.Name, err)
		}
	}
	return nil
}

// arrayItem splits "array<T>" into T.
func arrayItem(t string) (string, bool) {
	inner, ok := strings.CutPrefix(t, "array<")
	if !ok {
		return "", false
	}
	inner, ok = strings.CutSuffix(inner, ">")
	return inner, ok
}

// typeSchema is the schema of a Param type: {"type": "integer"}, or for array<T>
// {"type": "array", "items": {"type": T}}.
func typeSchema(t string) map[string]any {
	if t == "" {
		t = "string"
	}
	if item, ok := arrayItem(t); ok {
		return map[string]any{"type": "array", "items": map[string]any{"type": item}}
	}
	return map[string]any{"type": t}
}

// ObjectSchema returns the strict object schema of params: each a property with its type,
// description, default and enum; required ones listed; no other property allowed. The output
// is deterministic (encoding/json sorts map keys).
func ObjectSchema(params []Param) json.RawMessage {
	props := make(map[string]any, len(params))
	required := []string{}
	for _, p := range params {
		s := typeSchema(p.Type)
		if p.Description != "" {
			s["description"] = p.Description
		}
		if p.HasDefault {
			s["default"] = p.Default
		}
		if len(p.Enum) > 0 {
			s["enum"] = p.Enum
		}
		props[p.Name] = s
		if p.Required {
			required = append(required, p.Name)
		}
	}
	schema := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		schema["required"] = required
	}
	b, err := json.Marshal(schema)
	if err != nil { // only a default or enum value JSON cannot encode
		b, _ = json.Marshal(map[string]any{"type": "object"})
	}
	return b
}

// Defaults returns args with every missing parameter that has a default filled in. args is
// not changed.
func Defaults(params []Param, args map[string]any) map[string]any {
	out := make(map[string]any, len(args)+len(params))
	for k, v := range args {
		out[k] = v
	}
	for _, p := range params {
		if _, ok := out[p.Name]; !ok && p.HasDefault {
			out[p.Name] = p.Default
		}
	}
	return out
}
