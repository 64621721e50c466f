package tool

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Pin is what a lock file (`awf tools lock`) records of one tool, so that a run notices when
// the tool a model is given is not the one that was reviewed: digests of its description (what
// the model reads and follows), its parameter schema (whose descriptions the model reads too)
// and, for a tool defined in a file of its own (a manifest, a .tool file), that file (which says
// what the tool runs). A tool poisoned after review, or an MCP server that changes a tool under
// a workflow (a rug pull), changes one of them.
type Pin struct {
	Kind        string `json:"kind"`             // tool, meta, chain, alias, wrapped; mcp for MCP servers' tools
	Source      string `json:"source,omitempty"` // where it is defined, for people
	Description string `json:"description"`      // sha256:<hex> of the description
	Schema      string `json:"schema"`           // sha256:<hex> of the canonical JSON of the schema
	Definition  string `json:"definition,omitempty"`
}

// PinOf computes the pin of a tool from its description, its parameter schema and the bytes
// of its definition file (nil when it has none). The schema is compared by meaning: keys
// sorted, insignificant spaces dropped.
func PinOf(kind, source, description string, schema json.RawMessage, definition []byte) Pin {
	p := Pin{Kind: kind, Source: source, Description: Digest([]byte(description)), Schema: Digest(canonicalJSON(schema))}
	if definition != nil {
		p.Definition = Digest(definition)
	}
	return p
}

// Digest is "sha256:" and the hex SHA-256 of data.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// canonicalJSON re-encodes a JSON document with sorted keys and no spaces; a document that
// does not parse is hashed as it is.
func canonicalJSON(data json.RawMessage) []byte {
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return data
	}
	out, err := json.Marshal(v) // maps are written with sorted keys
	if err != nil {
		return data
	}
	return out
}

// PinChange is one difference between a lock and the tools a run would use.
type PinChange struct {
	Tool string
	// What changed: "description", "schema", "definition" (for these the tool is refused),
	// "added" (not in the lock: unpinned) or "removed" (in the lock, gone).
	What []string
	Pin  Pin // the tool's pin now; the locked one for "removed"
}

// Refuses reports whether the change refuses the tool: it is not the tool that was locked.
func (c PinChange) Refuses() bool {
	return !slices.Contains(c.What, "added") && !slices.Contains(c.What, "removed")
}

func (c PinChange) String() string {
	switch {
	case slices.Contains(c.What, "added"):
		return fmt.Sprintf("tool %s (%s) is not pinned in the lock file", c.Tool, c.Pin.Kind)
	case slices.Contains(c.What, "removed"):
		return fmt.Sprintf("tool %s is pinned in the lock file but no longer exists", c.Tool)
	}
	return fmt.Sprintf("tool %s changed since it was locked: %s", c.Tool, strings.Join(c.What, ", "))
}

// ComparePins returns the differences between locked and now, sorted by tool name.
func ComparePins(locked, now map[string]Pin) []PinChange {
	var out []PinChange
	for name, p := range now {
		old, ok := locked[name]
		if !ok {
			out = append(out, PinChange{Tool: name, What: []string{"added"}, Pin: p})
			continue
		}
		var what []string
		if old.Description != p.Description {
			what = append(what, "description")
		}
		if old.Schema != p.Schema {
			what = append(what, "schema")
		}
		if old.Definition != p.Definition {
			what = append(what, "definition")
		}
		if len(what) > 0 {
			out = append(out, PinChange{Tool: name, What: what, Pin: p})
		}
	}
	for name, p := range locked {
		if _, ok := now[name]; !ok {
			out = append(out, PinChange{Tool: name, What: []string{"removed"}, Pin: p})
		}
	}
	slices.SortFunc(out, func(a, b PinChange) int { return strings.Compare(a.Tool, b.Tool) })
	return out
}
