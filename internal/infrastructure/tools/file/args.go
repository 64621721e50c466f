package file

import (
	"encoding/json"

	"github.com/awf-dev/awf/internal/infrastructure/tools/internal/toolargs"
)

// args reads a call's arguments (shared with the http tool).
type args = toolargs.Args

// schema builds a strict JSON Schema object for a tool's parameters.
func schema(required []string, props ...prop) json.RawMessage {
	type property struct {
		Type        string `json:"type"`
		Description string `json:"description"`
		Minimum     *int   `json:"minimum,omitempty"`
	}
	m := map[string]property{}
	for _, p := range props {
		m[p.name] = property{Type: p.typ, Description: p.desc, Minimum: p.min}
	}
	if required == nil {
		required = []string{}
	}
	b, err := json.Marshal(struct {
		Type                 string              `json:"type"`
		Properties           map[string]property `json:"properties"`
		Required             []string            `json:"required"`
		AdditionalProperties bool                `json:"additionalProperties"`
	}{"object", m, required, false})
	if err != nil {
		panic(err) // static data: cannot fail
	}
	return b
}

// prop is one property of a parameters schema.
type prop struct {
	name, typ, desc string
	min             *int
}

func minimum(n int) *int { return &n }
