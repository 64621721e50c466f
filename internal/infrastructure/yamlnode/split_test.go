package yamlnode

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/goccy/go-yaml/parser"
)

func listDoc(n int, tail string) []byte {
	var b strings.Builder
	b.WriteString("name: x\nsteps:  # the list\n\n")
	for i := range n {
		fmt.Fprintf(&b, "  - name: s%d\n    command: |\n      echo %d\n", i, i)
	}
	b.WriteString(tail)
	return []byte(b.String())
}

// The rest keeps every line (so later lines keep their numbers) and the list's last run; the
// chunks hold the other entries, each one followed in the document by another entry.
func TestSplitSequence(t *testing.T) {
	data := listDoc(10, "# end\noutput: done\n")
	split, ok := SplitSequence(data, "steps", 1, 40)
	if !ok {
		t.Fatal("SplitSequence declined a long block list")
	}
	if bytes.Count(split.Rest, []byte("\n")) != bytes.Count(data, []byte("\n")) {
		t.Errorf("the rest has %d lines, the document %d", bytes.Count(split.Rest, []byte("\n")), bytes.Count(data, []byte("\n")))
	}
	if split.KeyLine != 2 || split.Line != 4 || split.Column != 3 {
		t.Errorf("key at line %d, list at %d:%d; want 2, 4:3", split.KeyLine, split.Line, split.Column)
	}
	n := len(split.Tail)
	line := 4
	for _, c := range split.Chunks {
		if c.Line != line || c.Entries[0] != line {
			t.Errorf("chunk at line %d (first entry %d), want %d", c.Line, c.Entries[0], line)
		}
		seq, err := ParseChunk(c)
		if err != nil {
			t.Fatalf("ParseChunk(%q): %v", c.Data, err)
		}
		for i, e := range seq.Entries {
			if got := e.Start.Position.Line; got != c.Entries[i] {
				t.Errorf("entry at line %d, want %d", got, c.Entries[i])
			}
		}
		n += len(seq.Values)
		line += 3 * len(c.Entries)
	}
	if n != 10 || split.Tail[0] != line {
		t.Errorf("%d entries, tail at line %d; want 10, %d", n, split.Tail[0], line)
	}
	f, err := parser.ParseBytes(split.Rest, 0)
	if err != nil {
		t.Fatalf("the rest does not parse: %v", err)
	}
	if _, _, tail, ok := split.VerifyRest(f); !ok || tail.Start.Position.Line != 4 || len(tail.Values) != len(split.Tail) {
		t.Errorf("VerifyRest = %v, want the tail, starting where the list starts", ok)
	}
}

func TestSplitSequenceDeclines(t *testing.T) {
	for name, doc := range map[string]string{
		"small":              string(listDoc(10, "")),
		"flow list":          "name: x\nsteps: [" + strings.Repeat("{name: a},", 100) + "]\n",
		"anchored list":      strings.Replace(string(listDoc(10, "")), "steps:  # the list", "steps: &s", 1),
		"no steps key":       strings.Replace(string(listDoc(10, "")), "steps:", "stages:", 1),
		"indented key":       strings.Replace(string(listDoc(10, "")), "steps:", " steps:", 1),
		"one entry":          "name: x\nsteps:\n  - name: a\n    command: |\n" + strings.Repeat("      echo\n", 100),
		"not a list":         "name: x\nsteps:\n  a: 1\n" + strings.Repeat("  b: 2\n", 100),
		"lone carriage ret.": strings.Replace(string(listDoc(10, "")), "echo 1", "echo\r1", 1),
	} {
		t.Run(name, func(t *testing.T) {
			from := 1
			if name == "small" {
				from = 1 << 20
			}
			if _, ok := SplitSequence([]byte(doc), "steps", from, 10); ok {
				t.Errorf("SplitSequence accepted %q", doc)
			}
		})
	}
}

// SplitNested cuts at the indented list that is most of the top-level one, with its key's
// column, and declines where no nested list is.
func TestSplitNested(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: x\nsteps:\n  - {name: pre}\n  - name: block\n    steps:\n")
	for i := range 10 {
		fmt.Fprintf(&b, "      - name: s%d\n        command: echo %d\n", i, i)
	}
	b.WriteString("  - name: small\n    steps:\n      - {name: a}\n      - {name: b}\noutput: done\n")
	data := []byte(b.String())
	split, ok := SplitNested(data, "steps", 1, 40)
	if !ok {
		t.Fatal("SplitNested declined a block's long list")
	}
	if split.KeyLine != 5 || split.KeyColumn != 5 || split.Line != 6 || split.Column != 7 {
		t.Errorf("key at %d:%d, list at %d:%d; want 5:5, 6:7", split.KeyLine, split.KeyColumn, split.Line, split.Column)
	}
	f, err := parser.ParseBytes(split.Rest, 0)
	if err != nil {
		t.Fatalf("the rest does not parse: %v", err)
	}
	if _, _, tail, ok := split.VerifyNested(f); !ok || len(tail.Values) != len(split.Tail) {
		t.Errorf("VerifyNested: ok %v", ok)
	}
	if _, ok := SplitNested(listDoc(10, ""), "steps", 1, 40); ok {
		t.Error("SplitNested cut a file with no nested list")
	}
	few := strings.Replace(b.String(), "  - {name: pre}\n", strings.Repeat("  - {name: pre, command: a long command line}\n", 20), 1)
	if _, ok := SplitNested([]byte(few), "steps", 1, 40); ok {
		t.Error("SplitNested cut a nested list that is not most of the top-level one")
	}
}

// Lists that each hold most of the top-level one hold one another: SplitNested cuts the
// innermost; and it gives up, rather than read the file once per level, past maxNestedScan.
func TestSplitNestedInnermost(t *testing.T) {
	doc := func(levels int) []byte {
		var b strings.Builder
		b.WriteString("steps:\n")
		pad := "  "
		for i := range levels {
			fmt.Fprintf(&b, "%s- name: block%d\n%s  steps:\n", pad, i, pad)
			pad += "    "
		}
		for i := range 20 {
			fmt.Fprintf(&b, "%s- {name: s%d, command: echo %d}\n", pad, i, i)
		}
		return []byte(b.String())
	}
	split, ok := SplitNested(doc(2), "steps", 1, 40)
	if !ok || split.KeyColumn != 9 || split.Column != 11 {
		t.Errorf("two blocks: ok %v, key column %d, entries at column %d; want the inner block's, 9 and 11", ok, split.KeyColumn, split.Column)
	}
	if _, ok := SplitNested(doc(maxNestedScan+2), "steps", 1, 40); ok {
		t.Errorf("%d blocks in one another: cut, want declined", maxNestedScan+2)
	}
}
