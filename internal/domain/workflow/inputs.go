package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/awf-dev/awf/internal/domain/fault"
)

// Coerce converts a value given for the input to its declared type and checks it against the
// input's enum, pattern and bounds. Strings, as they come from the command line, are parsed:
// "42" for an integer (int64), "1.5" for a number (float64), true/false/yes/no/on/off/1/0 for a
// boolean, JSON text for an array ([]any) or object (map[string]any). Typed values, as they come
// from an --input-file, are accepted when they fit. Strings are returned for string inputs; a
// number or boolean given for one becomes its text. Errors are of kind fault.Usage and name the
// input: `input "count": "abc" is not an integer`. Whether a file or directory exists is not
// checked here: that needs I/O.
func (in Input) Coerce(v any) (any, error) {
	out, err := in.coerce(v)
	if err != nil {
		return nil, fault.New(fault.Usage, "input %q: %w", in.Name, err)
	}
	return out, nil
}

// coerce is Coerce without the input's name in the message.
func (in Input) coerce(v any) (any, error) {
	out, err := convertInput(in.Type, v)
	if err != nil {
		return nil, err
	}
	if err := in.check(out); err != nil {
		return nil, err
	}
	return out, nil
}

// convertInput turns v into the Go representation of type t.
func convertInput(t InputType, v any) (any, error) {
	if v == nil {
		return nil, errors.New("a value is needed")
	}
	switch t {
	case TypeString, "":
		return toString(v)
	case TypeInteger:
		return toInteger(v)
	case TypeNumber:
		return toNumber(v)
	case TypeBoolean:
		return toBoolean(v)
	case TypeArray:
		return toArray(v)
	case TypeObject:
		return toObject(v)
	}
	return nil, fmt.Errorf("unknown type %q", t)
}

func toString(v any) (any, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		return formatNum(x), nil
	case float32:
		return formatNum(float64(x)), nil
	}
	if i, ok := asInt64(v); ok {
		return strconv.FormatInt(i, 10), nil
	}
	return nil, fmt.Errorf("%s is not a string", showValue(v))
}

func toInteger(v any) (any, error) {
	if i, ok := asInt64(v); ok {
		return i, nil
	}
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			return int64(x), nil
		}
	case string:
		if i, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64); err == nil {
			return i, nil
		}
	}
	return nil, fmt.Errorf("%s is not an integer", showValue(v))
}

func toNumber(v any) (any, error) {
	if i, ok := asInt64(v); ok {
		return float64(i), nil
	}
	switch x := v.(type) {
	case float64:
		return x, nil
	case float32:
		return float64(x), nil
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(x), 64)
		if err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return f, nil
		}
	}
	return nil, fmt.Errorf("%s is not a number", showValue(v))
}

func toBoolean(v any) (any, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true", "yes", "on", "1":
			return true, nil
		case "false", "no", "off", "0":
			return false, nil
		}
	default:
		if i, ok := asInt64(v); ok && (i == 0 || i == 1) {
			return i == 1, nil
		}
	}
	return nil, fmt.Errorf("%s is not a boolean (use true or false)", showValue(v))
}

func toArray(v any) (any, error) {
	switch x := v.(type) {
	case []any:
		return x, nil
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out, nil
	case string:
		var out []any
		if err := json.Unmarshal([]byte(x), &out); err == nil && out != nil {
			return out, nil
		}
		return nil, fmt.Errorf("%s is not a JSON array such as [\"a\", \"b\"]", showValue(v))
	}
	return nil, fmt.Errorf("%s is not an array", showValue(v))
}

func toObject(v any) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		return x, nil
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, s := range x {
			out[k] = s
		}
		return out, nil
	case string:
		var out map[string]any
		if err := json.Unmarshal([]byte(x), &out); err == nil && out != nil {
			return out, nil
		}
		return nil, fmt.Errorf("%s is not a JSON object such as {\"key\": \"value\"}", showValue(v))
	}
	return nil, fmt.Errorf("%s is not an object", showValue(v))
}

// asInt64 returns the value of any Go integer that fits in an int64.
func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint:
		return int64(x), uint64(x) <= math.MaxInt64
	case uint8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case uint64:
		return int64(x), x <= math.MaxInt64
	}
	return 0, false
}

// check applies the enum, pattern and bounds to a converted value.
func (in Input) check(v any) error {
	if len(in.Enum) > 0 && !in.inEnum(v) {
		opts := make([]string, len(in.Enum))
		for i, e := range in.Enum {
			opts[i] = showValue(e)
		}
		return fmt.Errorf("%s is not one of %s", showValue(v), strings.Join(opts, ", "))
	}
	if s, ok := v.(string); ok && in.Pattern != "" {
		re, err := regexp.Compile(in.Pattern)
		if err != nil {
			return fmt.Errorf("pattern %q does not compile: %v", in.Pattern, err)
		}
		if !re.MatchString(s) {
			return fmt.Errorf("%s does not match the pattern %s", showValue(v), in.Pattern)
		}
	}
	return in.bounds(v)
}

// inEnum reports whether v equals one of the enum values once converted to the input's type.
func (in Input) inEnum(v any) bool {
	for _, e := range in.Enum {
		if c, err := convertInput(in.Type, e); err == nil && reflect.DeepEqual(c, v) {
			return true
		}
	}
	return false
}

// bounds checks min and max: the value of numbers, the length of strings (in characters) and
// the number of items of arrays.
func (in Input) bounds(v any) error {
	if in.Min == nil && in.Max == nil {
		return nil
	}
	var n float64
	var what string
	switch x := v.(type) {
	case int64:
		n = float64(x)
	case float64:
		n = x
	case string:
		n, what = float64(utf8.RuneCountInString(x)), "length"
	case []any:
		n, what = float64(len(x)), "number of items"
	default:
		return nil
	}
	if in.Min != nil && n < *in.Min {
		if what != "" {
			return fmt.Errorf("%s has %s %s, less than the minimum %s", showValue(v), what, formatNum(n), formatNum(*in.Min))
		}
		return fmt.Errorf("%s is less than the minimum %s", showValue(v), formatNum(*in.Min))
	}
	if in.Max != nil && n > *in.Max {
		if what != "" {
			return fmt.Errorf("%s has %s %s, more than the maximum %s", showValue(v), what, formatNum(n), formatNum(*in.Max))
		}
		return fmt.Errorf("%s is more than the maximum %s", showValue(v), formatNum(*in.Max))
	}
	return nil
}

// formatNum formats a number without a needless fraction: 100, 1.5.
func formatNum(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// showValue formats a value for messages: strings quoted, long values cut.
func showValue(v any) string {
	var s string
	switch x := v.(type) {
	case string:
		s = strconv.Quote(x)
	case float64:
		s = formatNum(x)
	case []any, map[string]any:
		b, err := json.Marshal(x)
		if err != nil {
			s = fmt.Sprint(x)
		} else {
			s = string(b)
		}
	default:
		s = fmt.Sprint(v)
	}
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

// ResolveInputs turns the values given for a run into the values templates see. Each given
// value is coerced (see Input.Coerce); an input not given takes its default; a required input
// with neither is listed in missing (all of them, in declaration order) so that the caller can
// prompt for them or report them together; an optional input with neither gets the zero value
// of its type ("" for strings). A nil given value counts as not given. Given names that the
// workflow does not declare and values that do not coerce are all reported in err, of kind
// fault.Usage. File and directory checks (file_exists, dir_exists) are left to the caller.
//
// The relative default of a file_exists or dir_exists input is a path written in the workflow
// file, so it is resolved against the file's directory (w.Dir), like prompt_file and
// sub-workflow paths; a given value is the caller's and stays as given (relative to the
// working directory).
func (w *Workflow) ResolveInputs(given map[string]any) (values map[string]any, missing []string, err error) {
	var errs []error
	declared := make([]string, 0, len(w.Inputs))
	byName := make(map[string]bool, len(w.Inputs))
	for _, in := range w.Inputs {
		declared = append(declared, in.Name)
		byName[in.Name] = true
	}
	names := make([]string, 0, len(given))
	for name := range given {
		names = append(names, name)
	}
	sort.Strings(names)
	errs = unknownInputs(slices.DeleteFunc(names, func(n string) bool { return byName[n] }), declared)
	values = make(map[string]any, len(w.Inputs))
	for _, in := range w.Inputs {
		v, err := in.resolve(given[in.Name], w.Dir)
		switch {
		case err != nil:
			errs = append(errs, err)
		case v != nil:
			values[in.Name] = v
		case in.Required:
			missing = append(missing, in.Name)
		default:
			values[in.Name] = zeroValue(in.Type)
		}
	}
	if len(errs) > 0 {
		return values, missing, fault.Wrap(fault.Usage, errors.Join(errs...))
	}
	return values, missing, nil
}

// resolve returns the coerced given value, else the coerced default (a relative path default
// joined to dir), else nil.
func (in Input) resolve(given any, dir string) (any, error) {
	if given != nil {
		return in.Coerce(given)
	}
	if in.HasDefault && in.Default != nil {
		v, err := in.coerce(in.Default)
		if err != nil {
			return nil, fault.New(fault.Invalid, "default of input %q: %w", in.Name, err)
		}
		if p, ok := v.(string); ok && (in.FileExists || in.DirExists) && dir != "" && p != "" && !filepath.IsAbs(p) {
			v = filepath.Join(dir, p)
		}
		return v, nil
	}
	return nil, nil
}

// unknownInputs is the error for each of names, given but not declared: with a hint where a
// declared name is near, else with the declared names, listed for the first such one only.
// Thousands of unknown names for a workflow of thousands of inputs each listed them all, and
// each was compared with all of them (4,000 of each: 4.6 s and 710 MB); hints are found
// within a Hinter's budget.
func unknownInputs(names, declared []string) []error {
	var errs []error
	hints, listed := NewHinter(), false
	for _, name := range names {
		hint := ""
		if len(declared) > 0 {
			hint = hints.DidYouMean(name, declared)
		}
		switch {
		case len(declared) == 0:
			errs = append(errs, fault.New(fault.Usage, "unknown input %q: the workflow declares no inputs", name))
		case hint != "":
			errs = append(errs, fault.New(fault.Usage, "unknown input %q (%s)", name, hint))
		case !listed:
			listed = true
			errs = append(errs, fault.New(fault.Usage, "unknown input %q (the workflow declares %s)", name, strings.Join(declared, ", ")))
		default:
			errs = append(errs, fault.New(fault.Usage, "unknown input %q (not declared: see above)", name))
		}
	}
	return errs
}

// zeroValue returns the value of an optional input given nothing and having no default.
func zeroValue(t InputType) any {
	switch t {
	case TypeInteger:
		return int64(0)
	case TypeNumber:
		return float64(0)
	case TypeBoolean:
		return false
	case TypeArray:
		return []any{}
	case TypeObject:
		return map[string]any{}
	}
	return ""
}
