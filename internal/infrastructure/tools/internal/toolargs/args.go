// Package toolargs reads the decoded JSON arguments of the built-in tools defensively: the
// engine validates arguments against each tool's schema first (L0), and these checks still
// hold if it did not. Shared by the file and http tools.
package toolargs

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Args reads a tool's decoded JSON arguments defensively. The engine validates arguments
// against the schema first (L0); these checks hold even if it did not.
type Args map[string]any

// Only refuses arguments the schema does not declare.
func (a Args) Only(names ...string) error {
	var unknown []string
	for k := range a {
		if !slices.Contains(names, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return fmt.Errorf("unknown argument %s (accepted: %s)", strings.Join(unknown, ", "), strings.Join(names, ", "))
}

// Str returns a string argument; a missing required one is an error. JSON null counts as
// missing.
func (a Args) Str(name string, required bool) (string, error) {
	v, ok := a[name]
	if !ok || v == nil {
		if required {
			return "", fmt.Errorf("missing required argument %q", name)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("argument %q must be a string, got %s", name, typeName(v))
	}
	return s, nil
}

// Int returns an integer argument, or 0 when missing.
func (a Args) Int(name string) (int, error) {
	v, ok := a[name]
	if !ok || v == nil {
		return 0, nil
	}
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case int:
		return n, nil
	case int64:
		if n > math.MaxInt32 || n < math.MinInt32 {
			return 0, fmt.Errorf("argument %q is out of range", name)
		}
		return int(n), nil
	case json.Number:
		i, err := n.Int64()
		if err != nil {
			return 0, fmt.Errorf("argument %q must be an integer, got %s", name, n)
		}
		return a.fromInt64(name, i)
	default:
		return 0, fmt.Errorf("argument %q must be an integer, got %s", name, typeName(v))
	}
	if f != math.Trunc(f) || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, fmt.Errorf("argument %q must be an integer, got %v", name, f)
	}
	if f > math.MaxInt32 || f < math.MinInt32 {
		return 0, fmt.Errorf("argument %q is out of range", name)
	}
	return int(f), nil
}

func (a Args) fromInt64(name string, i int64) (int, error) {
	if i > math.MaxInt32 || i < math.MinInt32 {
		return 0, fmt.Errorf("argument %q is out of range", name)
	}
	return int(i), nil
}

// Bool returns a boolean argument, or false when missing.
func (a Args) Bool(name string) (bool, error) {
	v, ok := a[name]
	if !ok || v == nil {
		return false, nil
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("argument %q must be a boolean, got %s", name, typeName(v))
	}
	return b, nil
}

func typeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int, int64, json.Number:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("%T", v)
	}
}
