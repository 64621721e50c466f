package loader

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/awf-dev/awf/internal/bom"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/yamlnode"
)

var _ ports.WorkflowLoader = (*Loader)(nil)

// Loader reads workflow files. It holds no state between calls and is safe for concurrent use.
type Loader struct {
	// splitFrom and splitChunk are the sizes from which, and in which, a steps list is read
	// in parts (see parseSplit); tests set small ones, or splitFrom 0 to read files whole.
	splitFrom, splitChunk int
}

// New returns a Loader.
func New() *Loader { return &Loader{splitFrom: splitFrom, splitChunk: splitChunk} }

// Load reads and validates the workflow file at path. A missing or unreadable file is a
// fault.Usage error; a file that does not load or validate gives workflow.Problems (kind
// fault.Invalid) holding every error of the file, sorted by position. With such an error the
// returned workflow, when not nil, is what could be decoded: compile uses it to report template
// problems in the same pass; nothing may run it. Warnings are in the returned workflow's
// Warnings.
func (l *Loader) Load(path string) (*workflow.Workflow, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fault.New(fault.Usage, "load %s: %w", path, err)
	}
	return l.LoadBytes(path, data)
}

// LoadBytes loads a workflow from data as if read from path: positions name path as given,
// and the workflow's Path and Dir are made absolute from it. Errors are as for Load.
func (l *Loader) LoadBytes(path string, data []byte) (*workflow.Workflow, error) {
	wf, _, err := l.loadBytes(path, data)
	return wf, err
}

// readMode says how loadBytes read a file, for tests: whole, in parts (at the top-level list
// or at a parallel step's), or in parts then whole.
type readMode int

const (
	readWhole readMode = iota
	readSplit
	readSplitThenWhole
	readNested
)

func (l *Loader) loadBytes(path string, data []byte) (*workflow.Workflow, readMode, error) {
	// Editors on Windows may save UTF-8 with a byte order mark, which the YAML parser would
	// take as part of the first key ("\ufeffname" is not a key); it is not text, nor a column.
	data, err := bom.Strip(data)
	if err != nil {
		return nil, readWhole, workflow.Problems{{Pos: workflow.Pos{File: path, Line: 1, Col: 1}, Msg: err.Error()}}
	}
	d := newDecoder(path, data)
	d.splitFrom, d.splitChunk = l.splitFrom, l.splitChunk
	mode := readWhole
	wf, ok := d.load(data, true)
	if d.split != nil {
		mode = readSplit
		if d.split.nested {
			mode = readNested
		}
	}
	if !ok {
		mode = readSplitThenWhole
		d = newDecoder(path, data)
		wf, _ = d.load(data, false)
	}
	var errs, warnings workflow.Problems
	for _, p := range d.probs {
		if p.Severity == workflow.SeverityError {
			errs = append(errs, p)
		} else {
			warnings = append(warnings, p)
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, mode, fault.Wrap(fault.System, fmt.Errorf("load %s: %w", path, err))
	}
	if len(errs) > 0 {
		errs.Sort()
		if wf == nil || d.aborted {
			return nil, mode, errs
		}
		// The partial workflow lets compile report template problems in the same pass.
		wf.Path, wf.Dir, wf.Blocks = abs, filepath.Dir(abs), d.blocks
		return wf, mode, errs
	}
	warnings.Sort()
	wf.Warnings, wf.Blocks = warnings, d.blocks
	wf.Path, wf.Dir = abs, filepath.Dir(abs)
	return wf, mode, nil
}

// load decodes and validates data, in parts when split allows it and the file has the shape
// (see parseSplit), whole otherwise. ok is false when the parts did not hold (a chunk that
// does not parse on its own, say): the caller starts again with a new decoder and split
// false, and the whole parse finds what to report.
func (d *decoder) load(data []byte, split bool) (wf *workflow.Workflow, ok bool) {
	var root ast.Node
	if split {
		root = d.parseSplit(data) // records nothing when it declines
	}
	if root == nil {
		root = d.parse(data)
	}
	if root == nil {
		return nil, true
	}
	d.collectAnchors(root, 0)
	wf = d.decodeWorkflow(root)
	if d.split != nil && (d.split.failed || d.split.nested && !d.split.used) {
		return nil, false // a nested list the decoder never met is not a parallel step's
	}
	if wf != nil && !d.aborted {
		d.merge(wf.Validate(), wf.Pos)
	}
	return wf, true
}

// parse parses the YAML and returns the root of its single document, or nil after recording
// a problem.
func (d *decoder) parse(data []byte) ast.Node {
	var le *yamlnode.LimitError
	if errors.As(yamlnode.Check(data), &le) {
		d.errorf("", workflow.Pos{File: d.file, Line: le.Line, Col: le.Column}, "", "%s", le.Msg)
		return nil
	}
	f, err := parser.ParseBytes(data, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		d.syntaxError(err)
		return nil
	}
	var bodies []ast.Node
	for _, doc := range f.Docs {
		if doc != nil && !isNil(doc.Body) {
			bodies = append(bodies, doc.Body)
		}
	}
	switch len(bodies) {
	case 0:
		d.errorf("", d.tokenPos(nil), "", "the file is empty: a workflow needs at least a name and steps")
		return nil
	case 1:
		return bodies[0]
	default:
		d.errorf("", d.pos(bodies[1]), "", "a workflow file holds one YAML document, found %d", len(bodies))
		return nil
	}
}

// syntaxError turns a YAML parse error into a problem with its position.
func (d *decoder) syntaxError(err error) {
	var ye yaml.Error
	if errors.As(err, &ye) {
		msg := ye.GetMessage()
		d.errorf("", d.tokenPos(ye.GetToken()), "", "invalid YAML: %s", msg)
		return
	}
	msg, _, _ := strings.Cut(err.Error(), "\n")
	d.errorf("", d.tokenPos(nil), "", "invalid YAML: %s", msg)
}

// merge adds the problems Validate found, pointing each at the exact value of its field when
// the decoder saw it, and dropping those about a field the decoder already reported (a value
// of the wrong kind leaves the field empty; saying so twice would only add noise).
func (d *decoder) merge(found workflow.Problems, fallback workflow.Pos) {
	reported := map[string]bool{}
	for _, p := range d.probs {
		if p.Severity == workflow.SeverityError && p.Field != "" {
			reported[p.Field] = true
		}
	}
	for _, f := range d.suppress {
		reported[f] = true
	}
	for _, p := range found {
		if p.Field != "" && covered(p.Field, reported) {
			continue
		}
		if pos, ok := d.paths[p.Field]; ok && p.Field != "" {
			p.Pos = pos
		}
		if p.Pos.Line == 0 {
			p.Pos = fallback
		}
		if p.Pos.File == "" {
			p.Pos.File = d.file
		}
		p.Pos.Line = min(max(p.Pos.Line, 1), d.lines)
		p.Pos.Col = max(p.Pos.Col, 1)
		d.probs = append(d.probs, p)
	}
}

// covered reports whether field is one of paths or lies inside one of them: whether it, or
// what comes before one of its '.' or '[', is one of paths. Looking up the field's own
// prefixes keeps a file of many problems linear: comparing each problem with every one
// already reported took 4.6 s for a workflow of 8,000 misspelt steps.
func covered(field string, paths map[string]bool) bool {
	if paths[field] {
		return true
	}
	for i := range len(field) {
		if (field[i] == '.' || field[i] == '[') && paths[field[:i]] {
			return true
		}
	}
	return false
}
