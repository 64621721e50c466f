package yamlnode

import (
	"bytes"
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
)

// The YAML parser builds its whole syntax tree before a reader sees any of it, and the tree of
// a document costs about a hundred times the document's bytes (a 440 KB workflow of 10,000
// steps: 54 MB live at once). A document whose bulk is one long top-level list (a workflow's
// `steps:`) can be read a piece at a time instead: the rest of the document with the list left
// empty, then the list in chunks of whole entries, each parsed on its own. SplitSequence cuts
// such a document; ParseChunk parses one chunk with every token at its line in the whole
// document, so that what a reader reports points where it would have from one parse.
//
// The cut is made on lines, not by parsing, so it is only a proposal: the reader must verify
// it (VerifyRest, and ParseChunk checks its own chunk) and read the whole document when any
// check fails. A chunk boundary can only fall where the whole parse ends an entry too, unless
// a construct spans the boundary (a quoted scalar or flow collection left open, which makes
// the earlier chunk fail to parse) or the entries are not what the lines suggest (which
// ParseChunk's count of entries catches).

// SequenceSplit is a document cut by SplitSequence.
type SequenceSplit struct {
	// Rest is the document with the list's lines up to its last chunk emptied (each keeps its
	// line break, so that later lines keep their numbers): the key's value is the list's last
	// run of entries, which are read in their place, followed by what follows them in the
	// document.
	Rest []byte
	// KeyLine and KeyColumn locate the key (1-based): column 1 for SplitSequence's.
	KeyLine, KeyColumn int
	// Line and Column locate the first entry's "-" (1-based).
	Line, Column int
	// Chunks are the list's entries in order up to the last run, cut into consecutive runs
	// of whole entries.
	Chunks []Chunk
	// Tail are the lines (1-based) where the entries left in Rest start.
	Tail []int
}

// Chunk is a run of whole entries of a split list, followed in the document by another entry.
type Chunk struct {
	// Data is the entries' lines, as in the document.
	Data []byte
	// Line is the line (1-based) of Data's first line in the document.
	Line int
	// Entries are the lines (1-based, in the document) where the chunk's entries start.
	Entries []int
	// Column is the column (1-based) of every entry's "-".
	Column int
}

// SplitSequence proposes to cut data at the block list that is the value of the top-level key
// (a line "key:" at column 0, nothing after it but blanks or a comment), when the list's lines
// take at least from bytes; chunks take at least size bytes each (the last one may be
// smaller). ok is false when the document does not have that shape: the reader parses it
// whole.
//
// The list's entries are the lines with the first entry's indentation followed by "- " (or a
// "-" alone); the list ends at the first line indented no more than its entries that is not an
// entry, a comment or blank. A line break other than "\n" or "\r\n" (a lone "\r", which the
// parser counts as a line) refuses the cut, since lines would be numbered differently.
func SplitSequence(data []byte, key string, from, size int) (split SequenceSplit, ok bool) {
	l, ok := topList(data, key, from)
	if !ok {
		return split, false
	}
	return l.split(data, 1, from, size)
}

// topList finds the block list of the top-level key, in a document of at least from bytes
// whose lines the parser numbers as SplitSequence does.
func topList(data []byte, key string, from int) (list, bool) {
	if len(data) < from || hasLoneCR(data) {
		return list{}, false
	}
	keyAt, keyLine := keyLineOf(data, key)
	if keyAt < 0 {
		return list{}, false
	}
	return listAfter(data, keyAt, keyLine)
}

// SplitNested proposes, like SplitSequence, to cut data at a block list that is the value of
// key, but at a key indented inside the top-level key's list (a parallel step's `steps:`
// inside a workflow's): a nested list that holds more than half of the top-level list's
// bytes, which is then mostly that one entry and could not be cut at its own entries. Such
// lists hold one another (two cannot each hold more than half); the innermost is cut, the one
// whose entries are the steps. KeyColumn says where its key is. The reader must find the key at
// that place, and nowhere else, in the parsed rest (VerifyNested).
//
// Each candidate's list is scanned, so lines inside several nested lists are read once for
// each: past maxNestedScan times the top-level list's bytes in all (lists nested that deep are
// past what the decoder accepts anyway), the proposal is declined.
func SplitNested(data []byte, key string, from, size int) (split SequenceSplit, ok bool) {
	top, ok := topList(data, key, from)
	if !ok {
		return split, false
	}
	topSize := top.end - top.start
	var best list
	found := false
	scanned := 0
	line := top.firstLine
	for off := top.start; off < top.end; line++ {
		n := lineLen(data[off:])
		if indent, ok := keyAt0(data[off:off+n], key); ok && indent > top.indent {
			l, ok := listAfter(data, off, line)
			if scanned += l.end - l.start; scanned > maxNestedScan*topSize {
				return split, false
			}
			if ok && l.indent >= indent && 2*(l.end-l.start) > topSize && (!found || l.keyColumn > best.keyColumn) {
				best, found = l, true
			}
		}
		off += n
	}
	if !found {
		return split, false
	}
	return best.split(data, best.keyColumn, from, size)
}

// maxNestedScan bounds what SplitNested reads, in times the top-level list: a parallel step
// inside a parallel step inside a third one, each mostly the next, is read about three times.
const maxNestedScan = 4

// list is a block list found by lines: its key's line and column, its entries' indentation,
// and the offsets and lines of its entries.
type list struct {
	keyLine, keyColumn int
	indent             int
	start, end         int // offsets of the first entry's line and of the line after the list
	firstLine          int
	entries, lines     []int // the entries' offsets and line numbers
}

// listAfter finds the block list that follows the key line at keyAt (line keyLine): blank and
// comment lines, then entries at one indentation, up to the first line indented no more than
// them that is not an entry, a comment or blank.
func listAfter(data []byte, keyAt, keyLine int) (l list, ok bool) {
	l.keyLine, l.keyColumn = keyLine, countSpaces(data[keyAt:])+1
	off := keyAt + lineLen(data[keyAt:])
	line := keyLine + 1
	// Blank and comment lines between the key and the first entry stay in the rest.
	for off < len(data) && isBlankOrComment(data[off:]) {
		off += lineLen(data[off:])
		line++
	}
	if off >= len(data) {
		return l, false
	}
	l.indent = countSpaces(data[off:])
	if !isEntry(data[off:], l.indent) {
		return l, false
	}
	l.start, l.firstLine, l.end = off, line, off
scan:
	for l.end < len(data) {
		rest := data[l.end:]
		switch {
		case isEntry(rest, l.indent):
			l.entries = append(l.entries, l.end)
			l.lines = append(l.lines, line)
		case isBlankOrComment(rest):
		case countSpaces(rest) <= l.indent:
			break scan
		}
		l.end += lineLen(rest)
		line++
	}
	return l, true
}

// split cuts data at list l (its key at keyColumn) into chunks of at least size bytes, when
// the list takes at least from bytes.
func (l list) split(data []byte, keyColumn, from, size int) (split SequenceSplit, ok bool) {
	if l.end-l.start < from {
		return split, false
	}
	split = SequenceSplit{KeyLine: l.keyLine, KeyColumn: keyColumn, Line: l.firstLine, Column: l.indent + 1}
	chunkStart := 0
	for i := 1; i < len(l.entries); i++ {
		if l.entries[i]-l.entries[chunkStart] < size {
			continue
		}
		split.Chunks = append(split.Chunks, Chunk{
			Data: data[l.entries[chunkStart]:l.entries[i]], Line: l.lines[chunkStart],
			Entries: l.lines[chunkStart:i], Column: l.indent + 1,
		})
		chunkStart = i
	}
	if len(split.Chunks) == 0 {
		return SequenceSplit{}, false
	}
	split.Tail = l.lines[chunkStart:]
	tail := l.entries[chunkStart]
	rest := make([]byte, 0, l.start+2*(l.lines[chunkStart]-l.firstLine)+len(data)-tail)
	rest = append(rest, data[:l.start]...)
	for off := l.start; off < tail; {
		n := lineLen(data[off:])
		if bytes.HasSuffix(data[off:off+n], []byte("\r\n")) {
			rest = append(rest, '\r')
		}
		rest = append(rest, '\n')
		off += n
	}
	split.Rest = append(rest, data[tail:]...)
	return split, true
}

// keyAt0 reports whether line is spaces, then "key:" followed by nothing but blanks or a
// comment, and how many spaces.
func keyAt0(line []byte, key string) (indent int, ok bool) {
	indent = countSpaces(line)
	rest, ok := bytes.CutPrefix(line[indent:], []byte(key+":"))
	if !ok {
		return 0, false
	}
	trimmed := bytes.TrimLeft(rest, " ")
	return indent, len(trimmed) == 0 || trimmed[0] == '\n' || trimmed[0] == '\r' || trimmed[0] == '#' && len(trimmed) < len(rest)
}

// keyLineOf finds the first line that is "key:" at column 0 followed by nothing but blanks or
// a comment: its offset and line number, or -1.
func keyLineOf(data []byte, key string) (offset, line int) {
	line = 1
	for off := 0; off < len(data); line++ {
		n := lineLen(data[off:])
		if indent, ok := keyAt0(data[off:off+n], key); ok && indent == 0 {
			return off, line
		}
		off += n
	}
	return -1, 0
}

// hasLoneCR reports whether data holds a "\r" that is not followed by "\n".
func hasLoneCR(data []byte) bool {
	for i := bytes.IndexByte(data, '\r'); i >= 0; {
		if i+1 >= len(data) || data[i+1] != '\n' {
			return true
		}
		next := bytes.IndexByte(data[i+1:], '\r')
		if next < 0 {
			return false
		}
		i += 1 + next
	}
	return false
}

// lineLen is the length of data's first line, its line break included.
func lineLen(data []byte) int {
	if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
		return nl + 1
	}
	return len(data)
}

func countSpaces(line []byte) int {
	n := 0
	for n < len(line) && line[n] == ' ' {
		n++
	}
	return n
}

// isEntry reports whether line is indent spaces, then "-" followed by a space or the end of
// the line.
func isEntry(line []byte, indent int) bool {
	if countSpaces(line) != indent || len(line) <= indent || line[indent] != '-' {
		return false
	}
	rest := line[indent+1:]
	return len(rest) == 0 || rest[0] == ' ' || rest[0] == '\n' || rest[0] == '\r' && len(rest) > 1 && rest[1] == '\n'
}

// isBlankOrComment reports whether line holds only spaces, or spaces and a comment.
func isBlankOrComment(line []byte) bool {
	rest := line[countSpaces(line):]
	return len(rest) == 0 || rest[0] == '\n' || rest[0] == '#' || rest[0] == '\r' && len(rest) > 1 && rest[1] == '\n'
}

// VerifyRest checks that the parsed rest of a split document is what the split assumed and
// returns the root mapping, its entry for the split key and the list of the tail entries: the
// root of the one document is a block mapping holding the key at KeyLine, column 1, whose
// value is a block list of the Tail entries. ok is false otherwise (the key's line was inside
// a quoted scalar, say): the reader parses the whole document. The list's Start is moved to
// the first entry of the whole list, where the whole parse's list starts.
func (s *SequenceSplit) VerifyRest(f *ast.File) (root *ast.MappingNode, entry *ast.MappingValueNode, tail *ast.SequenceNode, ok bool) {
	if f == nil || len(f.Docs) != 1 || f.Docs[0] == nil {
		return nil, nil, nil, false
	}
	root, ok = f.Docs[0].Body.(*ast.MappingNode)
	if !ok || root == nil || root.IsFlowStyle {
		return nil, nil, nil, false
	}
	for _, mv := range root.Values {
		if mv == nil || mv.Key == nil {
			continue
		}
		tk := mv.Key.GetToken()
		if tk == nil || tk.Position == nil || tk.Position.Line != s.KeyLine || tk.Position.Column != 1 {
			continue
		}
		tail, ok = mv.Value.(*ast.SequenceNode)
		if !ok || tail == nil || !entriesAt(tail, s.Tail, s.Column) {
			return nil, nil, nil, false
		}
		s.moveStart(tail)
		return root, mv, tail, true
	}
	return nil, nil, nil, false
}

// VerifyNested is VerifyRest for a split of SplitNested: the rest is one document whose body
// holds, anywhere below it, exactly one mapping entry whose key is at KeyLine and KeyColumn,
// and its value is a block list of the Tail entries (with its Start moved as VerifyRest
// does). ok is false otherwise: the reader parses the whole document.
func (s *SequenceSplit) VerifyNested(f *ast.File) (body ast.Node, entry *ast.MappingValueNode, tail *ast.SequenceNode, ok bool) {
	if f == nil || len(f.Docs) != 1 || f.Docs[0] == nil || f.Docs[0].Body == nil {
		return nil, nil, nil, false
	}
	body = f.Docs[0].Body
	for _, n := range ast.Filter(ast.MappingValueType, body) {
		mv, _ := n.(*ast.MappingValueNode)
		if mv == nil || mv.Key == nil {
			continue
		}
		tk := mv.Key.GetToken()
		if tk == nil || tk.Position == nil || tk.Position.Line != s.KeyLine || tk.Position.Column != s.KeyColumn {
			continue
		}
		if entry != nil {
			return nil, nil, nil, false
		}
		entry = mv
	}
	if entry == nil {
		return nil, nil, nil, false
	}
	tail, ok = entry.Value.(*ast.SequenceNode)
	if !ok || tail == nil || !entriesAt(tail, s.Tail, s.Column) {
		return nil, nil, nil, false
	}
	s.moveStart(tail)
	return body, entry, tail, true
}

// moveStart moves the start of the list left in the rest to the first entry of the whole
// list, where the whole parse's list starts.
func (s *SequenceSplit) moveStart(tail *ast.SequenceNode) {
	start := *tail.Start
	pos := *start.Position
	pos.Line, pos.Column = s.Line, s.Column
	start.Position = &pos
	tail.Start = &start
}

// entriesAt reports whether seq is a block list whose entries start at lines, at column.
func entriesAt(seq *ast.SequenceNode, lines []int, column int) bool {
	if seq.IsFlowStyle || seq.Start == nil || seq.Start.Position == nil ||
		len(seq.Entries) != len(lines) || len(seq.Values) != len(lines) {
		return false
	}
	for i, e := range seq.Entries {
		if e == nil || e.Start == nil || e.Start.Position == nil ||
			e.Start.Position.Line != lines[i] || e.Start.Position.Column != column {
			return false
		}
	}
	return true
}

// ErrChunkShape is a chunk that does not parse into the entries its lines suggest.
var ErrChunkShape = fmt.Errorf("a chunk of a split document does not parse into its entries")

// ParseChunk parses one chunk into its list, every token at its line in the whole document.
// The chunk is parsed followed by an entry of its list, as it is in the document (at the end
// of its tokens the parser places an empty value differently); that entry is left out of the
// list returned. An error (the chunk does not parse on its own, or not into the entries
// SplitSequence saw) means the split does not hold: the reader parses the whole document,
// whose error, if any, is the one to report.
func ParseChunk(c Chunk) (*ast.SequenceNode, error) {
	src := make([]byte, 0, len(c.Data)+c.Column+3)
	src = append(src, c.Data...)
	src = append(src, bytes.Repeat([]byte(" "), c.Column-1)...)
	src = append(src, "- ~\n"...)
	tokens := lexer.Tokenize(string(src))
	for _, tk := range tokens {
		if tk.Position != nil {
			tk.Position.Line += c.Line - 1
		}
	}
	f, err := parser.Parse(tokens, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		return nil, err
	}
	if len(f.Docs) != 1 || f.Docs[0] == nil {
		return nil, ErrChunkShape
	}
	seq, ok := f.Docs[0].Body.(*ast.SequenceNode)
	last := c.Line + bytes.Count(c.Data, []byte("\n"))
	if !ok || seq == nil || !entriesAt(seq, append(c.Entries[:len(c.Entries):len(c.Entries)], last), c.Column) {
		return nil, ErrChunkShape
	}
	n := len(c.Entries)
	seq.Values, seq.Entries, seq.ValueHeadComments = seq.Values[:n], seq.Entries[:n], seq.ValueHeadComments[:min(n, len(seq.ValueHeadComments))]
	return seq, nil
}
