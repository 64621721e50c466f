package httpx

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxLine is the longest line a stream may send: servers that repeat the whole message in every
// chunk send long ones.
const MaxLine = 32 << 20

// Lines reads a body line by line. A line ends at "\n", "\r\n" or a lone "\r", as server-sent
// events allow. It is not safe for concurrent use.
type Lines struct {
	sc         *bufio.Scanner
	terminated bool
	scanned    int
}

// NewLines reads lines from r.
func NewLines(r io.Reader) *Lines {
	l := &Lines{sc: bufio.NewScanner(r)}
	l.sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	l.sc.Split(l.split)
	return l
}

// Next returns the next line without its ending, valid until the next call, and whether an
// ending followed it (false only for a last line the body cut off). At the end of the body it
// returns io.EOF; a read error is returned as is.
func (l *Lines) Next() (line []byte, terminated bool, err error) {
	if l.sc.Scan() {
		return l.sc.Bytes(), l.terminated, nil
	}
	if err := l.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, false, fmt.Errorf("line longer than %d bytes: %w", MaxLine, err)
		}
		return nil, false, err
	}
	return nil, false, io.EOF
}

func (l *Lines) split(data []byte, atEOF bool) (advance int, token []byte, err error) {
	// Bytes before l.scanned were searched by an earlier call: a long line read in small
	// pieces is searched once, not once per piece.
	start := min(l.scanned, len(data))
	j := bytes.IndexAny(data[start:], "\r\n")
	if j < 0 {
		if atEOF && len(data) > 0 {
			return l.token(len(data), data, false)
		}
		l.scanned = len(data)
		return 0, nil, nil
	}
	i := start + j
	switch {
	case data[i] == '\n':
		return l.token(i+1, data[:i], true)
	case i+1 < len(data) && data[i+1] == '\n':
		return l.token(i+2, data[:i], true)
	case i+1 < len(data) || atEOF:
		return l.token(i+1, data[:i], true)
	default:
		l.scanned = i // a "\r" at the end of the buffer: see whether "\n" follows
		return 0, nil, nil
	}
}

func (l *Lines) token(advance int, token []byte, terminated bool) (int, []byte, error) {
	l.scanned, l.terminated = 0, terminated
	return advance, token, nil
}

// Event is one server-sent event.
type Event struct {
	// Type is the event: line's value, "" when the server sent none.
	Type string
	// Data is the event's data: lines, joined by "\n". It is valid until the next call to Next.
	Data []byte
}

// SSE reads server-sent events (text/event-stream): event and data fields, comments and
// ids ignored, an event dispatched at each blank line. It is not safe for concurrent use.
type SSE struct {
	lines *Lines
	data  []byte
	typ   string
	any   bool
}

// NewSSE reads events from r.
func NewSSE(r io.Reader) *SSE {
	return &SSE{lines: NewLines(r)}
}

// Next returns the next event. An event whose blank line never came is still returned when the
// body ends after a complete line; a body that ends inside a line gives [ErrTruncated]. At the
// end of the body Next returns io.EOF.
func (s *SSE) Next() (Event, error) {
	s.data, s.typ, s.any = s.data[:0], "", false
	for {
		line, terminated, err := s.lines.Next()
		if err == io.EOF {
			if s.any {
				return s.event(), nil
			}
			return Event{}, io.EOF
		}
		if err != nil {
			return Event{}, err
		}
		if !terminated {
			return Event{}, fmt.Errorf("event cut off: %w", ErrTruncated)
		}
		if len(line) == 0 {
			if s.any {
				return s.event(), nil
			}
			s.typ = ""
			continue
		}
		s.field(line)
	}
}

func (s *SSE) field(line []byte) {
	if line[0] == ':' {
		return // a comment, such as a keep-alive
	}
	name, value, _ := bytes.Cut(line, []byte(":"))
	value = bytes.TrimPrefix(value, []byte(" "))
	switch string(name) {
	case "data":
		if s.any {
			s.data = append(s.data, '\n')
		}
		s.data = append(s.data, value...)
		s.any = true
	case "event":
		s.typ = string(value)
	}
}

func (s *SSE) event() Event {
	s.any = false
	return Event{Type: s.typ, Data: s.data}
}
