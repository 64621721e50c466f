package manifest

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/yamlnode"
)

// decoder reads one YAML file into domain values, collecting every problem with its position
// instead of stopping at the first.
type decoder struct {
	file  string
	probs workflow.Problems
}

func (d *decoder) errorf(n ast.Node, hint, format string, args ...any) {
	d.probs = append(d.probs, workflow.Problem{Pos: d.pos(n), Msg: fmt.Sprintf(format, args...), Hint: hint})
}

// pos is a node's position; a mapping's is its first key's.
func (d *decoder) pos(n ast.Node) workflow.Pos {
	p := workflow.Pos{File: d.file, Line: 1, Col: 1}
	if n == nil {
		return p
	}
	if m, ok := n.(*ast.MappingNode); ok && len(m.Values) > 0 {
		n = m.Values[0]
	}
	if mv, ok := n.(*ast.MappingValueNode); ok {
		n = mv.Key
	}
	if tk := n.GetToken(); tk != nil && tk.Position != nil {
		p.Line, p.Col = max(tk.Position.Line, 1), max(tk.Position.Column, 1)
	}
	return p
}

// parse returns the root of the file's one document, or nil after recording a problem. A
// UTF-8 byte order mark the file starts with is left out (see yamlnode.CheckFile).
func (d *decoder) parse(data []byte) ast.Node {
	data, err := yamlnode.CheckFile(d.file, data)
	var le *yamlnode.LimitError
	if errors.As(err, &le) {
		d.probs = append(d.probs, workflow.Problem{Pos: workflow.Pos{File: d.file, Line: le.Line, Col: le.Column}, Msg: le.Msg})
		return nil
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		var ye yaml.Error
		if errors.As(err, &ye) {
			p := workflow.Pos{File: d.file, Line: 1, Col: 1}
			if tk := ye.GetToken(); tk != nil && tk.Position != nil {
				p.Line, p.Col = tk.Position.Line, tk.Position.Column
			}
			d.probs = append(d.probs, workflow.Problem{Pos: p, Msg: "invalid YAML: " + ye.GetMessage()})
			return nil
		}
		first, _, _ := strings.Cut(err.Error(), "\n")
		d.errorf(nil, "", "invalid YAML: %s", first)
		return nil
	}
	var bodies []ast.Node
	for _, doc := range f.Docs {
		if doc != nil && doc.Body != nil {
			bodies = append(bodies, doc.Body)
		}
	}
	switch len(bodies) {
	case 0:
		d.errorf(nil, "", "the file is empty: a tool manifest needs at least a name and steps")
		return nil
	case 1:
		return bodies[0]
	}
	d.errorf(bodies[1], "", "a tool manifest holds one YAML document, found %d", len(bodies))
	return nil
}

// resolve looks through anchors and tags; aliases are refused (a manifest has no use for them,
// and refusing them rules out alias bombs).
func (d *decoder) resolve(n ast.Node) ast.Node {
	for {
		switch x := n.(type) {
		case *ast.AnchorNode:
			n = x.Value
		case *ast.TagNode:
			n = x.Value
		case *ast.AliasNode:
			d.errorf(x, "", "YAML aliases (*name) are not supported in tool manifests")
			return nil
		default:
			return n
		}
	}
}

// field is one key of a mapping.
type field struct {
	key   string
	node  ast.Node // the key, for positions
	value ast.Node // resolved; nil for null
}

// fields reads a mapping, reporting unknown and repeated keys (with the nearest known key).
func (d *decoder) fields(n ast.Node, what string, known []string) []field {
	n = d.resolve(n)
	return d.entries(n, n, what, known)
}

// anyFields reads a mapping with keys of the user's choosing; a repeated key is an error.
func (d *decoder) anyFields(f field, what string) []field {
	return d.entries(f.value, f.node, what, nil)
}

// entries reads the entries of n, a resolved node (nil for none), with their values resolved.
// It reports n at the position of at when it is not a mapping, repeated keys, and, unless
// known is nil, keys not in known.
func (d *decoder) entries(n, at ast.Node, what string, known []string) []field {
	var values []*ast.MappingValueNode
	switch m := n.(type) {
	case nil:
		return nil
	case *ast.MappingNode:
		values = m.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{m}
	default:
		d.errorf(at, "", "%s must be a mapping, got %s", what, yamlnode.Kind(n))
		return nil
	}
	var out []field
	seen := map[string]bool{}
	for _, mv := range values {
		key := strings.TrimSpace(mv.Key.String())
		switch {
		case known != nil && !slices.Contains(known, key):
			d.errorf(mv, workflow.DidYouMean(key, known), "unknown key %q in %s", key, what)
			continue
		case seen[key]:
			d.errorf(mv, "", "key %q appears twice in %s", key, what)
			continue
		}
		seen[key] = true
		v := d.resolve(mv.Value)
		if _, isNull := v.(*ast.NullNode); isNull {
			v = nil
		}
		out = append(out, field{key: key, node: mv, value: v})
	}
	return out
}

// str reads a scalar as text: strings decoded, numbers and booleans as written (so
// version: 1.0 stays "1.0").
func (d *decoder) str(f field, what string) string {
	switch v := f.value.(type) {
	case nil:
		return ""
	case *ast.StringNode:
		return v.Value
	case *ast.LiteralNode:
		if v.Value == nil {
			return ""
		}
		return v.Value.Value
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
		if tk := v.GetToken(); tk != nil {
			return tk.Value
		}
	}
	d.errorf(f.node, "", "%s must be a string, got %s", what, yamlnode.Kind(f.value))
	return ""
}

func (d *decoder) boolean(f field, what string) bool {
	if b, ok := f.value.(*ast.BoolNode); ok {
		return b.Value
	}
	d.errorf(f.node, "", "%s must be true or false, got %s", what, yamlnode.Kind(f.value))
	return false
}

// list returns a sequence's items, resolved.
func (d *decoder) list(f field, what string) []ast.Node {
	switch s := f.value.(type) {
	case nil:
		return nil
	case *ast.SequenceNode:
		out := make([]ast.Node, 0, len(s.Values))
		for _, v := range s.Values {
			out = append(out, d.resolve(v))
		}
		return out
	}
	d.errorf(f.node, "", "%s must be a list, got %s", what, yamlnode.Kind(f.value))
	return nil
}

// strList reads a list of scalars as text.
func (d *decoder) strList(f field, what string) []string {
	var out []string
	for i, n := range d.list(f, what) {
		out = append(out, d.str(field{key: f.key, node: n, value: n}, fmt.Sprintf("%s[%d]", what, i)))
	}
	return out
}

// strMap reads a mapping of scalars as text (numbers become their text).
func (d *decoder) strMap(f field, what string) map[string]string {
	if f.value == nil {
		return nil
	}
	out := map[string]string{}
	for _, af := range d.anyFields(f, what) {
		out[af.key] = d.str(af, what+"."+af.key)
	}
	return out
}

// value decodes any node into plain Go values (for defaults and enums).
func (d *decoder) value(f field, what string) any {
	if f.value == nil {
		return nil
	}
	var v any
	if err := yaml.NodeToValue(f.value, &v); err != nil {
		d.errorf(f.node, "", "%s: %v", what, err)
		return nil
	}
	return v
}
