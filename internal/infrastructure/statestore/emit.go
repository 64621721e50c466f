package statestore

import (
	"encoding"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-yaml"
)

// emit returns encodeYAML(v), byte for byte, ten to twenty times faster: go-yaml spends a
// tenth of a millisecond on a tool call record, and an agent step saves two records per call.
//
// It writes the YAML itself, as go-yaml's encoder and printer (v1.19) lay out the document
// that encodeYAML builds: block mappings and sequences, struct fields in order under their
// yaml tag names with omitempty, map keys sorted, "{}" and "[]" for empty ones, strings in
// the style encodeYAML chooses (stringStyle), go-yaml's spelling of numbers and times. A value
// it does not know how to lay out that way (a marshaler, a map with keys that are not
// strings, a tag option other than omitempty) is given to encodeYAML instead. Tests compare
// the two on tricky and random values, so that a go-yaml upgrade that changes the layout is
// caught.
func emit(v any) (string, error) {
	if n, ok := emitValue(reflect.ValueOf(v), 1); ok {
		return n.text + "\n", nil
	}
	return encodeYAML(v)
}

// emitted is the text of one node as go-yaml's printer gives it: the lines after the first
// are indented for the node's column, the first is not.
type emitted struct {
	text string
	kind nodeKind
}

type nodeKind uint8

const (
	scalarNode   nodeKind = iota
	stringNode            // a scalar that go-yaml holds in a StringNode: its sequences treat it apart
	emptyMapping          // "{}"
	emptySeq              // "[]"
	mappingNode
	seqNode
)

// emitValue lays out v at column col (1-based, as go-yaml counts). ok is false for a value
// emit leaves to go-yaml.
func emitValue(v reflect.Value, col int) (emitted, bool) {
	if !v.IsValid() {
		return emitted{"null", scalarNode}, true
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return emitted{"null", scalarNode}, true
		}
		if t, ok := v.Interface().(*time.Time); ok && t != nil {
			return emitTime(*t, col)
		}
		if v.Kind() == reflect.Pointer && marshals(v.Type()) {
			return emitted{}, false
		}
		return emitValue(v.Elem(), col)
	}
	if marshals(v.Type()) {
		if t, ok := v.Interface().(time.Time); ok {
			return emitTime(t, col)
		}
		return emitted{}, false
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return emitted{strconv.FormatInt(v.Int(), 10), scalarNode}, true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return emitted{strconv.FormatUint(v.Uint(), 10), scalarNode}, true
	case reflect.Float32:
		return emitted{formatFloat(v.Float(), 32), scalarNode}, true
	case reflect.Float64:
		return emitted{formatFloat(v.Float(), 64), scalarNode}, true
	case reflect.Bool:
		return emitted{strconv.FormatBool(v.Bool()), scalarNode}, true
	case reflect.String:
		return emitted{formatString(v.String(), col, true), stringNode}, true
	case reflect.Slice, reflect.Array:
		return emitSeq(v, col)
	case reflect.Map:
		return emitMap(v, col)
	case reflect.Struct:
		return emitStruct(v, col)
	}
	return emitted{}, false
}

// emitTime writes a time as go-yaml does: RFC 3339 with nanoseconds, as a string.
func emitTime(t time.Time, col int) (emitted, bool) {
	return emitted{formatString(t.Format(time.RFC3339Nano), col, true), stringNode}, true
}

// formatFloat spells f as go-yaml does, with encodeYAML's decimal point before an exponent.
func formatFloat(f float64, bits int) string {
	switch {
	case math.IsInf(f, 1):
		return ".inf"
	case math.IsInf(f, -1):
		return "-.inf"
	case math.IsNaN(f):
		return ".nan"
	}
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if !strings.ContainsAny(s, ".e") {
		return s + ".0"
	}
	return floatWithPoint(s)
}

// formatString writes s in the style stringStyle chooses, a literal block laid out for
// column col as go-yaml's StringNode does.
func formatString(s string, col int, blockOK bool) string {
	switch stringStyle(s, blockOK) {
	case plainStyle:
		return s
	case quotedStyle:
		return strconv.Quote(s)
	case binaryStyle:
		return binaryScalar(s)
	}
	header := "|-"
	switch {
	case strings.HasSuffix(s, "\n\n"):
		header = "|+"
	case strings.HasSuffix(s, "\n"):
		header = "|"
	}
	pad := strings.Repeat(" ", col-1+2)
	var b strings.Builder
	b.Grow(len(header) + 1 + len(s) + (len(pad)+1)*(strings.Count(s, "\n")+1))
	b.WriteString(header)
	for line := range strings.SplitSeq(s, "\n") {
		b.WriteByte('\n')
		b.WriteString(pad)
		b.WriteString(line)
	}
	block := strings.TrimSuffix(b.String(), "\n"+pad)
	return strings.TrimSuffix(block, pad)
}

// emitSeq lays out a sequence as go-yaml's SequenceNode does, items at the sequence's column.
func emitSeq(v reflect.Value, col int) (emitted, bool) {
	if v.Len() == 0 {
		return emitted{"[]", emptySeq}, true
	}
	space := strings.Repeat(" ", col-1)
	values := make([]string, 0, v.Len())
	for i := range v.Len() {
		item, ok := emitValue(v.Index(i), col)
		if !ok {
			return emitted{}, false
		}
		values = append(values, seqItem(item, space))
	}
	return emitted{strings.Join(values, "\n"), seqNode}, true
}

// seqItem is one "- " item, as SequenceNode.blockStyleString writes it: the item's lines
// after the first are re-indented two columns right of the dash, lines of blanks no longer
// than the first line's indentation become empty.
func seqItem(item emitted, space string) string {
	text, lead := item.text, ""
	if strings.HasPrefix(text, "\n") {
		text, lead = text[1:], "\n"
	}
	if !strings.Contains(text, "\n") {
		return lead + space + "- " + strings.TrimLeft(text, " ")
	}
	lines := strings.Split(text, "\n")
	first := strings.TrimLeft(lines[0], " ")
	diff := len(lines[0]) - len(first)
	var b strings.Builder
	b.Grow(len(text) + len(lines)*(len(space)+2) + len(space) + 2)
	b.WriteString(lead)
	b.WriteString(space)
	b.WriteString("- ")
	b.WriteString(first)
	for _, line := range lines[1:] {
		if item.kind == stringNode {
			line = strings.TrimPrefix(line, space+"  ")
		}
		b.WriteByte('\n')
		if len(line) > diff {
			b.WriteString(space)
			b.WriteString("  ")
			b.WriteString(line[diff:])
		}
	}
	return b.String()
}

// emitMap lays out a map with string keys, sorted, as go-yaml does.
func emitMap(v reflect.Value, col int) (emitted, bool) {
	if kt := v.Type().Key(); kt.Kind() != reflect.String || kt.NumMethod() > 0 {
		return emitted{}, false // go-yaml sorts other keys by fmt.Sprint
	}
	if v.Len() == 0 {
		return emitted{"{}", emptyMapping}, true
	}
	keys := v.MapKeys()
	slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(a.String(), b.String()) })
	entries := make([]string, 0, len(keys))
	for _, k := range keys {
		entry, ok := mappingValue(formatString(k.String(), col, false), v.MapIndex(k), col)
		if !ok {
			return emitted{}, false
		}
		entries = append(entries, entry)
	}
	return emitted{strings.Join(entries, "\n"), mappingNode}, true
}

// emitStruct lays out a struct's fields in order, as go-yaml does.
func emitStruct(v reflect.Value, col int) (emitted, bool) {
	fields, ok := structFields(v.Type())
	if !ok {
		return emitted{}, false
	}
	entries := make([]string, 0, len(fields))
	for _, f := range fields {
		fv := v.Field(f.index)
		if f.omitEmpty && omitted(fv) {
			continue
		}
		entry, ok := mappingValue(f.key, fv, col)
		if !ok {
			return emitted{}, false
		}
		entries = append(entries, entry)
	}
	if len(entries) == 0 {
		return emitted{"{}", emptyMapping}, true
	}
	return emitted{strings.Join(entries, "\n"), mappingNode}, true
}

// mappingValue writes "key: value" for a mapping at column col, as MappingValueNode does:
// nested mappings two columns right, sequences at the key's column.
func mappingValue(key string, v reflect.Value, col int) (string, bool) {
	vcol := col
	if isMapping(v) {
		vcol = col + 2
	}
	val, ok := emitValue(v, vcol)
	if !ok {
		return "", false
	}
	space := strings.Repeat(" ", col-1)
	switch val.kind {
	case scalarNode, stringNode:
		if val.text == "" {
			return space + key + ":", true
		}
		return space + key + ": " + val.text, true
	case emptyMapping, emptySeq:
		return space + key + ": " + val.text, true
	}
	return space + key + ":\n" + val.text, true
}

// isMapping reports whether go-yaml encodes v as a mapping, which it indents under its key.
func isMapping(v reflect.Value) bool {
	for v.IsValid() && (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && !v.IsNil() {
		v = v.Elem()
	}
	if !v.IsValid() {
		return false
	}
	switch v.Kind() {
	case reflect.Map:
		return true
	case reflect.Struct:
		return v.Type() != timeType
	}
	return false
}

// omitted reports whether go-yaml leaves out a field tagged omitempty holding v: a value
// whose IsZero method says so (a time), or else an empty or zero one.
func omitted(v reflect.Value) bool {
	if v.Kind() == reflect.Interface && !v.IsNil() && isZeroer(v.Elem().Type()) {
		return v.Elem().Interface().(zeroer).IsZero()
	}
	if isZeroer(v.Type()) {
		if v.Kind() == reflect.Pointer && v.IsNil() {
			return true
		}
		return v.Interface().(zeroer).IsZero()
	}
	switch v.Kind() {
	case reflect.String:
		return v.Len() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	case reflect.Slice, reflect.Map:
		return v.Len() == 0
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Struct:
		for i := v.NumField() - 1; i >= 0; i-- {
			if v.Type().Field(i).IsExported() && !omitted(v.Field(i)) {
				return false
			}
		}
		return true
	}
	return false
}

// field is a struct field as go-yaml encodes it.
type field struct {
	index     int
	key       string // the name as written: keys are never blocks, so at any column
	omitEmpty bool
}

var (
	fieldCache sync.Map // reflect.Type -> []field, or nil for a struct emit leaves to go-yaml
	timeType   = reflect.TypeFor[time.Time]()
	zeroerType = reflect.TypeFor[zeroer]()
)

// structFields returns the fields go-yaml encodes of struct type t, in order; ok is false
// for a struct with an embedded field or a tag option other than omitempty.
func structFields(t reflect.Type) ([]field, bool) {
	if c, ok := fieldCache.Load(t); ok {
		fields := c.([]field)
		return fields, fields != nil
	}
	fields, ok := parseFields(t)
	if !ok {
		fields = nil
	}
	fieldCache.Store(t, fields)
	return fields, ok
}

func parseFields(t reflect.Type) ([]field, bool) {
	fields := make([]field, 0, t.NumField())
	names := map[string]bool{}
	for i := range t.NumField() {
		sf := t.Field(i)
		if sf.Anonymous {
			return nil, false
		}
		tag := sf.Tag.Get("yaml")
		if tag == "" {
			tag = sf.Tag.Get("json")
		}
		if !sf.IsExported() || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if name == "" {
			name = strings.ToLower(sf.Name)
		}
		f := field{index: i, key: formatString(name, 1, false)}
		for opt := range strings.SplitSeq(opts, ",") {
			switch opt {
			case "":
			case "omitempty":
				f.omitEmpty = true
			default:
				return nil, false
			}
		}
		if names[name] {
			return nil, false
		}
		names[name] = true
		fields = append(fields, f)
	}
	return fields, true
}

// zeroer is what go-yaml asks of a value to decide whether omitempty leaves it out.
type zeroer interface{ IsZero() bool }

// marshals reports whether go-yaml encodes values of type t through a method of theirs, or
// in a way of its own.
func marshals(t reflect.Type) bool { return factsOf(t).marshals }

// isZeroer reports whether type t has an IsZero method.
func isZeroer(t reflect.Type) bool { return factsOf(t).zeroer }

// typeFacts are what emit asks of a type with methods, remembered: reflect's Implements takes
// a good part of a microsecond.
type typeFacts struct{ marshals, zeroer bool }

var factsCache sync.Map // reflect.Type -> typeFacts

func factsOf(t reflect.Type) typeFacts {
	if t.NumMethod() == 0 && t != mapItemType {
		return typeFacts{}
	}
	if f, ok := factsCache.Load(t); ok {
		return f.(typeFacts)
	}
	f := typeFacts{zeroer: t.Implements(zeroerType)}
	f.marshals = t == mapSliceType || t == mapItemType || t == durationType
	for _, m := range marshalers {
		f.marshals = f.marshals || t.Implements(m)
	}
	factsCache.Store(t, f)
	return f
}

var (
	mapSliceType = reflect.TypeFor[yaml.MapSlice]()
	mapItemType  = reflect.TypeFor[yaml.MapItem]()
	durationType = reflect.TypeFor[time.Duration]()
	marshalers   = []reflect.Type{
		reflect.TypeFor[yaml.BytesMarshaler](),
		reflect.TypeFor[yaml.BytesMarshalerContext](),
		reflect.TypeFor[yaml.InterfaceMarshaler](),
		reflect.TypeFor[yaml.InterfaceMarshalerContext](),
		reflect.TypeFor[encoding.TextMarshaler](),
	}
)
