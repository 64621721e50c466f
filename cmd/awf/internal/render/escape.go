package render

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// Text, Line and OutText are the one way awf writes text that came from outside (tool and
// workflow output, model replies, step names, error messages that quote them, MCP tools'
// descriptions) where a person reads it. A terminal acts on control bytes: an escape sequence
// can set the window title (OSC 0), clear the screen, move the cursor over earlier lines,
// write to the clipboard (OSC 52) or make a link that says one thing and opens another (OSC
// 8); a carriage return or backspace overwrites what a line said; bidi overrides reorder it.
// The bytes themselves stay unchanged in the state file and the audit log.

// Text escapes s for a terminal keeping its lines: line feeds, tabs and the carriage return of
// a CRLF stay, every other control character (C0, DEL, C1), format character (bidi overrides,
// zero-width characters), line or paragraph separator and byte that is not valid UTF-8 is
// written as a Go escape ("\x1b", "\u202e", "\xff"). Backslashes are left alone, so ordinary
// output (paths, regular expressions) reads as it is. Text returns s itself when nothing needs
// escaping.
func Text(s string) string {
	i := firstUnsafe(s, true)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for {
		b.WriteString(s[:i]) // a run of bytes shown as they are
		if i == len(s) {
			return b.String()
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])|0x100, 16)[1:])
		case r == '\r' && i+1 < len(s) && s[i+1] == '\n':
			b.WriteByte('\r')
		default:
			var buf [12]byte // "'\U0010ffff'"
			q := strconv.AppendQuoteRuneToASCII(buf[:0], r)
			b.Write(q[1 : len(q)-1])
		}
		s = s[i+size:]
		i = firstUnsafe(s, true)
	}
}

// Line escapes s for one line of a terminal, a table cell or a prompt: as strconv.Quote does
// without the surrounding quotes (so line feeds and tabs are escaped too, and a backslash is
// doubled to keep the escapes unambiguous), leaving double quotes alone.
func Line(s string) string {
	if firstUnsafe(s, false) == len(s) && !strings.ContainsRune(s, '\\') {
		return s
	}
	q := strconv.Quote(s)
	return strings.ReplaceAll(q[1:len(q)-1], `\"`, `"`)
}

// firstUnsafe returns the index of the first byte of s that Text (lines) or Line (!lines)
// would change, or len(s). Printable ASCII is decided without decoding.
func firstUnsafe(s string, lines bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if ' ' <= c && c <= '~' || lines && (c == '\n' || c == '\t') {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			return i
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || !strconv.IsPrint(r) && (!lines || !strconv.IsGraphic(r)) {
			return i
		}
		i += size
	}
	return len(s)
}

// OutText is Text when the stream is a terminal and s unchanged otherwise: data a command
// prints on standard output (a workflow's output, a tool's) reaches a pipe or a file exactly as
// it was produced, for scripts, and is escaped only where a terminal would act on it.
func OutText(s string, terminal bool) string {
	if !terminal {
		return s
	}
	return Text(s)
}
