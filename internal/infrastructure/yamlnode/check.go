package yamlnode

import (
	"fmt"
	"unicode/utf8"

	"github.com/awf-dev/awf/internal/bom"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// MaxAliasNodes is how many nodes a document may reach through aliases (*name), counting each
// use of an anchor as a copy of everything under it. Anchors that reuse a block of settings a
// few times stay far below it; a "billion laughs" document, whose few lines expand to
// billions of nodes, is refused before any decoder copies or prints them.
const MaxAliasNodes = 100_000

func aliasError(line, col int) *LimitError {
	return &LimitError{Line: line, Column: col, Msg: fmt.Sprintf(
		"aliases expand to more than %d nodes; awf refuses YAML that grows this much when read (use fewer nested anchors)", MaxAliasNodes)}
}

// Check is what every reader of YAML that people or tools write calls before it parses: the
// document is UTF-8 (the parser would replace a bad byte with U+FFFD without a word, changing
// what the file says), no deeper than MaxDepth, no block mapping has more than MaxMappingKeys
// keys, and its aliases expand to at most MaxAliasNodes; otherwise the error is a
// *LimitError. A document without aliases is only scanned; one with aliases is parsed once
// more to count what they expand to.
func Check(data []byte) error { return check(data, true) }

// CheckWritten is Check for files awf writes itself, whose mappings grow with what a run did
// (a state file has a key per step): it leaves out MaxMappingKeys, and the reader must
// decode wide mappings its own way (the state store reads its steps in chunks).
func CheckWritten(data []byte) error { return check(data, false) }

func check(data []byte, narrow bool) error {
	aliases, err := scan(data, narrow)
	if err != nil || !aliases {
		return err
	}
	f, err := parser.ParseBytes(data, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		return nil // the reader's own parse reports it, with its own words
	}
	b := NewAliasBudget()
	for _, doc := range f.Docs {
		if err := b.Add(doc); err != nil {
			return err
		}
	}
	return nil
}

// Scan is the part of Check that reads the bytes without parsing them (UTF-8, depth, width of
// mappings). aliases reports whether the document uses aliases: a reader that parses the
// document in parts (SplitSequence) then counts what they expand to with an AliasBudget, fed
// the parts in document order, which is what Check does over the whole document.
func Scan(data []byte) (aliases bool, err error) { return scan(data, true) }

func scan(data []byte, narrow bool) (aliases bool, err error) {
	if err := checkUTF8(data); err != nil {
		return false, err
	}
	return scanDepth(data, narrow)
}

// AliasBudget counts the nodes a document reaches through aliases against MaxAliasNodes, fed
// its nodes in document order (anchors before the aliases that use them).
type AliasBudget struct{ c aliasCounter }

// NewAliasBudget returns an AliasBudget with nothing counted.
func NewAliasBudget() *AliasBudget { return &AliasBudget{c: aliasCounter{sizes: map[string]int{}}} }

// Add counts the nodes under n; past MaxAliasNodes it returns the *LimitError at the alias that
// crossed it, and keeps returning it.
func (b *AliasBudget) Add(n ast.Node) error {
	b.c.size(n)
	return b.c.err
}

// checkUTF8 returns a *LimitError at the first byte that is not UTF-8.
func checkUTF8(data []byte) error {
	if utf8.Valid(data) {
		return nil
	}
	line, start := 1, 0
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			col := utf8.RuneCount(data[start:i]) + 1
			return &LimitError{Line: line, Column: col, Msg: fmt.Sprintf(
				"byte 0x%02x is not UTF-8; awf reads YAML as UTF-8 only (re-save the file as UTF-8)", data[i])}
		}
		if r == '\n' {
			line, start = line+1, i+1
		}
		i += size
	}
	return nil
}

// CheckFile is Check for the contents of the file at path, after bom.Strip: it returns the
// bytes to parse, without the UTF-8 byte order mark the file may start with (so that the
// parser's positions are the file's). Its error names the file as path:line:column; a file
// that starts with a UTF-16 byte order mark is refused at 1:1 with bom.ErrUTF16's words.
func CheckFile(path string, data []byte) ([]byte, error) {
	data, err := bom.Strip(data)
	if err != nil {
		return nil, &LimitError{File: path, Line: 1, Column: 1, Msg: err.Error()}
	}
	if err := Check(data); err != nil {
		if le, ok := err.(*LimitError); ok {
			le.File = path
		}
		return nil, err
	}
	return data, nil
}

// aliasCounter counts, in document order, the nodes under each anchor and the nodes reached
// through aliases. Counts saturate at MaxAliasNodes+1, so no sum overflows.
type aliasCounter struct {
	sizes    map[string]int // expanded size of each anchor defined so far
	expanded int
	err      error
}

func (c *aliasCounter) size(n ast.Node) int {
	if n == nil || c.err != nil {
		return 0
	}
	total := 1
	add := func(m ast.Node) { total = min(total+c.size(m), MaxAliasNodes+1) }
	switch n := n.(type) {
	case *ast.DocumentNode:
		add(n.Body)
	case *ast.MappingNode:
		for _, v := range n.Values {
			add(v)
		}
	case *ast.MappingValueNode:
		add(n.Key)
		add(n.Value)
	case *ast.MappingKeyNode:
		add(n.Value)
	case *ast.SequenceNode:
		for _, v := range n.Values {
			add(v)
		}
	case *ast.TagNode:
		add(n.Value)
	case *ast.AnchorNode:
		add(n.Value)
		if n.Name != nil {
			c.sizes[n.Name.GetToken().Value] = total
		}
	case *ast.AliasNode:
		if n.Value == nil {
			return total
		}
		reached := c.sizes[n.Value.GetToken().Value]
		c.expanded = min(c.expanded+reached, MaxAliasNodes+1)
		if c.expanded > MaxAliasNodes {
			c.err = aliasError(1, 1)
			if tk := n.GetToken(); tk != nil && tk.Position != nil {
				c.err = aliasError(tk.Position.Line, tk.Position.Column)
			}
		}
		total = min(total+reached, MaxAliasNodes+1)
	}
	return total
}
