package statestore

import (
	"bytes"
	"errors"
	"maps"

	"github.com/goccy/go-yaml"

	"github.com/awf-dev/awf/internal/domain/state"
)

// The YAML parser awf uses (goccy/go-yaml v1.19) parses a block mapping in time quadratic in
// its number of keys (parseMap recurses once per sibling and copies the siblings parsed so far
// at every level; upstream pull request 889). A state file's `states` mapping has one key per
// step, so loading a 10,000-step run took seconds and hundreds of megabytes. decodeSplit reads
// such a file as the parser reads small ones: the `states` block in chunks of splitChunk
// steps, the rest of the document with an empty `states`.
const (
	// splitFrom is the number of steps from which a state file is read in chunks; below it
	// the quadratic part is a fraction of a millisecond.
	splitFrom = 512
	// splitChunk is how many steps each chunk holds.
	splitChunk = 256
)

// statesSplit is a state file cut for decodeSplit: rest is the document with `states: {}` and
// the block's lines left empty (so later lines keep their numbers), chunks the block's lines,
// splitChunk step entries each.
type statesSplit struct {
	rest   []byte
	chunks [][]byte
}

// splitStates cuts data as awf's encoder writes it: a `states:` line at column 0 followed by
// step entries whose keys sit at column 2, the block ending at the next line that starts at
// column 0. Nothing else in a step's entry can start at column 2 or less: YAML requires the
// content of its values (block scalars and continued flow scalars included) to be indented
// further. ok is false when the file does not have that shape or has few steps; the caller
// then decodes the whole document.
func splitStates(data []byte) (split statesSplit, ok bool) {
	start := lineIndex(data, []byte("states:\n"))
	if start < 0 {
		return split, false
	}
	blockStart := start + len("states:\n")
	var entries []int // offsets of the lines that start a step entry
	end := blockStart
	for end < len(data) {
		line := data[end:]
		if nl := bytes.IndexByte(line, '\n'); nl >= 0 {
			line = line[:nl+1]
		}
		if len(line) > 0 && line[0] != ' ' && line[0] != '\n' {
			break // column 0: the next top-level key, a comment or "# end"
		}
		if startsEntry(line) {
			entries = append(entries, end)
		}
		end += len(line)
	}
	if len(entries) < splitFrom || entries[0] != blockStart {
		return split, false
	}
	for i := 0; i < len(entries); i += splitChunk {
		stop := end
		if j := i + splitChunk; j < len(entries) {
			stop = entries[j]
		}
		split.chunks = append(split.chunks, data[entries[i]:stop])
	}
	rest := make([]byte, 0, start+len("states: {}\n")+bytes.Count(data[blockStart:end], []byte("\n"))+len(data)-end)
	rest = append(rest, data[:start]...)
	rest = append(rest, "states: {}\n"...)
	rest = append(rest, bytes.Repeat([]byte("\n"), bytes.Count(data[blockStart:end], []byte("\n")))...)
	split.rest = append(rest, data[end:]...)
	return split, true
}

// startsEntry reports whether line is a key at column 2: two spaces, then neither a space,
// a comment, a sequence entry nor the end of the line.
func startsEntry(line []byte) bool {
	if len(line) < 3 || line[0] != ' ' || line[1] != ' ' {
		return false
	}
	switch line[2] {
	case ' ', '#', '-', '\n', '\r', '\t':
		return false
	}
	return true
}

// errDuplicateStep is a step named twice in a split state file's chunks.
var errDuplicateStep = errors.New("a step is named twice")

// lineIndex is the offset of the first line of data that is exactly line (which ends in
// "\n"), or -1.
func lineIndex(data, line []byte) int {
	for off := 0; off < len(data); {
		if bytes.HasPrefix(data[off:], line) {
			return off
		}
		nl := bytes.IndexByte(data[off:], '\n')
		if nl < 0 {
			break
		}
		off += nl + 1
	}
	return -1
}

// decodeSplit decodes a split state file. Any error (a chunk that does not parse on its own,
// a step named in two chunks) is returned for the caller to decode the whole document
// instead, whose error names the right line.
func decodeSplit(split statesSplit) (*runDoc, error) {
	var doc runDoc
	if err := yaml.Unmarshal(split.rest, &doc); err != nil {
		return nil, err
	}
	states := make(map[string]*state.StepState, len(split.chunks)*splitChunk)
	for _, chunk := range split.chunks {
		var part map[string]*state.StepState
		if err := yaml.Unmarshal(chunk, &part); err != nil {
			return nil, err
		}
		for name := range part {
			if _, dup := states[name]; dup {
				return nil, errDuplicateStep
			}
		}
		maps.Copy(states, part)
	}
	doc.States = states
	return &doc, nil
}
