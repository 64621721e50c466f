package registry

import (
	"context"
	"encoding/json"

	"github.com/awf-dev/awf/internal/domain/tool"
)

// aliasTool is a tool under another name (seed 004's `@name` + `@wrapped`): it behaves as its
// target in every way but its name and, when the alias gives one, its description.
type aliasTool struct {
	name, desc string
	target     tool.Tool
}

var (
	_ tool.Tool          = (*aliasTool)(nil)
	_ tool.Summarizer    = (*aliasTool)(nil)
	_ tool.Annotated     = (*aliasTool)(nil)
	_ tool.OutputSchemer = (*aliasTool)(nil)
)

func (a *aliasTool) Name() string { return a.name }

func (a *aliasTool) Description(ctx tool.Context) string {
	if a.desc != "" {
		return a.desc
	}
	return a.target.Description(ctx)
}

func (a *aliasTool) Parameters() json.RawMessage { return a.target.Parameters() }

func (a *aliasTool) Execute(ctx context.Context, call tool.Invocation) tool.Result {
	return a.target.Execute(ctx, call)
}

func (a *aliasTool) Meta(args map[string]any) string {
	if s, ok := a.target.(tool.Summarizer); ok {
		return s.Meta(args)
	}
	return a.name
}

func (a *aliasTool) Annotations() tool.Annotations {
	if n, ok := a.target.(tool.Annotated); ok {
		return n.Annotations()
	}
	return tool.Annotations{}
}

func (a *aliasTool) OutputSchema() json.RawMessage {
	if o, ok := a.target.(tool.OutputSchemer); ok {
		return o.OutputSchema()
	}
	return nil
}

// Unwrap returns the target.
func (a *aliasTool) Unwrap() tool.Tool { return a.target }

// unwrap follows aliases to the tool that does the work.
func unwrap(t tool.Tool) tool.Tool {
	for range 64 {
		u, ok := t.(interface{ Unwrap() tool.Tool })
		if !ok {
			return t
		}
		t = u.Unwrap()
	}
	return t
}
