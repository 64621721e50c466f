// Package bomtest gives the tests of awf's file readers one file as each editor may save it,
// so that every reader is tested against the same byte order marks (see package bom).
package bomtest

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"
)

// File is a document as one editor saved it.
type File struct {
	Name string // "UTF-8", "UTF-8 with BOM", "UTF-16 LE", "UTF-16 BE"
	Data []byte
	// UTF16 says a reader must refuse the file with bom.ErrUTF16's words; otherwise it must
	// read the file exactly as it reads the plain UTF-8 one (same values, same errors at the
	// same positions).
	UTF16 bool
}

// Saved returns doc saved as UTF-8 (first, as the reference), UTF-8 with a byte order mark,
// and UTF-16 little- and big-endian with theirs.
func Saved(doc string) []File {
	return []File{
		{Name: "UTF-8", Data: []byte(doc)},
		{Name: "UTF-8 with BOM", Data: []byte("\ufeff" + doc)},
		{Name: "UTF-16 LE", Data: UTF16(doc, binary.LittleEndian), UTF16: true},
		{Name: "UTF-16 BE", Data: UTF16(doc, binary.BigEndian), UTF16: true},
	}
}

// UTF16 is doc as UTF-16 in the given byte order, after its byte order mark: what Windows
// tools write when they save "Unicode" text (little-endian).
func UTF16(doc string, order binary.AppendByteOrder) []byte {
	b := order.AppendUint16(nil, 0xfeff)
	for _, u := range utf16.Encode([]rune(doc)) {
		b = order.AppendUint16(b, u)
	}
	return b
}

// Case is one document a reader is tested with.
type Case struct {
	Name string
	Doc  string
	Err  string // a part of the error the plain UTF-8 file gives; "" when it reads
}

// UTF16Words is what the refusal of a UTF-16 file must say.
const UTF16Words = "UTF-16; save as UTF-8"

// Test runs read on every saved form (Saved) of each case's document, as subtests. read
// returns what it made of the data, formatted as a string, and its error. The plain UTF-8
// form must give the case's Err; the one with a byte order mark exactly what the plain one
// gives (a mark is not a column: errors name the same positions); the UTF-16 forms an error
// that says UTF16Words.
func Test(t *testing.T, cases []Case, read func(t *testing.T, data []byte) (string, error)) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			var plain string
			for _, f := range Saved(c.Doc) {
				t.Run(f.Name, func(t *testing.T) {
					got, err := read(t, f.Data)
					msg := ""
					if err != nil {
						msg = err.Error()
					}
					switch {
					case f.UTF16:
						if !strings.Contains(msg, UTF16Words) {
							t.Errorf("error = %q, want one saying %q", msg, UTF16Words)
						}
					case f.Name == "UTF-8":
						if (c.Err == "") != (err == nil) || !strings.Contains(msg, c.Err) {
							t.Errorf("error = %q, want %q", msg, c.Err)
						}
						plain = got + "\nerror: " + msg
					case got+"\nerror: "+msg != plain:
						t.Errorf("read differently from the plain file:\n%s\nerror: %s\nwant:\n%s", got, msg, plain)
					}
				})
			}
		})
	}
}

// TestFile is Test for a reader of a file: each saved form is written to a file named name in
// a temporary directory (the same path for every form, so that messages naming it compare
// equal), and read gets its path.
func TestFile(t *testing.T, name string, cases []Case, read func(path string) (string, error)) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	Test(t, cases, func(t *testing.T, data []byte) (string, error) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return read(path)
	})
}
