package command

import (
	"fmt"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// Source is the workflow level of tool resolution: a workflow's tools: list. An entry with a
// command becomes a Tool; `use: owner/name@constraint` an alias of the installed tool;
// `builtin: true` an alias of the built-in of that name (or, when Builtin is set, the tool it
// returns, such as a built-in restricted by the entry's restrictions).
type Source struct {
	Specs  []workflow.ToolSpec
	Config Config
	// Builtin, when set, builds the tool of a `builtin: true` entry; returning nil falls
	// back to the plain built-in.
	Builtin func(spec workflow.ToolSpec) (tool.Tool, error)
}

var _ ports.ToolSource = Source{}

// Level is tool.LevelWorkflow.
func (s Source) Level() tool.Level { return tool.LevelWorkflow }

// Load builds the entries; a bad entry is a problem at its position, the others still load.
func (s Source) Load() (tool.Set, error) {
	var set tool.Set
	for _, spec := range s.Specs {
		switch {
		case spec.Command != "":
			t, err := New(spec, s.Config)
			if err != nil {
				set.Problems = append(set.Problems, workflow.Problem{Pos: spec.Pos, Msg: err.Error()})
				continue
			}
			set.Tools = append(set.Tools, t)
		case spec.Use != "":
			a, err := useAlias(spec)
			if err != nil {
				set.Problems = append(set.Problems, workflow.Problem{Pos: spec.Pos, Msg: err.Error()})
				continue
			}
			set.Aliases = append(set.Aliases, a)
		case spec.Builtin:
			if t, err := s.builtin(spec); err != nil {
				set.Problems = append(set.Problems, workflow.Problem{Pos: spec.Pos, Msg: fmt.Sprintf("tool %q: %v", spec.Name, err)})
			} else if t != nil {
				set.Refined = append(set.Refined, t)
			} else {
				set.Aliases = append(set.Aliases, tool.Alias{Name: spec.Name, Target: spec.Name, Level: tool.LevelBuiltin,
					Description: spec.Description, Source: spec.Pos.File, Pos: spec.Pos})
			}
		default:
			set.Problems = append(set.Problems, workflow.Problem{Pos: spec.Pos,
				Msg: fmt.Sprintf("tool %q needs one of command, use or builtin: true", spec.Name)})
		}
	}
	return set, nil
}

func (s Source) builtin(spec workflow.ToolSpec) (tool.Tool, error) {
	if s.Builtin == nil {
		return nil, nil
	}
	return s.Builtin(spec)
}

// useAlias reads `use: owner/name@constraint`.
func useAlias(spec workflow.ToolSpec) (tool.Alias, error) {
	owner, name, constraint, err := tool.ParseRef(spec.Use)
	if err != nil {
		return tool.Alias{}, fmt.Errorf("tool %q: use: %v", spec.Name, err)
	}
	target := name
	if owner != "" {
		target = owner + "/" + name
	}
	return tool.Alias{Name: spec.Name, Target: target, Constraint: constraint, Description: spec.Description,
		Source: spec.Pos.File, Pos: spec.Pos, Restrictions: spec.Restrictions}, nil
}
