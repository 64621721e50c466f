package ports

import "github.com/awf-dev/awf/internal/domain/tool"

// ToolSource yields the tools defined in one place: the built-ins, a workflow's tools: list,
// a project's or user's manifest and .tool directories, the installed tools. The registry
// loads every source once and resolves names across levels (tool.Level).
type ToolSource interface {
	// Level is where the source's tools sit in name resolution.
	Level() tool.Level
	// Load reads the source. Problems with single definitions go in the Set (they skip the
	// definition); an error means the source as a whole could not be read.
	Load() (tool.Set, error)
}

// StaticTools is a ToolSource over a fixed Set, such as the built-ins.
type StaticTools struct {
	At  tool.Level
	Set tool.Set
}

var _ ToolSource = StaticTools{}

// Level returns s.At.
func (s StaticTools) Level() tool.Level { return s.At }

// Load returns s.Set.
func (s StaticTools) Load() (tool.Set, error) { return s.Set, nil }
