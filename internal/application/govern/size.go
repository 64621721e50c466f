package govern

import (
	"fmt"

	"github.com/awf-dev/awf/internal/domain/ports"
)

// checkSize returns the rule under which the call gate refuses the arguments and why, or "":
// their encoded size (estimated without encoding: string lengths, numbers and punctuation) and
// nesting depth must stay under the limits.
func (g *Gate) checkSize(args map[string]any) (rule, msg string) {
	lim := g.d.Limits
	size, deep := measure(args, 0, lim.MaxArgDepth)
	switch {
	case deep:
		return ports.RuleArgsDepth, fmt.Sprintf("denied by the call gate: arguments nest deeper than %d levels", lim.MaxArgDepth)
	case size > lim.MaxArgBytes:
		return ports.RuleArgsSize, fmt.Sprintf("denied by the call gate: arguments are about %d bytes, over the limit of %d; pass large content in smaller pieces", size, lim.MaxArgBytes)
	}
	return "", ""
}

// measure estimates v's JSON size and reports whether it nests deeper than max.
func measure(v any, depth, max int) (int, bool) {
	if depth > max {
		return 0, true
	}
	switch v := v.(type) {
	case string:
		return len(v) + 2, false
	case map[string]any:
		n := 2
		for k, e := range v {
			m, deep := measure(e, depth+1, max)
			if deep {
				return 0, true
			}
			n += len(k) + 4 + m
		}
		return n, false
	case []any:
		n := 2
		for _, e := range v {
			m, deep := measure(e, depth+1, max)
			if deep {
				return 0, true
			}
			n += m + 1
		}
		return n, false
	case map[string]string:
		n := 2
		for k, e := range v {
			n += len(k) + len(e) + 6
		}
		return n, depth+1 > max
	case []string:
		n := 2
		for _, e := range v {
			n += len(e) + 3
		}
		return n, depth+1 > max
	}
	return 8, false
}
