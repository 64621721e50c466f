package file

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/awf-dev/awf/internal/domain/tool"
)

// sniffBytes is how much of a file's start decides whether it is text.
const sniffBytes = 8 << 10

// ReadFile is the read_file tool: {path, offset?, limit?}. offset is the 1-based number of the
// first line to return and limit the number of lines (0 or absent: to the end); the output is
// the file's text as is, without line numbers, capped at the policy's MaxReadBytes at a line
// boundary, with a final "[awf: ...]" note saying how to continue when it is cut. Binary files
// (a NUL byte or invalid UTF-8 in the first 8 KiB) are refused with their size. Safe for
// concurrent use.
type ReadFile struct{ c *checker }

// Name returns "read_file".
func (t *ReadFile) Name() string { return "read_file" }

// Description tells the model how to read files and where it may.
func (t *ReadFile) Description(tool.Context) string {
	return fmt.Sprintf("Read a text file and return its content as is (no line numbers). "+
		"Use offset (1-based line number of the first line) and limit (number of lines) to read part of a large file. "+
		"Output is capped at %d bytes, cut at a line boundary; a final line starting with [awf: says where to continue. "+
		"Binary files are refused. %s", t.c.maxRead, t.c.policyText(accessRead))
}

// Parameters returns the strict schema of {path, offset?, limit?}.
func (t *ReadFile) Parameters() json.RawMessage {
	return schema([]string{"path"},
		prop{name: "path", typ: "string", desc: "File to read, relative to the working directory or absolute."},
		prop{name: "offset", typ: "integer", desc: "1-based line number of the first line to return (default 1).", min: minimum(1)},
		prop{name: "limit", typ: "integer", desc: "Maximum number of lines to return (default: to the end, within the size cap).", min: minimum(1)},
	)
}

// Annotations: read_file never changes anything.
func (t *ReadFile) Annotations() tool.Annotations { return readOnly() }

// Meta summarises a call: "read src/main.go", "read src/main.go lines 10-59".
func (t *ReadFile) Meta(m map[string]any) string {
	s := "read " + t.c.metaPath(m["path"], "")
	a := args(m)
	off, _ := a.Int("offset")
	lim, _ := a.Int("limit")
	switch {
	case lim > 0:
		s += fmt.Sprintf(" lines %d-%d", max(off, 1), max(off, 1)+lim-1)
	case off > 1:
		s += fmt.Sprintf(" from line %d", off)
	}
	return s
}

// Execute reads the file.
func (t *ReadFile) Execute(ctx context.Context, call tool.Invocation) tool.Result {
	if err := ctx.Err(); err != nil {
		return failure(t.Name(), err)
	}
	a := args(call.Args)
	p, off, lim, err := readArgs(a)
	if err != nil {
		return failure(t.Name(), err)
	}
	f, abs, err := t.c.openRead(p)
	if err != nil {
		return failure(t.Name(), err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return failure(t.Name(), fmt.Errorf("stat %s: %w", t.c.display(abs), err))
	}
	ex, err := readText(f, bufferSize(fi.Size()), off, lim, t.c.maxRead)
	if errors.Is(err, errBinary) {
		return failure(t.Name(), fmt.Errorf("%s is a binary file (%d bytes); read_file returns text only", t.c.display(abs), fi.Size()))
	}
	if err != nil {
		return failure(t.Name(), fmt.Errorf("%s: %w", t.c.display(abs), err))
	}
	res := tool.OK(ex.render(t.c.maxRead))
	res.Truncated = ex.cut
	return res
}

func readArgs(a args) (path string, offset, limit int, err error) {
	if err := a.Only("path", "offset", "limit"); err != nil {
		return "", 0, 0, err
	}
	if path, err = a.Str("path", true); err != nil {
		return "", 0, 0, err
	}
	if offset, err = a.Int("offset"); err != nil {
		return "", 0, 0, err
	}
	if limit, err = a.Int("limit"); err != nil {
		return "", 0, 0, err
	}
	if offset < 0 || limit < 0 {
		return "", 0, 0, fmt.Errorf("offset and limit must be positive (offset is a 1-based line number)")
	}
	return path, max(offset, 1), limit, nil
}

// errBinary reports a file that is not text.
var errBinary = errors.New("binary file")

// excerpt is the part of a file read_file returns.
type excerpt struct {
	text        []byte
	first, last int  // first and last line numbers shown; last < first when none
	more        bool // the file goes on after the excerpt
	cut         bool // stopped by the byte cap, not by limit or the end
	cutMidLine  bool // a single line was longer than the cap and was cut
}

// render returns the excerpt's text and, when it is partial, a note saying how to continue.
func (e excerpt) render(maxBytes int64) string {
	if !e.more {
		return string(e.text)
	}
	var b bytes.Buffer
	b.Write(e.text)
	if len(e.text) > 0 && e.text[len(e.text)-1] != '\n' {
		b.WriteByte('\n')
	}
	switch {
	case e.cutMidLine:
		fmt.Fprintf(&b, "[awf: line %d is longer than %d bytes and was cut; continue with offset=%d]", e.last, maxBytes, e.last+1)
	case e.cut:
		fmt.Fprintf(&b, "[awf: output truncated at %d bytes after line %d; continue with offset=%d]", maxBytes, e.last, e.last+1)
	default:
		fmt.Fprintf(&b, "[awf: showed lines %d-%d; the file continues, continue with offset=%d]", e.first, e.last, e.last+1)
	}
	return b.String()
}

// readText reads lines [offset, offset+limit) of r (offset 1-based, limit 0 for all) into at
// most maxBytes. It refuses binary content.
func readText(r io.Reader, bufSize int, offset, limit int, maxBytes int64) (excerpt, error) {
	br := bufio.NewReaderSize(r, bufSize)
	head, err := br.Peek(sniffBytes)
	if err != nil && !errors.Is(err, io.EOF) {
		return excerpt{}, err
	}
	if looksBinary(head, err != nil) {
		return excerpt{}, errBinary
	}
	ex := excerpt{first: offset, last: offset - 1}
	var out bytes.Buffer
	line := 1        // number of the line being read
	lineStart := 0   // out.Len() where the current line began
	sawData := false // the current line has at least one byte
	for {
		chunk, err := br.ReadSlice('\n')
		inRange := line >= offset && (limit == 0 || line < offset+limit)
		switch {
		case inRange && len(chunk) > 0:
			if int64(out.Len()+len(chunk)) > maxBytes {
				ex.more, ex.cut = true, true
				if lineStart == 0 { // one line longer than the cap: keep its head
					out.Write(chunk[:runeCut(chunk, int(maxBytes)-out.Len())])
					ex.cutMidLine, ex.last = true, line
				} else {
					out.Truncate(lineStart)
					ex.last = line - 1
				}
				ex.text = out.Bytes()
				return ex, nil
			}
			out.Write(chunk)
			ex.last = line
		case !inRange && line >= offset && len(chunk) > 0:
			ex.more = true // limit reached and there is more
			ex.text = out.Bytes()
			return ex, nil
		}
		sawData = sawData || len(chunk) > 0
		if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
			line++
			lineStart = out.Len()
			sawData = false
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return excerpt{}, err
		}
	}
	lines := line - 1
	if sawData {
		lines = line
	}
	if offset > 1 && offset > lines {
		return excerpt{}, fmt.Errorf("offset %d is past the end of the file (%d lines)", offset, lines)
	}
	ex.text = out.Bytes()
	return ex, nil
}

// bufferSize sizes a read buffer for a file of size bytes: big enough to sniff its head, no
// bigger than the file needs, at most 64 KiB.
func bufferSize(size int64) int {
	return int(max(sniffBytes, min(64<<10, size+1)))
}

// runeCut returns n, moved back so that b[:n] does not end inside a UTF-8 sequence.
func runeCut(b []byte, n int) int {
	if n >= len(b) {
		return len(b)
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return n
}

// looksBinary reports whether the head of a file is not text: a NUL byte, or invalid UTF-8
// (a sequence cut by the end of the head does not count unless the file ends there).
func looksBinary(head []byte, atEOF bool) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return true
	}
	if !atEOF {
		for i := len(head) - 1; i >= 0 && i >= len(head)-utf8.UTFMax; i-- {
			if utf8.RuneStart(head[i]) {
				if !utf8.FullRune(head[i:]) {
					head = head[:i]
				}
				break
			}
		}
	}
	return !utf8.Valid(head)
}
