package tool

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/awf-dev/awf/internal/domain/workflow"
)

// Chain is a pipeline of tools run in sequence (seed 003's ToolChain). Every step reads its
// arguments from the accumulated context through InputMapping and writes its result back under
// OutputKey (or merges an object result into the context when Merge is set). The first failure
// stops the chain unless ContinueOnFailure is set (the YAML form's stop_on_failure: false).
type Chain struct {
	Steps             []ChainStep
	ContinueOnFailure bool
}

// ChainStep is one step of a Chain. InputMapping maps an argument name of the tool to a dot
// path into the context ("user.profile.name", "items.0.id"); an empty mapping passes the whole
// context as the arguments. Exactly one of OutputKey and Merge must be set.
type ChainStep struct {
	Tool         string
	InputMapping map[string]string
	OutputKey    string
	Merge        bool
	Pos          workflow.Pos
}

// ChainResult is the outcome of a chain run (seed 003's ChainResult).
type ChainResult struct {
	Success     bool           `json:"success" yaml:"success"`
	Context     map[string]any `json:"context" yaml:"context"`
	StepResults []Outcome      `json:"step_results" yaml:"step_results"`
	Errors      []string       `json:"errors,omitempty" yaml:"errors,omitempty"`
	DurationMS  float64        `json:"duration_ms" yaml:"duration_ms"`
}

// Check reports the problems a chain has whatever the tools do: no steps, a step without a
// tool, a step with both or neither of output_key and merge, an empty mapping path.
func (c Chain) Check() []string {
	if len(c.Steps) == 0 {
		return []string{"a chain needs at least one step"}
	}
	var probs []string
	for i, s := range c.Steps {
		at := fmt.Sprintf("step %d", i+1)
		if s.Tool != "" {
			at += " (" + s.Tool + ")"
		}
		switch {
		case s.Tool == "":
			probs = append(probs, at+": tool is required")
		case s.OutputKey == "" && !s.Merge:
			probs = append(probs, at+": set output_key to keep the result, or merge: true to merge an object result into the context")
		case s.OutputKey != "" && s.Merge:
			probs = append(probs, at+": output_key and merge exclude each other")
		}
		for _, arg := range slices.Sorted(maps.Keys(s.InputMapping)) {
			if strings.TrimSpace(s.InputMapping[arg]) == "" {
				probs = append(probs, fmt.Sprintf("%s: input_mapping.%s: empty path", at, arg))
			}
		}
	}
	return probs
}

// MapInput builds a step's arguments from the context. A path that leads nowhere is an error
// naming the argument and the path.
func (s ChainStep) MapInput(ctx map[string]any) (map[string]any, error) {
	if len(s.InputMapping) == 0 {
		return maps.Clone(ctx), nil
	}
	args := make(map[string]any, len(s.InputMapping))
	for _, arg := range slices.Sorted(maps.Keys(s.InputMapping)) {
		v, err := Lookup(ctx, s.InputMapping[arg])
		if err != nil {
			return nil, fmt.Errorf("input_mapping.%s: %w", arg, err)
		}
		args[arg] = v
	}
	return args, nil
}

// Store puts a step's result into the context: under OutputKey, or merged key by key when
// Merge is set (the result must then be an object).
func (s ChainStep) Store(ctx map[string]any, data any) error {
	switch {
	case s.OutputKey != "":
		ctx[s.OutputKey] = data
		return nil
	case s.Merge:
		m, ok := data.(map[string]any)
		if !ok {
			return fmt.Errorf("merge: the result is %s, not an object; set output_key instead", KindOf(data))
		}
		maps.Copy(ctx, m)
		return nil
	}
	return fmt.Errorf("the result (%s) needs a place: set output_key, or merge: true for an object", KindOf(data))
}

// Lookup follows a dot path through maps and lists: "a.b.c", "items.0.name". A step that
// leads nowhere is an error naming the path walked so far and what is there instead.
func Lookup(root map[string]any, path string) (any, error) {
	if path == "" {
		return nil, fmt.Errorf("empty path")
	}
	var cur any = root
	walked := ""
	for seg := range strings.SplitSeq(path, ".") {
		next := seg
		if walked != "" {
			next = walked + "." + seg
		}
		switch v := cur.(type) {
		case map[string]any:
			val, ok := v[seg]
			if !ok {
				return nil, missingKey(next, walked, v)
			}
			cur = val
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(v) {
				return nil, fmt.Errorf("no value at %s: %s is a list of %d items", next, walked, len(v))
			}
			cur = v[i]
		default:
			return nil, fmt.Errorf("no value at %s: %s is %s", next, walked, KindOf(cur))
		}
		walked = next
	}
	return cur, nil
}

func missingKey(path, parent string, m map[string]any) error {
	keys := slices.Sorted(maps.Keys(m))
	where := "the context"
	if parent != "" {
		where = parent
	}
	msg := fmt.Sprintf("no value at %s (%s has: %s)", path, where, strings.Join(keys, ", "))
	if len(keys) == 0 {
		msg = fmt.Sprintf("no value at %s (%s is empty)", path, where)
	}
	last := path[strings.LastIndexByte(path, '.')+1:]
	if hint := workflow.DidYouMean(last, keys); hint != "" {
		msg += "; " + hint
	}
	return fmt.Errorf("%s", msg)
}

// KindOf names the JSON kind of a decoded value for messages: "an object", "a string", ...
func KindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, float32, int, int64, int32, uint, uint64, uint32:
		return "a number"
	}
	if _, ok := v.(interface{ Int64() (int64, error) }); ok { // json.Number
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}
