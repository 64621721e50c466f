package file

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/awf-dev/awf/internal/domain/state"
)

// MaxDiffBytes is the largest file, before or after a write, whose change write_file records
// as a unified diff; larger files and binary files get their digests only.
const MaxDiffBytes = 64 << 10

// snapshot is a file's content as a record needs it: its digest and, for a text file of at
// most MaxDiffBytes, its text.
type snapshot struct {
	digest string
	text   string
	why    string // why text is missing: "binary", "larger than ..."; "" when it is there
}

// snap reads base in dir for the record; a missing file gives the zero snapshot.
func snap(dir *os.Root, base string) (snapshot, error) {
	f, err := dir.Open(base)
	if os.IsNotExist(err) {
		return snapshot{}, nil
	}
	if err != nil {
		return snapshot{}, err
	}
	defer f.Close()
	h := sha256.New()
	var head bytes.Buffer
	n, err := io.Copy(io.MultiWriter(h, &limitedBuffer{&head, MaxDiffBytes + 1}), f)
	if err != nil {
		return snapshot{}, err
	}
	s := snapshot{digest: "sha256:" + hex.EncodeToString(h.Sum(nil))}
	switch b := head.Bytes(); {
	case n > MaxDiffBytes:
		s.why = fmt.Sprintf("larger than %d bytes", MaxDiffBytes)
	case bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b):
		s.why = "binary"
	default:
		s.text = string(b)
	}
	return s, nil
}

// limitedBuffer keeps the first max bytes written to it and accepts the rest unseen.
type limitedBuffer struct {
	b   *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// change is the record of a write of shown from before to after.
func change(shown string, before, after snapshot) state.FileChange {
	c := state.FileChange{Path: shown, Before: before.digest, After: after.digest}
	switch {
	case before.why != "":
		c.DiffOmitted = "before: " + before.why
	case after.why != "":
		c.DiffOmitted = "after: " + after.why
	case before.digest != after.digest:
		c.Diff = unifiedDiff(shown, before.text, after.text)
	}
	return c
}

// unifiedDiff is a unified diff of a to b with three lines of context: one hunk from the
// first line that differs to the last (correct, though not always minimal).
func unifiedDiff(name, a, b string) string {
	al, bl := lines(a), lines(b)
	pre := 0
	for pre < len(al) && pre < len(bl) && al[pre] == bl[pre] {
		pre++
	}
	suf := 0
	for suf < len(al)-pre && suf < len(bl)-pre && al[len(al)-1-suf] == bl[len(bl)-1-suf] {
		suf++
	}
	const ctx = 3
	start := max(pre-ctx, 0)
	endA, endB := min(len(al)-suf+ctx, len(al)), min(len(bl)-suf+ctx, len(bl))
	var sb strings.Builder
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n@@ -%s +%s @@\n", name, name, hunkRange(start, endA-start), hunkRange(start, endB-start))
	for _, l := range al[start:pre] {
		sb.WriteString(" " + l)
	}
	for _, l := range al[pre : len(al)-suf] {
		sb.WriteString("-" + l)
	}
	for _, l := range bl[pre : len(bl)-suf] {
		sb.WriteString("+" + l)
	}
	for _, l := range al[len(al)-suf : endA] {
		sb.WriteString(" " + l)
	}
	return sb.String()
}

// lines splits text into lines that keep their newline; a last line without one gets the
// diff's "\ No newline at end of file" marker.
func lines(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s+"\n\\ No newline at end of file\n")
			break
		}
		out, s = append(out, s[:i+1]), s[i+1:]
	}
	return out
}

// hunkRange is a hunk's "start,count" in unified diff form (1-based; start 0 for none).
func hunkRange(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if n == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}
