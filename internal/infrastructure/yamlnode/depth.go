package yamlnode

import "fmt"

// MaxDepth is how deeply lists and mappings may nest in any YAML file awf reads: workflows,
// manifests, .tool files, cassettes, configuration, input files and state. Real files stay
// far below it; the YAML parser's cost grows faster than linearly with depth, so a small file
// of nested brackets would otherwise take gigabytes and minutes to refuse.
const MaxDepth = 256

// LimitError is a YAML document past one of awf's limits on what it reads: not UTF-8 (a
// UTF-16 file is refused at 1:1), nesting deeper than MaxDepth, a mapping wider than
// MaxMappingKeys or aliases that expand past MaxAliasNodes. Line and Column (1-based) are
// where the document crosses the limit.
type LimitError struct {
	// File is the file's path when the reader named it (see CheckFile).
	File         string
	Line, Column int
	// Msg says which limit, without the position.
	Msg string
}

func (e *LimitError) Error() string {
	if e.File != "" {
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Column, e.Msg)
	}
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

// MaxMappingKeys is how many keys one block mapping may have in YAML that people and tools
// write (workflows, manifests, .tool files, cassettes, configuration, input files). The YAML
// parser's time and memory grow with the square of a mapping's keys (5,000 keys: about 120 MB
// allocated, 20,000: 1.7 GB), so a small file of many keys would otherwise stall awf. Files awf
// writes itself, whose mappings grow with a run (a state file's steps), are read with
// CheckWritten, which leaves this limit out.
const MaxMappingKeys = 5000

func keysError(line, col int) *LimitError {
	return &LimitError{Line: line, Column: col, Msg: fmt.Sprintf(
		"a mapping with more than %d keys; awf refuses YAML mappings this wide (use a list of entries, or split the file)", MaxMappingKeys)}
}

func depthError(line, col int) *LimitError {
	return &LimitError{Line: line, Column: col, Msg: fmt.Sprintf(
		"lists and mappings nested deeper than %d levels; awf refuses YAML this deep (flatten the structure)", MaxDepth)}
}

// CheckDepth scans data once, before any parser sees it, and returns a *LimitError when
// lists and mappings nest deeper than MaxDepth. It costs one pass over the bytes and no
// allocation beyond a stack of MaxDepth columns.
//
// It is a scanner, not a parser: it counts flow brackets ([ and {) and block levels (the
// columns of "- " entries and of "key:" keys on the stack of open blocks), and skips what
// cannot nest (comments, quoted scalars, block scalars). Where YAML is ambiguous to a
// scanner it counts a level rather than miss one, so it can only refuse what is at least
// nearly as deep as the limit; a file it passes parses in time proportional to its size.
func CheckDepth(data []byte) error {
	_, err := scanDepth(data, false)
	return err
}

// scanDepth is CheckDepth that also reports whether the document uses aliases; with wide,
// it refuses block mappings of more than MaxMappingKeys keys too.
func scanDepth(data []byte, wide bool) (aliases bool, err error) {
	s := depthScanner{data: data, line: 1, countKeys: wide}
	err = s.run()
	return s.aliases, err
}

type depthScanner struct {
	data []byte
	i    int
	line int
	// lineStart is the offset of the current line's first byte.
	lineStart int
	flow      int
	// blocks holds the columns (0-based) of the open block entries and keys.
	blocks []int
	// keys holds, for each open block level, how many keys the mapping at its column has had
	// so far (counted only with countKeys).
	keys      []int
	countKeys bool
	// scalarIndent is the indent a block scalar's content lines must exceed; -1 when not in one.
	scalarIndent int
	quote        byte
	// aliases is set when an alias (*name) was seen outside quotes, comments and block scalars.
	aliases bool
}

func (s *depthScanner) run() error {
	s.scalarIndent = -1
	for s.i < len(s.data) {
		if err := s.scanLine(); err != nil {
			return err
		}
	}
	return nil
}

// scanLine scans from s.i to the end of the current line and past its newline.
func (s *depthScanner) scanLine() error {
	s.lineStart = s.i
	indent := s.skipSpaces()
	if s.scalarIndent >= 0 {
		if s.atLineEnd() || indent > s.scalarIndent {
			s.nextLine()
			return nil
		}
		s.scalarIndent = -1
	}
	if s.quote == 0 && s.flow == 0 {
		if s.atDocumentMarker() {
			s.blocks, s.keys = s.blocks[:0], s.keys[:0]
			s.i += 3 // a document may start on the marker's line: "--- [1, 2]"
		}
	}
	return s.scanTokens()
}

// scanTokens scans the rest of a line in whichever context (block, flow, quoted) it is in.
func (s *depthScanner) scanTokens() error {
	tokenStart := true
	keyCol := -1
	for s.i < len(s.data) {
		c := s.data[s.i]
		if c == '\n' {
			s.nextLine()
			return nil
		}
		if s.quote != 0 {
			s.scanQuoted()
			// Valid YAML has nothing but indicators after a closed quote; a bracket there
			// is counted, since the parser reads it as structure on its way to an error.
			tokenStart = s.quote == 0
			continue
		}
		col := s.i - s.lineStart
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			s.i++
			continue
		case c == '#' && (s.i == s.lineStart || isBlank(s.data[s.i-1])):
			s.skipToLineEnd()
			continue
		case tokenStart && (c == '\'' || c == '"'):
			if s.flow == 0 && keyCol < 0 {
				keyCol = col // a quoted scalar may be a key ("k": v)
			}
			s.quote = c
			s.i++
			continue
		case tokenStart && (c == '[' || c == '{'):
			s.flow++
			if err := s.check(col); err != nil {
				return err
			}
			s.i++
			continue
		case s.flow > 0 && (c == ']' || c == '}'):
			s.flow--
			s.i++
			tokenStart = false
			continue
		case s.flow > 0 && c == ',':
			s.i++
			tokenStart = true
			continue
		case s.flow == 0 && tokenStart && (c == '-' || c == '?') && s.blankAfter():
			if err := s.push(col, c == '?'); err != nil { // "? k" is an explicit key
				return err
			}
			s.i++
			keyCol = -1
			continue
		case s.flow == 0 && tokenStart && (c == '|' || c == '>'):
			s.scalarIndent = s.ownerIndent()
			s.skipToLineEnd()
			continue
		case c == ':' && s.blankAfter():
			if s.flow == 0 && keyCol >= 0 {
				if err := s.push(keyCol, true); err != nil {
					return err
				}
			}
			keyCol = -1
			s.i++
			tokenStart = true
			continue
		}
		if tokenStart && s.flow == 0 && keyCol < 0 {
			keyCol = col
		}
		if tokenStart && c == '*' {
			s.aliases = true
		}
		tokenStart = c == '&' || c == '!' // an anchor or tag is followed by the node it names
		if tokenStart {
			s.skipWord()
			continue
		}
		s.i++
	}
	return nil
}

// scanQuoted advances through a quoted scalar, which may span lines, up to its closing quote
// or the end of the line.
func (s *depthScanner) scanQuoted() {
	for s.i < len(s.data) {
		c := s.data[s.i]
		switch {
		case c == '\n':
			return
		case s.quote == '"' && c == '\\':
			s.i += 2
			continue
		case c == s.quote:
			if s.quote == '\'' && s.i+1 < len(s.data) && s.data[s.i+1] == '\'' {
				s.i += 2
				continue
			}
			s.quote = 0
			s.i++
			return
		}
		s.i++
	}
}

// push opens a block level at col, a key's or a "- "/"? " entry's: the levels at col or
// deeper are closed first. A key at the column of the level it closes is one more key of the
// same mapping; an entry there keeps the count, so that keys whose values are lists at their
// own column ("k:" then "- x") still add up.
func (s *depthScanner) push(col int, key bool) error {
	n := 0
	for len(s.blocks) > 0 && s.blocks[len(s.blocks)-1] >= col {
		top := len(s.blocks) - 1
		if s.blocks[top] == col {
			n = s.keys[top]
		}
		s.blocks, s.keys = s.blocks[:top], s.keys[:top]
	}
	if key {
		n++
	}
	if s.countKeys && n > MaxMappingKeys {
		return keysError(s.line, col+1)
	}
	s.blocks, s.keys = append(s.blocks, col), append(s.keys, n)
	return s.check(col)
}

func (s *depthScanner) check(col int) error {
	if len(s.blocks)+s.flow > MaxDepth {
		return depthError(s.line, col+1)
	}
	return nil
}

// ownerIndent is the column a block scalar's content must be indented past: that of the
// innermost open block entry or key, or of the line when none is open on it.
func (s *depthScanner) ownerIndent() int {
	if len(s.blocks) > 0 {
		return s.blocks[len(s.blocks)-1]
	}
	return 0
}

func (s *depthScanner) skipSpaces() int {
	n := 0
	for s.i < len(s.data) && s.data[s.i] == ' ' {
		s.i++
		n++
	}
	return n
}

func (s *depthScanner) skipWord() {
	for s.i < len(s.data) && !isBlank(s.data[s.i]) && s.data[s.i] != '\n' {
		s.i++
	}
}

func (s *depthScanner) skipToLineEnd() {
	for s.i < len(s.data) && s.data[s.i] != '\n' {
		s.i++
	}
}

func (s *depthScanner) nextLine() {
	s.skipToLineEnd()
	if s.i < len(s.data) {
		s.i++
		s.line++
	}
}

func (s *depthScanner) atLineEnd() bool {
	return s.i >= len(s.data) || s.data[s.i] == '\n' || s.data[s.i] == '\r'
}

// atDocumentMarker reports whether the line starts with "---" or "..." at column 0.
func (s *depthScanner) atDocumentMarker() bool {
	if s.i != s.lineStart || s.i+3 > len(s.data) {
		return false
	}
	m := string(s.data[s.i : s.i+3])
	return (m == "---" || m == "...") && (s.i+3 == len(s.data) || isBlank(s.data[s.i+3]) || s.data[s.i+3] == '\n')
}

// blankAfter reports whether the byte after s.i is a blank or the end of the line, as it
// must be after an indicator ("- ", "? ", ": ").
func (s *depthScanner) blankAfter() bool {
	j := s.i + 1
	return j >= len(s.data) || isBlank(s.data[j]) || s.data[j] == '\n' || s.data[j] == '\r'
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' }
