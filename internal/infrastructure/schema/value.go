package schema

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/awf-dev/awf/internal/domain/tool"
)

// Values are what encoding/json decodes into an any, with numbers as json.Number (UseNumber)
// or float64, plus the Go integer types callers build by hand. Other values (structs, typed
// maps and slices) are converted through JSON before validation.

// jsonType names the JSON type of a plain value as JSON Schema's type keyword does; integers
// are numbers with no fractional part, whatever their spelling (1.0 is an integer).
func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case json.Number:
		if isIntegerLiteral(string(x)) {
			return "integer"
		}
		return "number"
	case float64:
		if math.Trunc(x) == x && !math.IsInf(x, 0) {
			return "integer"
		}
		return "number"
	case float32:
		return jsonType(float64(x))
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return "integer"
	}
	return "unknown"
}

// maxNumberLen bounds the numbers compared exactly: beyond it (or with an exponent beyond
// maxExponent) a number is compared as a float64, so that 1e999999999 costs nothing.
const (
	maxNumberLen = 400
	maxExponent  = 400
)

// isIntegerLiteral reports whether a JSON number literal denotes an integer: 1, 1.0, 1.5e1
// and 1e999999999 do; 1.5 and 1e-1 do not.
func isIntegerLiteral(s string) bool {
	if !strings.ContainsAny(s, "eE") {
		_, frac, _ := strings.Cut(s, ".")
		return strings.Trim(frac, "0") == ""
	}
	if r, ok := ratOf(json.Number(s)); ok {
		return r.IsInt()
	}
	// The exponent is too large to compute with: a positive one absorbs any fraction, a
	// negative one leaves only zero an integer.
	if !strings.Contains(s, "e-") && !strings.Contains(s, "E-") {
		return true
	}
	return significantDigits(s) == 0
}

// exponentOf returns a literal's exponent, 0 when it has none; ok is false when it does not
// fit an int.
func exponentOf(s string) (int, bool) {
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return 0, true
	}
	e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
	return e, err == nil
}

// significantDigits counts a literal's mantissa digits, leading zeros aside.
func significantDigits(s string) int {
	n, started := 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == 'e' || c == 'E' {
			break
		}
		if c >= '1' && c <= '9' || c == '0' && started {
			started = true
			n++
		}
	}
	return n
}

// ratOf returns a number as an exact rational. ok is false for a value that is not a
// number, or one too large to handle exactly (see maxNumberLen).
func ratOf(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if len(s) > maxNumberLen {
			return nil, false
		}
		if e, ok := exponentOf(s); !ok || e > maxExponent || e < -maxExponent {
			return nil, false
		}
		r, ok := new(big.Rat).SetString(s)
		return r, ok
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return nil, false
		}
		return new(big.Rat).SetFloat64(x), true
	case float32:
		return ratOf(float64(x))
	case int:
		return new(big.Rat).SetInt64(int64(x)), true
	case int8:
		return new(big.Rat).SetInt64(int64(x)), true
	case int16:
		return new(big.Rat).SetInt64(int64(x)), true
	case int32:
		return new(big.Rat).SetInt64(int64(x)), true
	case int64:
		return new(big.Rat).SetInt64(x), true
	case uint:
		return new(big.Rat).SetUint64(uint64(x)), true
	case uint8:
		return new(big.Rat).SetUint64(uint64(x)), true
	case uint16:
		return new(big.Rat).SetUint64(uint64(x)), true
	case uint32:
		return new(big.Rat).SetUint64(uint64(x)), true
	case uint64:
		return new(big.Rat).SetUint64(x), true
	}
	return nil, false
}

// float returns a number as a float64, for comparisons of numbers too large for ratOf.
func float(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !isRangeErr(err) {
			return 0, false
		}
		return f, true
	case float64:
		return x, true
	case float32:
		return float64(x), true
	}
	if r, ok := ratOf(v); ok {
		f, _ := r.Float64()
		return f, true
	}
	return 0, false
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// isNumber reports whether v is a JSON number.
func isNumber(v any) bool {
	switch jsonType(v) {
	case "integer", "number":
		return true
	}
	return false
}

// compare compares a number with a schema bound: -1, 0 or +1.
func compare(v any, bound float64) int {
	if n, ok := v.(json.Number); ok && significantDigits(string(n)) <= 15 {
		// Up to 15 digits a decimal survives float64 and back, so comparing the nearest
		// floats orders the decimals exactly.
		if f, err := strconv.ParseFloat(string(n), 64); err == nil {
			return cmpFloat(f, bound)
		}
	}
	if r, ok := ratOf(v); ok {
		return r.Cmp(decimal(bound))
	}
	f, _ := float(v)
	return cmpFloat(f, bound)
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// decimal returns a schema's number as the decimal its author wrote: the shortest decimal that
// reads back as the same float64, so that multipleOf 0.1 and maximum 0.1 mean one tenth.
func decimal(f float64) *big.Rat {
	if f == math.Trunc(f) {
		return new(big.Rat).SetFloat64(f) // integral: exact, even beyond 2^53
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok {
		return new(big.Rat).SetFloat64(f)
	}
	return r
}

// equal is JSON equality: numbers by value (1 equals 1.0), objects and arrays deeply.
func equal(a, b any) bool {
	if isNumber(a) && isNumber(b) {
		ra, okA := ratOf(a)
		rb, okB := ratOf(b)
		if okA && okB {
			return ra.Cmp(rb) == 0
		}
		fa, _ := float(a)
		fb, _ := float(b)
		return fa == fb
	}
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, va := range x {
			vb, ok := y[k]
			if !ok || !equal(va, vb) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// canonical writes v so that equal values give equal text, for uniqueItems.
func canonical(b *strings.Builder, v any) {
	switch x := v.(type) {
	case map[string]any:
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			canonical(b, x[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			canonical(b, e)
		}
		b.WriteByte(']')
	case string:
		b.WriteString(strconv.Quote(x))
	default:
		if r, ok := ratOf(v); ok {
			b.WriteString("n" + r.RatString())
			return
		}
		if f, ok := float(v); ok {
			b.WriteString("f" + strconv.FormatFloat(f, 'g', -1, 64))
			return
		}
		fmt.Fprintf(b, "%v", v)
	}
}

// plain reports whether v holds only the types the walker understands.
func plain(v any) bool {
	switch x := v.(type) {
	case nil, bool, string, json.Number, float64, float32, int, int8, int16, int32, int64,
		uint, uint8, uint16, uint32, uint64:
		return true
	case map[string]any:
		for _, e := range x {
			if !plain(e) {
				return false
			}
		}
		return true
	case []any:
		for _, e := range x {
			if !plain(e) {
				return false
			}
		}
		return true
	}
	return false
}

// normalize converts a value that is not plain through JSON.
func normalize(v any) (any, error) {
	if plain(v) {
		return v, nil
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return nil, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("the value is not JSON: %w", err)
	}
	var out any
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// show renders a value for a message, shortened to about 60 characters.
func show(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = strconv.Quote(x)
	case json.Number:
		s = string(x)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			s = fmt.Sprintf("%v", v)
		} else {
			s = string(b)
		}
	}
	if len(s) > 60 {
		cut := 57
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// jpath is the JSON path of a value, built on the stack as validation descends and formatted
// only when a failure is reported: nil is the root "$".
type jpath struct {
	parent *jpath
	key    string
	idx    int // -1 for an object member
}

func (p *jpath) child(key string) *jpath { return &jpath{parent: p, key: key, idx: -1} }
func (p *jpath) index(i int) *jpath      { return &jpath{parent: p, idx: i} }

// String formats the path: $.a for plain names, $["a b"] otherwise, [2] for indexes.
func (p *jpath) String() string {
	if p == nil {
		return "$"
	}
	base := p.parent.String()
	if p.idx >= 0 {
		return base + "[" + strconv.Itoa(p.idx) + "]"
	}
	if isIdentifier(p.key) {
		return base + "." + p.key
	}
	b, _ := json.Marshal(p.key)
	return base + "[" + string(b) + "]"
}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// sortErrors orders failures by path, indexes numerically, keeping the order of failures at
// one path; map iteration order must not show in the output.
func sortErrors(errs []tool.FieldError) {
	if len(errs) < 2 {
		return
	}
	slices.SortStableFunc(errs, func(a, b tool.FieldError) int { return comparePaths(a.Path, b.Path) })
}

// comparePaths compares JSON paths segment by segment, numbers by value.
func comparePaths(a, b string) int {
	for a != "" && b != "" {
		ia, ib := digitsAt(a), digitsAt(b)
		if ia > 0 && ib > 0 {
			na, _ := strconv.Atoi(a[:ia])
			nb, _ := strconv.Atoi(b[:ib])
			if na != nb {
				return na - nb
			}
			a, b = a[ia:], b[ib:]
			continue
		}
		if a[0] != b[0] {
			return int(a[0]) - int(b[0])
		}
		a, b = a[1:], b[1:]
	}
	return len(a) - len(b)
}

func digitsAt(s string) int {
	n := 0
	for n < len(s) && n < 18 && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}
