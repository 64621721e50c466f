package tool

import (
	"context"
	"encoding/json"
)

// Func is a tool written as a Go function: the quickest way to give the registry an
// in-process tool (seed 003's @tool decorator). Its fields must not change once registered.
type Func struct {
	ToolName string
	Desc     string
	// Params is the JSON Schema of the arguments; nil accepts any object.
	Params json.RawMessage
	// Output, when set, is the JSON Schema of the result's Data (or of its Output parsed as
	// JSON); the registry validates it.
	Output json.RawMessage
	Notes  Annotations
	Fn     func(ctx context.Context, call Invocation) Result
}

var (
	_ Tool          = (*Func)(nil)
	_ Annotated     = (*Func)(nil)
	_ OutputSchemer = (*Func)(nil)
)

// Name returns ToolName.
func (f *Func) Name() string { return f.ToolName }

// Description returns Desc.
func (f *Func) Description(Context) string { return f.Desc }

// Parameters returns Params, or an open object schema.
func (f *Func) Parameters() json.RawMessage {
	if len(f.Params) == 0 {
		return json.RawMessage(`{"type":"object"}`)
	}
	return f.Params
}

// OutputSchema returns Output.
func (f *Func) OutputSchema() json.RawMessage { return f.Output }

// Annotations returns Notes.
func (f *Func) Annotations() Annotations { return f.Notes }

// Execute calls Fn.
func (f *Func) Execute(ctx context.Context, call Invocation) Result { return f.Fn(ctx, call) }
