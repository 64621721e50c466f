// Package bom reads past the byte order mark that Windows editors (Notepad, PowerShell's
// Out-File, some VS Code settings) put at the start of a UTF-8 file, for every reader of a file
// people write: workflows, tool manifests, .tool files, cassettes, configuration, input files,
// lock files, JSON schemas, prompt files. Left in, the mark is read as text: YAML took it as
// part of the first key (unknown key "\ufeffname"), JSON refused the file (invalid character
// 'ï'), a .tool file's description began with it. It lives outside the layers so that the
// application's readers (prompt files) use it too.
package bom

import (
	"bytes"
	"errors"
)

// ErrUTF16 is the error for a file that starts with a UTF-16 byte order mark (FF FE or
// FE FF): awf reads text as UTF-8 only, and a parser would stop at the first byte with a
// message about that byte rather than about the file. Readers wrap it with the file's name.
var ErrUTF16 = errors.New("the file is UTF-16; save as UTF-8")

var (
	utf8Mark    = []byte("\xef\xbb\xbf")
	utf16LEMark = []byte("\xff\xfe")
	utf16BEMark = []byte("\xfe\xff")
)

// Strip returns data without the UTF-8 byte order mark it may start with: the mark is not
// text, nor a column of line 1, so what follows keeps its positions. Only the first mark is
// removed: a second one, or one further on, is part of the text and stays whatever error the
// reader makes of it. Data that starts with a UTF-16 byte order mark is ErrUTF16 (a UTF-32 LE
// mark, FF FE 00 00, is one too: awf reads neither).
func Strip(data []byte) ([]byte, error) {
	if bytes.HasPrefix(data, utf16LEMark) || bytes.HasPrefix(data, utf16BEMark) {
		return nil, ErrUTF16
	}
	return bytes.TrimPrefix(data, utf8Mark), nil
}
