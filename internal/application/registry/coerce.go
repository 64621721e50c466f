package registry

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/awf-dev/awf/internal/domain/tool"
)

// coerce converts string arguments to the type their parameter declares, for arguments that
// come from templates (a workflow's tool step, a manifest's args), which are always text:
// "5" for an integer becomes 5, "true" for a boolean true, "[1,2]" for an array the list. A
// value that does not convert stays a string, and validation then says what is wrong. A
// parameter that accepts strings keeps its strings. args is not changed.
func coerce(args map[string]any, types map[string][]string) map[string]any {
	var out map[string]any
	for k, v := range args {
		s, ok := v.(string)
		want := types[k]
		if !ok || len(want) == 0 || accepts(want, "string") {
			continue
		}
		if c, ok := convert(s, want); ok {
			if out == nil {
				out = make(map[string]any, len(args))
				for k2, v2 := range args {
					out[k2] = v2
				}
			}
			out[k] = c
		}
	}
	if out == nil {
		return args
	}
	return out
}

func accepts(types []string, t string) bool {
	for _, x := range types {
		if x == t {
			return true
		}
	}
	return false
}

// convert reads s as the first of types it fits.
func convert(s string, types []string) (any, bool) {
	t := strings.TrimSpace(s)
	for _, want := range types {
		switch want {
		case "integer", "number":
			if _, err := strconv.ParseFloat(t, 64); err == nil || isRange(err) {
				if v, err := tool.DecodeJSON([]byte(t)); err == nil {
					if n, ok := v.(json.Number); ok {
						return n, true
					}
				}
			}
		case "boolean":
			if b, err := strconv.ParseBool(t); err == nil && (t == "true" || t == "false") {
				return b, true
			}
		case "null":
			if t == "null" {
				return nil, true
			}
		case "array", "object":
			if v, err := tool.DecodeJSON([]byte(t)); err == nil {
				if _, isList := v.([]any); isList == (want == "array") {
					if _, isMap := v.(map[string]any); isMap == (want == "object") {
						return v, true
					}
				}
			}
		}
	}
	return nil, false
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

// canonicalIntegers rewrites integer arguments spelled as decimals or with exponents (1.0,
// 1e2), which JSON Schema counts as integers, as plain integers (1, 100), so that tools can
// read them with json.Number.Int64. Only top-level parameters whose only type is integer
// are rewritten; args is not changed.
func canonicalIntegers(args map[string]any, types map[string][]string) map[string]any {
	var out map[string]any
	for k, v := range args {
		n, ok := v.(json.Number)
		if !ok || !strings.ContainsAny(string(n), ".eE") || len(types[k]) != 1 || types[k][0] != "integer" {
			continue
		}
		if !smallExponent(string(n)) {
			continue // 1e999999999 would take gigabytes to write out
		}
		r, ok := new(big.Rat).SetString(string(n))
		if !ok || !r.IsInt() {
			continue
		}
		if out == nil {
			out = make(map[string]any, len(args))
			for k2, v2 := range args {
				out[k2] = v2
			}
		}
		out[k] = json.Number(r.Num().String())
	}
	if out == nil {
		return args
	}
	return out
}

// smallExponent reports whether a number literal is short and its exponent small enough to
// compute with exactly.
func smallExponent(s string) bool {
	if len(s) > 400 {
		return false
	}
	i := strings.IndexAny(s, "eE")
	if i < 0 {
		return true
	}
	e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
	return err == nil && e <= 400 && e >= -400
}

// jsonNumbers gives tools one representation of numbers whatever the caller built: every
// Go number in args (at any depth) becomes a json.Number, as decoding JSON with UseNumber
// gives. args is not changed; it is returned as is when it holds no such number.
func jsonNumbers(args map[string]any) map[string]any {
	out, changed := numbersIn(args)
	if !changed {
		return args
	}
	return out.(map[string]any)
}

func numbersIn(v any) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		var out map[string]any
		for k, e := range x {
			if n, changed := numbersIn(e); changed {
				if out == nil {
					out = make(map[string]any, len(x))
					for k2, e2 := range x {
						out[k2] = e2
					}
				}
				out[k] = n
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	case []any:
		var out []any
		for i, e := range x {
			if n, changed := numbersIn(e); changed {
				if out == nil {
					out = append([]any(nil), x...)
				}
				out[i] = n
			}
		}
		if out == nil {
			return x, false
		}
		return out, true
	case int:
		return json.Number(strconv.Itoa(x)), true
	case int64:
		return json.Number(strconv.FormatInt(x, 10)), true
	case int32:
		return json.Number(strconv.FormatInt(int64(x), 10)), true
	case uint64:
		return json.Number(strconv.FormatUint(x, 10)), true
	case uint:
		return json.Number(strconv.FormatUint(uint64(x), 10)), true
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return x, false
		}
		return json.Number(strconv.FormatFloat(x, 'g', -1, 64)), true
	case float32:
		return numbersIn(float64(x))
	}
	return v, false
}
