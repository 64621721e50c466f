package loader

import (
	"regexp"
	"strings"

	"github.com/goccy/go-yaml/ast"

	"github.com/awf-dev/awf/internal/domain/workflow"
)

// inputRef finds references to inputs in an expression: inputs.x, .inputs.x, inputs["x"].
var inputRef = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.])\.?inputs(?:\.([A-Za-z_][A-Za-z0-9_]*)|\[\s*["']([^"'\]]+)["']\s*\])`)

// bareExprKeys are keys whose whole value is an expression, not a template.
var bareExprKeys = map[string]bool{"when": true, "stop_condition": true}

// inputUse is the first place an input is referenced.
type inputUse struct {
	name string
	pos  workflow.Pos
}

// implicitInputs declares every input referenced in a template or condition but not declared,
// as a required string, with a warning (DESIGN section 2: the seed 002 workflow relies on it).
func (d *decoder) implicitInputs(wf *workflow.Workflow, root ast.Node) {
	declared := make(map[string]bool, len(wf.Inputs))
	names := make([]string, 0, len(wf.Inputs))
	for _, in := range wf.Inputs {
		declared[in.Name] = true
		names = append(names, in.Name)
	}
	var uses []inputUse
	d.scanRefs(root, "", 0, func(name string, pos workflow.Pos) {
		if !declared[name] {
			declared[name] = true
			uses = append(uses, inputUse{name, pos})
		}
	})
	for _, u := range uses {
		wf.Inputs = append(wf.Inputs, workflow.Input{
			Name: u.name, Type: workflow.TypeString, Required: true, Implicit: true, Pos: u.pos,
		})
		hint := workflow.DidYouMean(u.name, names)
		if hint == "" {
			hint = "declare it under inputs:"
		}
		d.warnf("inputs", u.pos, hint, "input %q is used but not declared; it becomes a required string input", u.name)
	}
}

// scanRefs walks the document (not following aliases, whose targets are walked where they are
// defined) and reports each input reference with its position.
func (d *decoder) scanRefs(n ast.Node, key string, depth int, found func(string, workflow.Pos)) {
	if isNil(n) || depth > maxDepth {
		return
	}
	switch v := n.(type) {
	case *ast.MappingNode:
		for _, mv := range v.Values {
			d.scanRefs(mv, key, depth+1, found)
		}
	case *ast.MappingValueNode:
		k, _ := scalarText(v.Key)
		d.scanRefs(v.Value, k, depth+1, found)
	case *ast.SequenceNode:
		for _, x := range v.Values {
			d.scanRefs(x, key, depth+1, found)
		}
	case *ast.AnchorNode:
		d.scanRefs(v.Value, key, depth+1, found)
	case *ast.TagNode:
		d.scanRefs(v.Value, key, depth+1, found)
	case *ast.StringNode:
		d.scanText(v.Value, bareExprKeys[key], d.pos(v), 0, found)
	case *ast.LiteralNode:
		if v.Value != nil {
			// A block scalar's text starts on the line after its indicator.
			start := d.pos(v)
			start.Line++
			d.scanText(v.Value.Value, bareExprKeys[key], start, 1, found)
		}
	}
}

// scanText finds input references in a template's {{ }} blocks, or in the whole text when it
// is a bare expression. lineStep says whether positions move with the text's newlines (block
// scalars) or stay on the scalar's start.
func (d *decoder) scanText(text string, bare bool, start workflow.Pos, lineStep int, found func(string, workflow.Pos)) {
	if !bare && !strings.Contains(text, "{{") {
		return
	}
	for _, span := range exprSpans(text, bare) {
		for _, m := range inputRef.FindAllStringSubmatchIndex(text[span[0]:span[1]], -1) {
			name := ""
			if m[2] >= 0 {
				name = text[span[0]+m[2] : span[0]+m[3]]
			} else {
				name = text[span[0]+m[4] : span[0]+m[5]]
			}
			pos := start
			if lineStep > 0 {
				at := span[0] + m[2]
				if m[2] < 0 {
					at = span[0] + m[4]
				}
				before := text[:at]
				pos.Line = min(pos.Line+strings.Count(before, "\n"), d.lines)
				pos.Col = d.indent(pos.Line) + len(before) - strings.LastIndex(before, "\n")
			}
			found(name, pos)
		}
	}
}

// indent returns the indentation of a source line (1-based), for positions inside block
// scalars, whose text the parser hands over without it.
func (d *decoder) indent(line int) int {
	if line < 1 || line > len(d.src) {
		return 0
	}
	text := d.src[line-1]
	return len(text) - len(strings.TrimLeft(text, " \t"))
}

// exprSpans returns the byte ranges of the expressions in a text: each {{ }} block of a
// template, or the whole text of a bare expression.
func exprSpans(text string, bare bool) [][2]int {
	if bare {
		return [][2]int{{0, len(text)}}
	}
	var spans [][2]int
	for i := 0; ; {
		open := strings.Index(text[i:], "{{")
		if open < 0 {
			return spans
		}
		open += i + 2
		end := strings.Index(text[open:], "}}")
		if end < 0 {
			return append(spans, [2]int{open, len(text)})
		}
		spans = append(spans, [2]int{open, open + end})
		i = open + end + 2
	}
}
