package templater

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/expr-lang/expr/vm/runtime"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// RefError is a reference to something that does not exist at run time: a missing input, a step
// that has not run, a missing key at any depth, a name the scope does not have. Path is the
// reference as written (states.build.output); Hint suggests the nearest existing name. It is
// of kind fault.Execution: the static check let it through, so the run decided it.
type RefError struct {
	Path   string
	Reason string
	Hint   string
}

func (e *RefError) Error() string {
	if e.Hint != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Path, e.Reason, e.Hint)
	}
	return e.Path + ": " + e.Reason
}

// FaultKind classifies a failed reference as a failed execution.
func (e *RefError) FaultKind() fault.Kind { return fault.Execution }

// ref describes one name or member access of a compiled expression: how it was written, for
// error messages, and its static path, for checks.
type ref struct {
	text     string   // this access as written: "states.build"
	full     string   // the outermost access of its chain: "states.build.output"
	baseText string   // what the access reads from, as written
	key      string   // the key, when it is a constant
	static   bool     // segs is the whole path from the root name
	segs     []string // static path from the root name, this access included
	root     string   // the name the chain starts at; "" when it starts elsewhere
	lenient  bool     // a miss is nil, not an error (?. and the left of ??)
	base     *ref     // the access this one reads from; nil for a name
	parent   bool     // another access reads from this one
	offset   int      // byte offset of the chain's start in the expression
}

// fetch is the runtime of every rewritten access: params are the base value, the key and the
// *ref. A miss is a *RefError unless the access is lenient.
func fetch(params ...any) (any, error) {
	return params[2].(*ref).fetch(params[0], params[1])
}

func (r *ref) fetch(base, key any) (any, error) {
	switch b := base.(type) {
	case map[string]any:
		return r.fromMap(b, key)
	case ports.Scope:
		return r.fromMap(b, key)
	case nil:
		return r.nilBase()
	}
	v := reflect.ValueOf(base)
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return r.nilBase()
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Map:
		return r.fromReflectMap(v, key)
	case reflect.Slice, reflect.Array:
		return r.fromList(v, key)
	case reflect.Struct:
		return r.fromStruct(base, key)
	}
	return nil, r.fail(fmt.Sprintf("%s is %s, not an object or a list", r.baseName(), kindName(v)), "")
}

func (r *ref) fromMap(m map[string]any, key any) (any, error) {
	k, ok := key.(string)
	if !ok {
		return nil, r.fail(fmt.Sprintf("%s is an object; its keys are strings, not %T", r.baseName(), key), "")
	}
	if v, ok := m[k]; ok {
		return v, nil
	}
	if r.lenient {
		return nil, nil
	}
	keys := make([]string, 0, len(m))
	for name := range m {
		keys = append(keys, name)
	}
	return nil, r.missing(k, keys)
}

func (r *ref) fromReflectMap(m reflect.Value, key any) (any, error) {
	kt := m.Type().Key()
	kv := reflect.ValueOf(key)
	if !kv.IsValid() || !kv.Type().ConvertibleTo(kt) || kv.Kind() != kt.Kind() {
		return nil, r.fail(fmt.Sprintf("%s is an object; its keys are %s, not %T", r.baseName(), kt, key), "")
	}
	if v := m.MapIndex(kv.Convert(kt)); v.IsValid() {
		return v.Interface(), nil
	}
	if r.lenient {
		return nil, nil
	}
	var keys []string
	for _, k := range m.MapKeys() {
		keys = append(keys, fmt.Sprint(k.Interface()))
	}
	return nil, r.missing(fmt.Sprint(key), keys)
}

func (r *ref) fromList(l reflect.Value, key any) (any, error) {
	i, ok := index(key)
	if !ok {
		return nil, r.fail(fmt.Sprintf("%s is a list; index it with a number, not %q", r.baseName(), fmt.Sprint(key)), "")
	}
	n := l.Len()
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		if r.lenient {
			return nil, nil
		}
		return nil, r.fail(fmt.Sprintf("index %v is out of range: %s has %d items", key, r.baseName(), n), "")
	}
	return l.Index(i).Interface(), nil
}

// fromStruct lets expr read a Go struct field; scopes are maps, but callers may add structs.
func (r *ref) fromStruct(base, key any) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = nil, r.missing(fmt.Sprint(key), nil)
			if r.lenient {
				err = nil
			}
		}
	}()
	return runtime.Fetch(base, key), nil
}

func (r *ref) nilBase() (any, error) {
	if r.lenient {
		return nil, nil
	}
	if r.base == nil && r.baseText == "" {
		return nil, r.fail("there is no scope", "")
	}
	return nil, r.fail(r.baseName()+" is nil", "")
}

// missing explains a missing key in the words of the namespace it is missing from.
func (r *ref) missing(key string, keys []string) *RefError {
	slices.Sort(keys)
	hint := workflow.DidYouMean(key, keys)
	if r.base == nil && r.baseText == "" { // a name of the scope
		if slices.Contains(workflow.AllNamespaces, key) {
			return r.fail(fmt.Sprintf("%q is not available here", key), "")
		}
		return r.fail(fmt.Sprintf("unknown name %q", key), hint)
	}
	var segs []string
	if r.base != nil && r.base.static {
		segs = r.base.segs
	}
	switch {
	case len(segs) == 1 && segs[0] == workflow.NamespaceInputs:
		return r.fail("no such input", hint)
	case len(segs) == 1 && segs[0] == workflow.NamespaceStates:
		return r.fail(fmt.Sprintf("no step %q has run", key), hint)
	case len(segs) == 2 && segs[0] == workflow.NamespaceStates:
		return r.fail(fmt.Sprintf("step %q has no field %q", segs[1], key), hint)
	case len(segs) == 1 && segs[0] == workflow.NamespaceEnv:
		return r.fail(fmt.Sprintf("environment variable %q is not set", key), "")
	case len(segs) == 1 && segs[0] == workflow.NamespaceArgs:
		return r.fail(fmt.Sprintf("no argument %q", key), hint)
	}
	return r.fail(fmt.Sprintf("no key %q in %s", key, r.baseName()), hint)
}

func (r *ref) fail(reason, hint string) *RefError {
	return &RefError{Path: r.full, Reason: reason, Hint: hint}
}

func (r *ref) baseName() string {
	switch {
	case r.base != nil:
		return r.base.text
	case r.baseText == "#":
		return "the current element"
	}
	return r.baseText
}

// index converts an expr number to a list index.
func index(key any) (int, bool) {
	switch k := key.(type) {
	case int:
		return k, true
	case int64:
		return int(k), true
	case float64:
		if k == float64(int(k)) {
			return int(k), true
		}
	}
	return 0, false
}

func kindName(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	}
	return "a " + strings.ToLower(v.Kind().String())
}
