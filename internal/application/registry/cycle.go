package registry

import (
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/workflow"
)

// cyclesLocked finds cycles in the static graph of manifests calling manifests (through
// aliases too) and reports each once, with its path: "a -> b -> a", at the reference that
// closes it.
func (r *Registry) cyclesLocked() workflow.Problems {
	const (
		white = iota
		grey
		black
	)
	color := map[*entry]int{}
	var stack []*entry
	var probs workflow.Problems
	reported := map[string]bool{}
	var visit func(e *entry)
	visit = func(e *entry) {
		color[e] = grey
		stack = append(stack, e)
		for _, ref := range e.Manifest.References() {
			t, err := r.lookupLocked(ref.Tool, e, false)
			if err != nil {
				continue
			}
			t = final(t)
			if t.Manifest == nil {
				continue
			}
			switch color[t] {
			case white:
				visit(t)
			case grey:
				cycle := stack[slices.Index(stack, t):]
				names := make([]string, 0, len(cycle)+1)
				for _, c := range cycle {
					names = append(names, c.Manifest.Ref())
				}
				key := strings.Join(slices.Sorted(slices.Values(names)), "\x00")
				if reported[key] {
					continue
				}
				reported[key] = true
				names = append(names, t.Manifest.Ref())
				pos := ref.Pos
				if pos.File == "" {
					pos = e.Pos
				}
				probs = append(probs, workflow.Problem{Pos: pos,
					Msg: "tool cycle: " + strings.Join(names, " -> ") + " (a tool may not call itself, directly or through others)"})
			}
		}
		stack = stack[:len(stack)-1]
		color[e] = black
	}
	for _, e := range r.manifestsLocked() {
		if color[e] == white {
			visit(e)
		}
	}
	return probs
}
