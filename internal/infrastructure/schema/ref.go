package schema

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// resolveRef finds the target of a local reference: "#" (the root), "#/a/b" (a JSON pointer)
// or "#name" (an $anchor). It returns nil for references it leaves to jsonschema-go (those
// relative to an $id), and an error for a local reference that leads nowhere.
func (s *Schema) resolveRef(ref string) (*jsonschema.Schema, error) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, nil
	}
	if frag == "" {
		return s.root, nil
	}
	if !strings.HasPrefix(frag, "/") {
		if t := findAnchor(s.root, frag, map[*jsonschema.Schema]bool{}); t != nil {
			return t, nil
		}
		return nil, nil
	}
	unescaped, err := url.PathUnescape(frag)
	if err != nil {
		return nil, fmt.Errorf("$ref %q: %w", ref, err)
	}
	cur := s.root
	segs := strings.Split(unescaped[1:], "/")
	for i := 0; i < len(segs); i++ {
		seg := pointerSegment(segs[i])
		var arg string
		if takesKey(seg) || takesIndex(seg) {
			if i+1 >= len(segs) {
				return nil, fmt.Errorf("$ref %q: %s needs a key after it", ref, seg)
			}
			i++
			arg = pointerSegment(segs[i])
		}
		next, known := step(cur, seg, arg)
		if !known {
			return nil, nil // a keyword the walker does not know: jsonschema-go resolves it
		}
		if next == nil {
			return nil, fmt.Errorf("$ref %q: nothing at /%s", ref, strings.Join(segs[:i+1], "/"))
		}
		cur = next
	}
	return cur, nil
}

func pointerSegment(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
}

func takesKey(seg string) bool {
	switch seg {
	case "$defs", "definitions", "properties", "patternProperties", "dependentSchemas", "dependencies":
		return true
	}
	return false
}

func takesIndex(seg string) bool {
	switch seg {
	case "prefixItems", "allOf", "anyOf", "oneOf":
		return true
	}
	return false
}

// step follows one keyword (and its key or index) from sc. known is false for keywords the
// walker does not follow.
func step(sc *jsonschema.Schema, seg, arg string) (next *jsonschema.Schema, known bool) {
	index := func(list []*jsonschema.Schema) *jsonschema.Schema {
		i, err := strconv.Atoi(arg)
		if err != nil || i < 0 || i >= len(list) {
			return nil
		}
		return list[i]
	}
	switch seg {
	case "$defs":
		return sc.Defs[arg], true
	case "definitions":
		return sc.Definitions[arg], true
	case "properties":
		return sc.Properties[arg], true
	case "patternProperties":
		return sc.PatternProperties[arg], true
	case "dependentSchemas":
		return sc.DependentSchemas[arg], true
	case "dependencies":
		return sc.DependencySchemas[arg], true
	case "prefixItems":
		return index(sc.PrefixItems), true
	case "allOf":
		return index(sc.AllOf), true
	case "anyOf":
		return index(sc.AnyOf), true
	case "oneOf":
		return index(sc.OneOf), true
	case "items":
		if sc.ItemsArray != nil { // draft-07 tuple form: /items/0
			return nil, false
		}
		return sc.Items, true
	case "additionalItems":
		return sc.AdditionalItems, true
	case "additionalProperties":
		return sc.AdditionalProperties, true
	case "propertyNames":
		return sc.PropertyNames, true
	case "contains":
		return sc.Contains, true
	case "not":
		return sc.Not, true
	case "if":
		return sc.If, true
	case "then":
		return sc.Then, true
	case "else":
		return sc.Else, true
	}
	return nil, false
}

func findAnchor(sc *jsonschema.Schema, name string, seen map[*jsonschema.Schema]bool) *jsonschema.Schema {
	if sc == nil || seen[sc] {
		return nil
	}
	seen[sc] = true
	if sc.Anchor == name {
		return sc
	}
	for _, c := range children(sc) {
		if t := findAnchor(c, name, seen); t != nil {
			return t
		}
	}
	return nil
}
