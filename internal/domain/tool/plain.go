package tool

import (
	"encoding/json"
	"math"
)

// PlainArgs gives numbers as Go numbers, for templates to compute with and records to keep as
// numbers: a json.Number becomes an int64 or a float64 (one too large for both stays the
// decimal text). Other values are kept.
func PlainArgs(args map[string]any) map[string]any {
	out := make(map[string]any, len(args))
	for k, v := range args {
		n, ok := v.(json.Number)
		if !ok {
			out[k] = v
			continue
		}
		if i, err := n.Int64(); err == nil {
			out[k] = i
		} else if f, err := n.Float64(); err == nil && !math.IsInf(f, 0) {
			out[k] = f
		} else {
			out[k] = n.String()
		}
	}
	return out
}
