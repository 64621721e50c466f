package ports

import (
	"encoding/json"

	"github.com/awf-dev/awf/internal/domain/tool"
)

// SchemaValidator checks decoded JSON values against JSON Schemas (draft 2020-12 and
// draft-07). Implementations compile each distinct schema once and must be safe for concurrent
// use.
type SchemaValidator interface {
	// Validate returns every way value fails schema, each with the JSON path of the offending
	// value ("$.a.b[2]: want integer, got boolean"); none means valid. value is what
	// encoding/json decodes into an any (numbers as float64 or, better, json.Number). A schema
	// that does not compile is an error of kind fault.Invalid.
	Validate(schema json.RawMessage, value any) ([]tool.FieldError, error)
	// Check compiles schema and reports why it is not a usable JSON Schema (fault.Invalid).
	Check(schema json.RawMessage) error
}
