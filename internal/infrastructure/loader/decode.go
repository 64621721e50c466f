package loader

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"

	"github.com/awf-dev/awf/internal/domain/workflow"
)

// maxDepth bounds how deeply the decoder descends (nesting and alias chains), so that a
// recursive alias or a hostile file cannot exhaust the stack.
const maxDepth = 64

// maxWork bounds the number of nodes the decoder visits, so that aliases that expand
// exponentially ("billion laughs") cannot exhaust memory or time.
const maxWork = 100_000

// decoder turns one YAML document into domain values, collecting every problem instead of
// stopping at the first. It is used once per file.
type decoder struct {
	file  string
	lines int
	src   []string // the file's lines
	probs workflow.Problems
	// paths maps a field path ("steps[2].command") to the position of its value, so that
	// problems found later by Validate can point at the exact place.
	paths   map[string]workflow.Pos
	blocks  map[string]workflow.Pos // literal blocks' and one-line quoted scalars' first characters, by path; nil: none
	anchors map[string][]anchorDef
	// anchorNames are the names of anchors, in the order they were first defined: the
	// names an unknown alias may have meant.
	anchorNames []string
	// hints bounds the work of hints: a file's unknown aliases and its anchors both grow
	// with it (see workflow.Hinter).
	hints *workflow.Hinter
	// suppress lists field paths Validate should not report: the keys suggested for
	// misspelt ones, whose absence is a consequence of the misspelling.
	suppress []string
	depth    int
	work     int
	aborted  bool
	// splitFrom and splitChunk are the sizes parseSplit uses; splitFrom 0: never split.
	splitFrom, splitChunk int
	// split is set when the file is read in parts (see parseSplit).
	split *splitState
}

// anchorDef is one definition of an anchor; an alias refers to the last definition before it.
type anchorDef struct {
	line, col int
	node      ast.Node
}

func newDecoder(file string, data []byte) *decoder {
	return &decoder{
		file:    file,
		lines:   strings.Count(string(data), "\n") + 1,
		src:     strings.Split(string(data), "\n"),
		paths:   map[string]workflow.Pos{},
		anchors: map[string][]anchorDef{},
		hints:   workflow.NewHinter(),
	}
}

// errorf records an error problem for the field at path.
func (d *decoder) errorf(path string, pos workflow.Pos, hint, format string, args ...any) {
	d.probs = append(d.probs, workflow.Problem{
		Pos: pos, Field: path, Msg: fmt.Sprintf(format, args...), Hint: hint,
	})
}

// warnf records a warning problem.
func (d *decoder) warnf(path string, pos workflow.Pos, hint, format string, args ...any) {
	d.probs = append(d.probs, workflow.Problem{
		Pos: pos, Field: path, Msg: fmt.Sprintf(format, args...), Hint: hint,
		Severity: workflow.SeverityWarning,
	})
}

// record remembers where the value of a field path is.
func (d *decoder) record(path string, pos workflow.Pos) {
	if _, ok := d.paths[path]; !ok {
		d.paths[path] = pos
	}
}

// block records where the text of the literal block scalar whose indicator is at at begins:
// the next line, at its indentation.
func (d *decoder) block(path string, at workflow.Pos) {
	line := at.Line + 1
	if line > len(d.src) {
		return
	}
	text := d.src[line-1]
	if d.blocks == nil {
		d.blocks = map[string]workflow.Pos{}
	}
	d.blocks[path] = workflow.Pos{File: d.file, Line: line, Col: len(text) - len(strings.TrimLeft(text, " \t")) + 1}
}

// oneLineQuoted reports whether tk is a quoted scalar written on one line whose text is one
// line too: its characters are then the file's, one column on from the quote (give or take
// escapes). A quoted scalar folded over lines, or holding an escaped line break, is not: its
// text's lines are not the file's.
func oneLineQuoted(tk *token.Token) bool {
	return tk != nil && (tk.Type == token.SingleQuoteType || tk.Type == token.DoubleQuoteType) &&
		!strings.Contains(tk.Value, "\n") && !strings.Contains(strings.TrimSpace(tk.Origin), "\n")
}

// quoted records where the text of the one-line quoted scalar whose quote is at at begins:
// after the quote, so that a problem inside a quoted command or expression is not a column
// early.
func (d *decoder) quoted(path string, at workflow.Pos) {
	if d.blocks == nil {
		d.blocks = map[string]workflow.Pos{}
	}
	at.Col++
	d.blocks[path] = at
}

// spend counts one node of work; past the budget it reports once and returns false.
func (d *decoder) spend(path string, n ast.Node) bool {
	d.work++
	if d.aborted {
		return false
	}
	if d.work > maxWork {
		d.aborted = true
		d.errorf(path, d.pos(n), "", "document too large: more than %d values after expanding aliases", maxWork)
		return false
	}
	return true
}

// enter guards recursion; every successful enter needs a leave.
func (d *decoder) enter(path string, n ast.Node) bool {
	if !d.spend(path, n) {
		return false
	}
	if d.depth >= maxDepth {
		d.aborted = true
		d.errorf(path, d.pos(n), "", "nested too deeply (more than %d levels, or a recursive alias)", maxDepth)
		return false
	}
	d.depth++
	return true
}

func (d *decoder) leave() { d.depth-- }

// pos returns the clamped position of a node: for a mapping, its first key; for an entry,
// its key.
func (d *decoder) pos(n ast.Node) workflow.Pos {
	return d.tokenPos(firstToken(n, 0))
}

func (d *decoder) tokenPos(tk *token.Token) workflow.Pos {
	p := workflow.Pos{File: d.file, Line: 1, Col: 1}
	if tk == nil || tk.Position == nil {
		return p
	}
	p.Line = min(max(tk.Position.Line, 1), d.lines)
	p.Col = max(tk.Position.Column, 1)
	return p
}

func firstToken(n ast.Node, depth int) *token.Token {
	if isNil(n) || depth > maxDepth {
		return nil
	}
	switch v := n.(type) {
	case *ast.MappingNode:
		if !v.IsFlowStyle && len(v.Values) > 0 {
			return firstToken(v.Values[0], depth+1)
		}
		return v.Start
	case *ast.MappingValueNode:
		if !isNil(v.Key) {
			return firstToken(v.Key, depth+1)
		}
		return v.Start
	case *ast.SequenceNode:
		return v.Start
	case *ast.AnchorNode:
		return v.Start
	case *ast.AliasNode:
		return v.Start
	case *ast.TagNode:
		return v.Start
	case *ast.LiteralNode:
		return v.Start
	case *ast.MappingKeyNode:
		return v.Start
	}
	return n.GetToken()
}

// isNil reports whether a node interface is nil or holds a nil pointer (the parser leaves
// some children as typed nils).
func isNil(n ast.Node) bool {
	if n == nil {
		return true
	}
	v := reflect.ValueOf(n)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// collectAnchors records every anchor of the document in source order.
func (d *decoder) collectAnchors(n ast.Node, depth int) {
	if isNil(n) || depth > maxDepth {
		return
	}
	switch v := n.(type) {
	case *ast.AnchorNode:
		if !isNil(v.Name) && v.Name.GetToken() != nil && v.Start != nil && v.Start.Position != nil {
			name := v.Name.GetToken().Value
			if _, ok := d.anchors[name]; !ok {
				d.anchorNames = append(d.anchorNames, name)
			}
			d.anchors[name] = append(d.anchors[name], anchorDef{
				line: v.Start.Position.Line, col: v.Start.Position.Column, node: v.Value,
			})
		}
		d.collectAnchors(v.Value, depth+1)
	case *ast.MappingNode:
		for _, mv := range v.Values {
			d.collectAnchors(mv, depth+1)
		}
	case *ast.MappingValueNode:
		d.collectAnchors(v.Key, depth+1)
		d.collectAnchors(v.Value, depth+1)
	case *ast.MappingKeyNode:
		d.collectAnchors(v.Value, depth+1)
	case *ast.SequenceNode:
		for _, x := range v.Values {
			d.collectAnchors(x, depth+1)
		}
	case *ast.TagNode:
		d.collectAnchors(v.Value, depth+1)
	}
}

// resolve follows anchors, aliases and tags to the node holding the value. It returns nil for
// an unknown alias (reported) and reports whether a !!str tag asked for a string.
func (d *decoder) resolve(path string, n ast.Node) (ast.Node, bool) {
	asString := false
	for range maxDepth {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			if v.Start != nil && (v.Start.Value == "!!str" || v.Start.Value == "!str") {
				asString = true
			}
			n = v.Value
		case *ast.AliasNode:
			target, ok := d.alias(path, v)
			if !ok {
				return nil, false
			}
			n = target
		default:
			if isNil(n) {
				return nil, asString
			}
			return n, asString
		}
		if isNil(n) {
			return nil, asString
		}
	}
	d.errorf(path, d.pos(n), "", "alias refers to itself")
	return nil, false
}

// alias finds the anchor an alias refers to: the last one of that name defined before it.
func (d *decoder) alias(path string, a *ast.AliasNode) (ast.Node, bool) {
	name := ""
	if !isNil(a.Value) && a.Value.GetToken() != nil {
		name = a.Value.GetToken().Value
	}
	line, col := 0, 0
	if a.Start != nil && a.Start.Position != nil {
		line, col = a.Start.Position.Line, a.Start.Position.Column
	}
	// The definitions are in source order except in a split file, whose chunks' anchors are
	// collected after the rest's: the last one before the alias is the latest by position.
	var found ast.Node
	best := anchorDef{}
	for _, def := range d.anchors[name] {
		if (def.line < line || (def.line == line && def.col < col)) &&
			(def.line > best.line || (def.line == best.line && def.col >= best.col)) {
			found, best = def.node, def
		}
	}
	if found == nil {
		if d.split != nil {
			// The hint names the anchors of the whole file, which only its whole parse knows.
			d.split.failed = true
		}
		d.errorf(path, d.pos(a), d.hints.DidYouMean(name, d.anchorNames), "unknown alias *%s: no anchor &%s defined before it", name, name)
		return nil, false
	}
	return found, true
}

// isNull reports whether a resolved node is empty (absent or null).
func isNull(n ast.Node) bool {
	if isNil(n) {
		return true
	}
	_, ok := n.(*ast.NullNode)
	return ok
}

// scalarText returns the text of a scalar node: the decoded value of strings, the source text
// of numbers and booleans (so version: 1.0 stays "1.0").
func scalarText(n ast.Node) (string, bool) {
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.LiteralNode:
		if v.Value == nil {
			return "", true
		}
		return v.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		if tk := n.GetToken(); tk != nil {
			return tk.Value, true
		}
	}
	return "", false
}
