package templater

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// text converts a template value to the text a template shows: strings verbatim, integers in
// decimal, floats in their shortest form (as JSON writes them), booleans as true/false, maps
// and lists as compact JSON. A nil value is an error: what does not exist never renders as "".
func text(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case int:
		return strconv.Itoa(x), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return formatFloat(x, 64), nil
	case []byte:
		return string(x), nil
	case json.Number:
		return x.String(), nil
	case fmt.Stringer:
		if reflect.ValueOf(x).Kind() != reflect.Pointer || !reflect.ValueOf(x).IsNil() {
			return x.String(), nil
		}
		return "", errNil
	case nil:
		return "", errNil
	}
	return reflectText(reflect.ValueOf(v))
}

var errNil = fmt.Errorf("the value is nil")

func reflectText(v reflect.Value) (string, error) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return "", errNil
		}
		return text(v.Elem().Interface())
	case reflect.String:
		return v.String(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return strconv.FormatUint(v.Uint(), 10), nil
	case reflect.Float32:
		return formatFloat(v.Float(), 32), nil
	case reflect.Float64:
		return formatFloat(v.Float(), 64), nil
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), nil
	}
	return compactJSON(v.Interface())
}

// formatFloat writes f as encoding/json does: the shortest decimal that reads back as f,
// with an exponent only for very small or large magnitudes. NaN and infinities, which JSON
// lacks, are written as Go writes them.
func formatFloat(f float64, bits int) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'g', -1, bits)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21)) {
		format = 'e'
	}
	s := strconv.FormatFloat(f, format, -1, bits)
	if format == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		if n := len(s); n >= 4 && s[n-4] == 'e' && s[n-3] == '-' && s[n-2] == '0' {
			s = s[:n-2] + s[n-1:]
		}
	}
	return s
}

// compactJSON encodes maps, lists and other values as one line of JSON without HTML escaping.
// Maps with non-string keys (as YAML can produce) are converted first.
func compactJSON(v any) (string, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		buf.Reset()
		if err2 := enc.Encode(jsonable(v)); err2 != nil {
			return "", fmt.Errorf("cannot show %T as text: %w", v, err)
		}
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// jsonable converts map[any]any (and maps nested in lists and maps) to map[string]any.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, val := range x {
			m[fmt.Sprint(k)] = jsonable(val)
		}
		return m
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, val := range x {
			m[k] = jsonable(val)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, val := range x {
			l[i] = jsonable(val)
		}
		return l
	}
	return v
}
