package statestore

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/state"
)

// runEncoder writes a run's state file, reusing the YAML of every step that has not changed
// since the last encoding, of every tool call and message of a step that has (see
// stepEncoder), and of the step order when steps were only appended to it. Even written by
// emit, a step or a tool call costs microseconds (a quarter of a millisecond with go-yaml),
// and an agent step is saved twice per tool call; so a Save encodes the run's head and what
// changed, and compares the rest with a copy of what it was. The output is byte for byte what
// encodeYAML gives for the whole run (tests check). Not safe for concurrent use: each run has
// one, used under the run's lock.
type runEncoder struct {
	steps map[string]*stepEncoder
	// order is the order last seen, items the YAML of its first encoded names: the journal
	// adds names without encoding them (see appendOrder).
	order   []string
	items   string
	encoded int
	parts   int // the number of pieces of the last document
}

// emptyStates and emptyOrder are how go-yaml writes a run whose States and Order are nil: the
// lines that the steps and the order replace.
const (
	emptyStates = statesKey + " {}\n"
	orderKey    = "order:"
	emptyOrder  = orderKey + " []\n"
)

// encode returns the YAML of run, in pieces to be written one after the other: the state file
// is not copied into one string.
func (e *runEncoder) encode(run *state.RunState) ([]string, error) {
	head := *run
	head.States, head.Order = nil, nil
	doc, err := emit(&head)
	if err != nil {
		return nil, err
	}
	atStates := strings.Index(doc, "\n"+emptyStates) + 1
	atOrder := strings.Index(doc, "\n"+emptyOrder) + 1
	if atStates <= 0 || atOrder <= atStates {
		return nil, fmt.Errorf("encode: no %q and %q lines in the YAML of the run", emptyStates, emptyOrder)
	}
	parts := make([]string, 1, e.parts+8)
	parts[0] = doc[:atStates]
	parts, err = e.encodeStates(parts, run.States)
	if err != nil {
		return nil, err
	}
	parts = append(parts, doc[atStates+len(emptyStates):atOrder])
	order, err := e.encodeOrder(run.Order)
	if err != nil {
		return nil, err
	}
	parts = append(parts, order, doc[atOrder+len(emptyOrder):])
	e.parts = len(parts)
	return parts, nil
}

// encodeStates appends the "states:" entry of the document to parts.
func (e *runEncoder) encodeStates(parts []string, states map[string]*state.StepState) ([]string, error) {
	if len(states) == 0 {
		e.steps = nil
		return append(parts, emptyStates), nil
	}
	names := make([]string, 0, len(states))
	for name := range states {
		names = append(names, name)
	}
	slices.Sort(names)
	next := make(map[string]*stepEncoder, len(names))
	parts = append(parts, statesKey+"\n")
	for _, name := range names {
		enc := e.steps[name]
		if enc == nil {
			enc = &stepEncoder{}
		}
		var err error
		if parts, err = enc.encode(parts, name, states[name]); err != nil {
			return nil, err
		}
		next[name] = enc
	}
	e.steps = next
	return parts, nil
}

// encodeOrder returns the "order:" entry of the document, encoding only the names appended
// since the last call when the order only grew.
func (e *runEncoder) encodeOrder(order []string) (string, error) {
	if len(order) == 0 {
		e.order, e.items, e.encoded = nil, "", 0
		return emptyOrder, nil
	}
	if len(e.order) > len(order) || !slices.Equal(e.order, order[:len(e.order)]) {
		e.order, e.items, e.encoded = nil, "", 0
	}
	if e.encoded < len(order) {
		text, err := emit(order[e.encoded:])
		if err != nil {
			return "", fmt.Errorf("encode order: %w", err)
		}
		e.items += text
		e.encoded = len(order)
	}
	e.order = append(e.order, order[len(e.order):]...)
	return orderKey + "\n" + e.items, nil
}

// appendOrder records that name was added at the end of the order, for the journal: its YAML
// is left to the next encoding.
func (e *runEncoder) appendOrder(name string) { e.order = append(e.order, name) }

// forget drops the cached YAML, for a run that has finished.
func (e *runEncoder) forget() { *e = runEncoder{} }

// indent puts two spaces before every non-empty line of text.
func indent(text string) string { return indentBy(text, "  ") }

// indentBy puts prefix before every non-empty line of text.
func indentBy(text, prefix string) string {
	var b strings.Builder
	b.Grow(len(text) + len(prefix)*strings.Count(text, "\n"))
	for line := range strings.Lines(text) {
		if line != "\n" {
			b.WriteString(prefix)
		}
		b.WriteString(line)
	}
	return b.String()
}

// deepCopy returns a copy of v that shares no maps, slices or pointers with it, so that the
// caller changing its run in place cannot change the copy. Strings are shared: they cannot
// change.
func deepCopy[T any](v T) T {
	c, _ := copyValue(reflect.ValueOf(&v).Elem()).Interface().(T) // not ok only for a nil interface
	return c
}

// equal reports whether a and b hold the same value, as reflect.DeepEqual does for the acyclic
// data of a run, without its allocations: it runs for every step at every Save.
func equal(a, b reflect.Value) bool {
	if a.Kind() != b.Kind() || a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		if a.Kind() == reflect.Pointer && a.Pointer() == b.Pointer() {
			return true
		}
		return equal(a.Elem(), b.Elem())
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for it := a.MapRange(); it.Next(); {
			bv := b.MapIndex(it.Key())
			if !bv.IsValid() || !equal(it.Value(), bv) {
				return false
			}
		}
		return true
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for i := range a.Len() {
			if !equal(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Array:
		for i := range a.Len() {
			if !equal(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		// Unexported fields too: a time.Time is equal if its wall clock, monotonic reading
		// and location are, which is stricter than needed and never wrong.
		for i := range a.NumField() {
			if !equal(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.String:
		return a.String() == b.String()
	case reflect.Bool:
		return a.Bool() == b.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() == b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() == b.Uint()
	case reflect.Float32, reflect.Float64:
		return math.Float64bits(a.Float()) == math.Float64bits(b.Float()) // -0 is not written as 0
	}
	return false // funcs, channels and the like are never encoded the same twice
}

func copyValue(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type().Elem())
		c.Elem().Set(copyValue(v.Elem()))
		return c
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type()).Elem()
		c.Set(copyValue(v.Elem()))
		return c
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			c.SetMapIndex(it.Key(), copyValue(it.Value()))
		}
		return c
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(copyValue(v.Index(i)))
		}
		return c
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		c.Set(v) // unexported fields (time.Time's) by value
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				c.Field(i).Set(copyValue(v.Field(i)))
			}
		}
		return c
	case reflect.Array:
		c := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			c.Index(i).Set(copyValue(v.Index(i)))
		}
		return c
	}
	return v
}
