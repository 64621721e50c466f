package loader

import (
	"fmt"
	"slices"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/yamlnode"
)

// entry is one key of a mapping with its value, unresolved.
type entry struct {
	key    string
	keyPos workflow.Pos
	val    ast.Node
	valPos workflow.Pos
}

// object is a YAML mapping being decoded into a domain value. Its getters treat a null value
// as absent, report a value of the wrong kind as a problem at the value's position and return
// the zero value, so that decoding goes on and every problem of the file is found.
type object struct {
	d       *decoder
	path    string // field path of the mapping itself; "" for the document
	pos     workflow.Pos
	entries []entry
	index   map[string]int
}

// child returns the field path of a key of the object.
func (o *object) child(key string) string {
	if o.path == "" {
		return key
	}
	return o.path + "." + key
}

// object decodes a mapping. A null node gives an empty object; any other kind is reported as
// "<what> must be a mapping" and gives nil.
func (d *decoder) object(path, what string, n ast.Node) *object {
	pos := d.pos(n)
	n, _ = d.resolve(path, n)
	o := &object{d: d, path: path, pos: pos, index: map[string]int{}}
	if isNull(n) {
		return o
	}
	m, ok := n.(*ast.MappingNode)
	if !ok {
		if mv, isEntry := n.(*ast.MappingValueNode); isEntry {
			m = &ast.MappingNode{Values: []*ast.MappingValueNode{mv}}
		} else {
			d.errorf(path, pos, "", "%s must be a mapping, got %s", what, yamlnode.Kind(n))
			return nil
		}
	}
	if !d.enter(path, n) {
		return nil
	}
	defer d.leave()
	var merges []ast.Node
	for _, mv := range m.Values {
		if mv == nil {
			continue
		}
		if _, isMerge := mv.Key.(*ast.MergeKeyNode); isMerge {
			merges = append(merges, mv.Value)
			continue
		}
		o.add(mv, false)
	}
	for _, mn := range merges {
		o.merge(mn)
	}
	return o
}

// add appends one entry; a key given twice is an error unless it came from a merge (<<),
// where explicit keys win.
func (o *object) add(mv *ast.MappingValueNode, merged bool) {
	d := o.d
	keyNode, _ := d.resolve(o.path, mv.Key)
	key, ok := scalarText(keyNode)
	keyPos := d.pos(mv)
	if !ok {
		d.errorf(o.path, keyPos, "", "keys must be plain names, got %s", yamlnode.Kind(keyNode))
		return
	}
	if i, dup := o.index[key]; dup {
		if !merged {
			first := o.entries[i].keyPos
			d.errorf(o.child(key), keyPos, "", "duplicate key %q (first at line %d)", key, first.Line)
		}
		return
	}
	e := entry{key: key, keyPos: keyPos, val: mv.Value, valPos: keyPos}
	if !isNull(mv.Value) {
		e.valPos = d.pos(mv.Value)
	}
	o.index[key] = len(o.entries)
	o.entries = append(o.entries, e)
	d.record(o.child(key), e.valPos)
	if lit, ok := mv.Value.(*ast.LiteralNode); ok && lit.Start != nil && lit.Start.Type == token.LiteralType {
		d.block(o.child(key), e.valPos)
	}
	if s, ok := mv.Value.(*ast.StringNode); ok && oneLineQuoted(s.Token) {
		d.quoted(o.child(key), e.valPos)
	}
}

// merge adds the keys of a merged mapping (<<: *base or a list of them) not given explicitly.
func (o *object) merge(n ast.Node) {
	d := o.d
	n, _ = d.resolve(o.path, n)
	var maps []ast.Node
	switch v := n.(type) {
	case *ast.SequenceNode:
		for _, x := range v.Values {
			x, _ = d.resolve(o.path, x)
			maps = append(maps, x)
		}
	default:
		maps = append(maps, v)
	}
	for _, x := range maps {
		m, ok := x.(*ast.MappingNode)
		if !ok {
			if isNil(x) {
				continue
			}
			d.errorf(o.path, d.pos(x), "", "<< must merge a mapping, got %s", yamlnode.Kind(x))
			continue
		}
		if !d.enter(o.path, m) {
			return
		}
		for _, mv := range m.Values {
			if mv != nil {
				o.add(mv, true)
			}
		}
		d.leave()
	}
}

// has reports whether the key is present with a non-null value.
func (o *object) has(key string) bool {
	if o == nil {
		return false
	}
	i, ok := o.index[key]
	return ok && !isNull(o.entries[i].val)
}

// get returns the resolved value of a key and its position; nil when absent or null.
func (o *object) get(key string) (ast.Node, workflow.Pos, bool) {
	if o == nil {
		return nil, workflow.Pos{}, false
	}
	i, ok := o.index[key]
	if !ok {
		return nil, workflow.Pos{}, false
	}
	e := o.entries[i]
	n, asString := o.d.resolve(o.child(key), e.val)
	if isNull(n) {
		return nil, e.valPos, false
	}
	if asString {
		if text, ok := scalarText(n); ok {
			n = &ast.StringNode{BaseNode: &ast.BaseNode{}, Token: n.GetToken(), Value: text}
		}
	}
	return n, e.valPos, true
}

// raw returns the unresolved value of a key, for nested objects and lists.
func (o *object) raw(key string) (ast.Node, bool) {
	if !o.has(key) {
		return nil, false
	}
	return o.entries[o.index[key]].val, true
}

// checkKeys reports every key not in known, suggesting the nearest known key.
func (o *object) checkKeys(what string, known []string) {
	if o == nil {
		return
	}
	for _, e := range o.entries {
		if !slices.Contains(known, e.key) {
			o.unknown(e, what, known)
		}
	}
}

// unknown reports one unknown key.
func (o *object) unknown(e entry, what string, known []string) {
	hint := workflow.DidYouMean(e.key, known)
	if hint != "" {
		o.d.suppress = append(o.d.suppress, o.child(workflow.Suggest(e.key, known)))
	}
	o.d.errorf(o.child(e.key), e.keyPos, hint, "unknown key %q in %s", e.key, what)
}

// str decodes a string field. Numbers and booleans are taken as their source text.
func (o *object) str(key string) string {
	n, pos, ok := o.get(key)
	if !ok {
		return ""
	}
	text, isScalar := scalarText(n)
	if !isScalar {
		o.d.errorf(o.child(key), pos, "", "%q must be a string, got %s", key, yamlnode.Kind(n))
		return ""
	}
	return text
}

// boolean decodes a true/false field.
func (o *object) boolean(key string) bool {
	b := o.boolp(key)
	return b != nil && *b
}

// boolp decodes a true/false field, nil when absent.
func (o *object) boolp(key string) *bool {
	n, pos, ok := o.get(key)
	if !ok {
		return nil
	}
	b, isBool := n.(*ast.BoolNode)
	if !isBool {
		o.d.errorf(o.child(key), pos, "", "%q must be true or false, got %s", key, describe(n))
		return nil
	}
	return &b.Value
}

// integer decodes a whole-number field; negative numbers are errors.
func (o *object) integer(key string) int {
	n, pos, ok := o.get(key)
	if !ok {
		return 0
	}
	i, err := intValue(n)
	if err != nil {
		o.d.errorf(o.child(key), pos, "", "%q must be a whole number, got %s", key, describe(n))
		return 0
	}
	if i < 0 {
		o.d.errorf(o.child(key), pos, "", "%q must not be negative, got %d", key, i)
		return 0
	}
	return int(i)
}

// number decodes a numeric field (integers are accepted), nil when absent.
func (o *object) number(key string) *float64 {
	n, pos, ok := o.get(key)
	if !ok {
		return nil
	}
	f, err := floatValue(n)
	if err != nil {
		o.d.errorf(o.child(key), pos, "", "%q must be a number, got %s", key, describe(n))
		return nil
	}
	return &f
}

// strings decodes a list of strings.
func (o *object) strings(key string) []string {
	n, pos, ok := o.get(key)
	if !ok {
		return nil
	}
	seq, isSeq := n.(*ast.SequenceNode)
	if !isSeq {
		o.d.errorf(o.child(key), pos, "", "%q must be a list of strings, got %s", key, yamlnode.Kind(n))
		return nil
	}
	out := make([]string, 0, len(seq.Values))
	for i, item := range seq.Values {
		path := fmt.Sprintf("%s[%d]", o.child(key), i)
		ipos := o.d.pos(item)
		o.d.record(path, ipos)
		item, _ = o.d.resolve(path, item)
		text, isScalar := scalarText(item)
		if !isScalar {
			o.d.errorf(path, ipos, "", "items of %q must be strings, got %s", key, yamlnode.Kind(item))
			continue
		}
		out = append(out, text)
	}
	return out
}

// strmap decodes a mapping of names to strings.
func (o *object) strmap(key string) map[string]string {
	return o.textmap(key, func(path string, pos workflow.Pos, n ast.Node) (string, bool) {
		text, isScalar := scalarText(n)
		if !isScalar {
			o.d.errorf(path, pos, "", "values of %q must be strings, got %s", key, yamlnode.Kind(n))
		}
		return text, isScalar
	})
}

// inputmap decodes a workflow step's inputs: scalars as text, and lists and mappings as the
// JSON text the called workflow converts by the input's type (see structuredInput).
func (o *object) inputmap(key string) map[string]string {
	return o.textmap(key, func(path string, pos workflow.Pos, n ast.Node) (string, bool) {
		if text, isScalar := scalarText(n); isScalar {
			return text, true
		}
		text, err := structuredInput(o.d.toAny(path, n))
		if err != nil {
			o.d.errorf(path, pos, structuredHint, "%v", err)
			return "", false
		}
		return text, true
	})
}

// textmap decodes a mapping of names to text, each value through text (false: not kept; text
// reported why).
func (o *object) textmap(key string, text func(path string, pos workflow.Pos, n ast.Node) (string, bool)) map[string]string {
	raw, ok := o.raw(key)
	if !ok {
		return nil
	}
	m := o.d.object(o.child(key), fmt.Sprintf("%q", key), raw)
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m.entries))
	for _, e := range m.entries {
		n, pos, present := m.get(e.key)
		if !present {
			out[e.key] = ""
			continue
		}
		if v, ok := text(m.child(e.key), pos, n); ok {
			out[e.key] = v
		}
	}
	return out
}

// anymap decodes a free-form mapping (options, output_schema).
func (o *object) anymap(key string) map[string]any {
	n, pos, ok := o.get(key)
	if !ok {
		return nil
	}
	v := o.d.toAny(o.child(key), n)
	m, isMap := v.(map[string]any)
	if !isMap {
		if v != nil || !o.d.aborted {
			o.d.errorf(o.child(key), pos, "", "%q must be a mapping, got %s", key, yamlnode.Kind(n))
		}
		return nil
	}
	return m
}

// value decodes any YAML value into plain Go values (string, int64, float64, bool, nil,
// []any, map[string]any).
func (o *object) value(key string) (any, bool) {
	n, _, ok := o.get(key)
	if !ok {
		return nil, false
	}
	return o.d.toAny(o.child(key), n), true
}

// list returns the items of a list field; a value of another kind is reported.
func (o *object) list(key string) ([]ast.Node, bool) {
	n, pos, ok := o.get(key)
	if !ok {
		return nil, false
	}
	seq, isSeq := n.(*ast.SequenceNode)
	if !isSeq {
		o.d.errorf(o.child(key), pos, "", "%q must be a list, got %s", key, yamlnode.Kind(n))
		return nil, false
	}
	return seq.Values, true
}

// describe names a value for messages: its text for scalars, its kind otherwise.
func describe(n ast.Node) string {
	if _, isStr := n.(*ast.StringNode); isStr {
		text, _ := scalarText(n)
		return fmt.Sprintf("%q", text)
	}
	if _, isLit := n.(*ast.LiteralNode); isLit {
		return "a string"
	}
	if text, ok := scalarText(n); ok {
		return text
	}
	return yamlnode.Kind(n)
}
