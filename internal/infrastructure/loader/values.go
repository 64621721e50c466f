package loader

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"

	"github.com/awf-dev/awf/internal/infrastructure/yamlnode"
)

var errKind = errors.New("wrong kind of value")

// intValue returns the value of an integer node (a float with no fraction is accepted).
func intValue(n ast.Node) (int64, error) {
	switch v := n.(type) {
	case *ast.IntegerNode:
		switch x := v.Value.(type) {
		case int64:
			return x, nil
		case uint64:
			if x <= math.MaxInt64 {
				return int64(x), nil
			}
		}
	case *ast.FloatNode:
		if v.Value == math.Trunc(v.Value) && math.Abs(v.Value) < 1<<53 {
			return int64(v.Value), nil
		}
	}
	return 0, errKind
}

// floatValue returns the value of a numeric node.
func floatValue(n ast.Node) (float64, error) {
	switch v := n.(type) {
	case *ast.FloatNode:
		return v.Value, nil
	case *ast.IntegerNode:
		switch x := v.Value.(type) {
		case int64:
			return float64(x), nil
		case uint64:
			return float64(x), nil
		}
	}
	return 0, errKind
}

// toAny converts a node to plain Go values. Problems (bad keys, unknown aliases, too much
// nesting) are reported and the faulty part becomes nil.
func (d *decoder) toAny(path string, n ast.Node) any {
	if !d.spend(path, n) {
		return nil
	}
	n, asString := d.resolve(path, n)
	if isNull(n) {
		return nil
	}
	if asString {
		if text, ok := scalarText(n); ok {
			return text
		}
	}
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value
	case *ast.LiteralNode:
		text, _ := scalarText(v)
		return text
	case *ast.BoolNode:
		return v.Value
	case *ast.IntegerNode:
		if i, err := intValue(v); err == nil {
			return i
		}
		f, _ := floatValue(v)
		return f
	case *ast.FloatNode, *ast.InfinityNode, *ast.NanNode:
		return scalarFloat(v)
	case *ast.SequenceNode:
		return d.seqToAny(path, v)
	case *ast.MappingNode, *ast.MappingValueNode:
		return d.mapToAny(path, v)
	}
	d.errorf(path, d.pos(n), "", "unsupported YAML value: %s", yamlnode.Kind(n))
	return nil
}

func scalarFloat(n ast.Node) float64 {
	switch v := n.(type) {
	case *ast.FloatNode:
		return v.Value
	case *ast.InfinityNode:
		return v.Value
	}
	return math.NaN()
}

func (d *decoder) seqToAny(path string, seq *ast.SequenceNode) any {
	if !d.enter(path, seq) {
		return nil
	}
	defer d.leave()
	out := make([]any, 0, len(seq.Values))
	for i, item := range seq.Values {
		out = append(out, d.toAny(fmt.Sprintf("%s[%d]", path, i), item))
	}
	return out
}

func (d *decoder) mapToAny(path string, n ast.Node) any {
	o := d.object(path, "value", n)
	if o == nil {
		return nil
	}
	out := make(map[string]any, len(o.entries))
	for _, e := range o.entries {
		out[e.key] = d.toAny(o.child(e.key), e.val)
	}
	return out
}

// duration decodes a duration: Go syntax ("30s", "1m30s") or a whole number of seconds.
func (o *object) duration(key string) time.Duration {
	n, pos, ok := o.get(key)
	if !ok {
		return 0
	}
	d, err := parseDuration(n)
	if err != nil {
		o.d.errorf(o.child(key), pos, "", "%q: %v", key, err)
		return 0
	}
	return d
}

func parseDuration(n ast.Node) (time.Duration, error) {
	if secs, err := intValue(n); err == nil {
		if secs < 0 || secs > math.MaxInt64/int64(time.Second) {
			return 0, fmt.Errorf("%d seconds is out of range", secs)
		}
		return time.Duration(secs) * time.Second, nil
	}
	text, ok := scalarText(n)
	if _, isStr := n.(*ast.StringNode); !ok || !isStr {
		return 0, fmt.Errorf("expected a duration such as \"30s\" or \"1m30s\" or a whole number of seconds, got %s", describe(n))
	}
	text = strings.TrimSpace(text)
	if secs, err := strconv.ParseInt(text, 10, 64); err == nil && secs >= 0 && secs <= math.MaxInt64/int64(time.Second) {
		return time.Duration(secs) * time.Second, nil
	}
	d, err := time.ParseDuration(text)
	if err != nil {
		return 0, fmt.Errorf("expected a duration such as \"30s\" or \"1m30s\" or a whole number of seconds, got %q", text)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration must not be negative, got %q", text)
	}
	return d, nil
}

// size decodes a byte size: a whole number of bytes or a number with a unit. KB, MB, GB, TB
// are powers of 1000; KiB, MiB, GiB, TiB and the single letters K, M, G, T are powers of 1024.
func (o *object) size(key string) int64 {
	n, pos, ok := o.get(key)
	if !ok {
		return 0
	}
	s, err := parseSize(n)
	if err != nil {
		o.d.errorf(o.child(key), pos, "", "%q: %v", key, err)
		return 0
	}
	return s
}

var sizeUnits = map[string]float64{
	"": 1, "b": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
}

func parseSize(n ast.Node) (int64, error) {
	if i, err := intValue(n); err == nil {
		if i < 0 {
			return 0, fmt.Errorf("size must not be negative, got %d", i)
		}
		return i, nil
	}
	text, ok := scalarText(n)
	if _, isStr := n.(*ast.StringNode); !ok || !isStr {
		return 0, fmt.Errorf("expected a size such as \"10MB\", \"1MiB\" or a number of bytes, got %s", describe(n))
	}
	t := strings.TrimSpace(text)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		i = len(t)
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	f, err := strconv.ParseFloat(num, 64)
	mult, known := sizeUnits[unit]
	if err != nil || !known || num == "" {
		return 0, fmt.Errorf("expected a size such as \"10MB\", \"1MiB\" or a number of bytes, got %q", text)
	}
	v := f * mult
	if v >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q is too large", text)
	}
	return int64(v), nil
}
