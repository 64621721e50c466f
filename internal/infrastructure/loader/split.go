package loader

import (
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/yamlnode"
)

// A workflow's bulk is its steps, and the YAML parser holds the syntax tree of a whole
// document at once (a 10,000-step workflow: about 54 MB live for 440 KB of YAML). A workflow
// whose `steps:` list is long is read in parts instead (yamlnode.SplitSequence): the rest of
// the file with the list empty, then the list in chunks of whole steps, each parsed, decoded
// and dropped before the next. Every token keeps its line and column in the file, anchors are
// collected chunk by chunk before the steps that use them, aliases are counted against the
// same budget in the same order, and the decoder visits the values in the same order, so
// what the parts give is what the whole parse gives: the same workflow, the same problems at
// the same places. Where that cannot be shown cheaply the file is parsed whole: a part that
// does not parse on its own (the whole parse's error is the one to report), an alias after
// the list (it may name an anchor inside it), an unknown alias (its hint names every anchor
// of the file). A decoding cut short by the work budget goes on visiting the steps as the
// whole parse's does (what it still reports, such as an unknown alias, is the same).
const (
	// splitFrom is the size of a steps list from which it is read in parts: below it the
	// whole tree is a few megabytes.
	splitFrom = 64 << 10
	// splitChunk is how many bytes of steps each part holds at least.
	splitChunk = 16 << 10
)

// splitState is a decoder's view of a split file.
type splitState struct {
	*yamlnode.SequenceSplit
	// tail is the list of the steps left in the rest: the last ones.
	tail *ast.SequenceNode
	// nested is set when the list split is a parallel step's (yamlnode.SplitNested), which
	// the decoder meets as it decodes that step; used once it has.
	nested, used bool
	// failed is set when the parts do not hold: the file is parsed again whole.
	failed bool
}

// parseSplit parses the rest of a file whose steps list is long enough to read in parts, and
// returns its root; nil when the file is not read in parts (too small, another shape, or a
// check failed): the caller parses it whole.
func (d *decoder) parseSplit(data []byte) ast.Node {
	if d.splitFrom <= 0 || len(data) < d.splitFrom {
		return nil // too small to cut: not even scanned, which the whole parse does anyway
	}
	aliases, err := yamlnode.Scan(data)
	if err != nil {
		return nil
	}
	if !aliases {
		if root := d.parseNested(data); root != nil {
			return root
		}
	}
	split, ok := yamlnode.SplitSequence(data, "steps", d.splitFrom, d.splitChunk)
	if !ok {
		return nil
	}
	f, err := parser.ParseBytes(split.Rest, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		return nil
	}
	root, steps, tail, ok := split.VerifyRest(f)
	if !ok {
		return nil
	}
	// An alias outside the list, after its key, may name an anchor in a chunk, which the
	// rest's decoding would not see yet.
	for _, mv := range root.Values {
		if mv == steps {
			continue
		}
		for _, a := range ast.Filter(ast.AliasType, mv) {
			if tk := a.GetToken(); tk == nil || tk.Position == nil || tk.Position.Line > split.KeyLine {
				return nil
			}
		}
	}
	if aliases && !countAliases(&split, root, steps) {
		return nil
	}
	d.split = &splitState{SequenceSplit: &split, tail: tail}
	return root
}

// parseNested parses the rest of a file whose bulk is one parallel step's list of steps
// (a block of thousands of children), and returns its root; nil when the file does not have
// that shape or a check fails. Only a file without aliases is read so: there are no anchors
// to follow or aliases to count across the parts, and the top-level list, mostly that one
// step, could only be cut around it.
func (d *decoder) parseNested(data []byte) ast.Node {
	split, ok := yamlnode.SplitNested(data, "steps", d.splitFrom, d.splitChunk)
	if !ok {
		return nil
	}
	f, err := parser.ParseBytes(split.Rest, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		return nil
	}
	root, _, tail, ok := split.VerifyNested(f)
	if !ok {
		return nil
	}
	d.split = &splitState{SequenceSplit: &split, tail: tail, nested: true}
	return root
}

// nestedSteps decodes the children of a parallel step whose list is the one a nested split
// cut, and reports whether it was: list is the step's list as decoded from the rest.
func (d *decoder) nestedSteps(path string, list ast.Node, items []ast.Node, depth int) ([]workflow.Step, bool) {
	if d.split == nil || !d.split.nested || d.split.failed || list != ast.Node(d.split.tail) {
		return nil, false
	}
	if d.split.used { // met twice: not the one list the split assumed
		d.split.failed = true
		return nil, true
	}
	d.split.used = true
	return d.splitSteps(path, items, depth), true
}

// countAliases counts what the file's aliases expand to, in the order yamlnode.Check counts
// them over the whole document: the rest's entries before the list, the list's chunks, its
// tail, the entries after it. It returns false when the budget is exceeded or a chunk does
// not parse: the whole parse then reports what is wrong.
func countAliases(split *yamlnode.SequenceSplit, root *ast.MappingNode, steps *ast.MappingValueNode) bool {
	b := yamlnode.NewAliasBudget()
	for _, mv := range root.Values {
		if mv != steps {
			if b.Add(mv) != nil {
				return false
			}
			continue
		}
		if b.Add(mv.Key) != nil {
			return false
		}
		for _, c := range split.Chunks {
			seq, err := yamlnode.ParseChunk(c)
			if err != nil || b.Add(seq) != nil {
				return false
			}
		}
		if b.Add(mv.Value) != nil {
			return false
		}
	}
	return true
}

// splitSteps decodes the steps of the split list at path (depth: its enclosing parallel
// steps): the chunks', each parsed and dropped in turn, then tail, those left in the rest.
func (d *decoder) splitSteps(path string, tail []ast.Node, depth int) []workflow.Step {
	n := len(tail)
	for _, c := range d.split.Chunks {
		n += len(c.Entries)
	}
	out := make([]workflow.Step, 0, n)
	for _, c := range d.split.Chunks {
		seq, err := yamlnode.ParseChunk(c)
		if err != nil {
			d.split.failed = true
			return nil
		}
		// A top-level list is two levels below the root mapping, as in the whole document (a
		// nested split is made only of files without aliases, whose anchors serve no one).
		d.collectAnchors(seq, 2)
		out = d.appendSteps(out, path, seq.Values, depth)
		if d.split.failed {
			return nil
		}
	}
	return d.appendSteps(out, path, tail, depth)
}
