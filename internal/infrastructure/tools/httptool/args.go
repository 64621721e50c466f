package httptool

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// args reads a tool's decoded JSON arguments defensively. The engine validates arguments
// against the schema first (L0); these checks hold even if it did not.
type args map[string]any

// only refuses arguments the schema does not declare.
func (a args) only(names ...string) error {
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

// str returns a string argument; a missing required one is an error. JSON null counts as
// missing.
func (a args) str(name string, required bool) (string, error) {
	v, ok := a[name]
	if !ok || v == nil {
		if required {
			return "", fmt.Errorf("missing required argument %q", name)
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("argument %q must be a string, got %T", name, v)
	}
	return s, nil
}
