// Package schema validates decoded JSON values against JSON Schemas (draft 2020-12 and
// draft-07) and implements ports.SchemaValidator. It parses and resolves schemas with
// github.com/google/jsonschema-go, then validates with its own walker, because
// jsonschema-go v0.4.3 (1) types a json.Number as a string, so arguments decoded with
// UseNumber never validate as numbers, (2) stops at the first failure, and (3) reports
// schema paths ("/properties/a/items") instead of the JSON path of the offending value. The
// walker reports every failure as "$.a.b[2]: want integer, got boolean".
//
// The walker implements the validation vocabulary (type, enum, const, the numeric, string,
// array and object keywords, required, additionalProperties as a boolean or a schema,
// patternProperties, propertyNames, dependencies), the applicators allOf, anyOf, oneOf,
// not, if/then/else, and local $ref ("#", "#/json/pointer", "#anchor"). Schemas using what
// it does not implement ($dynamicRef, unevaluatedProperties, unevaluatedItems, $id-relative
// references) are also run through jsonschema-go, whose verdict is then reported at "$".
// "format" is an annotation and not checked, as the specification allows.
package schema

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
)

// MaxCached bounds how many distinct schemas a Validator keeps compiled. Tools have a handful
// each; beyond the bound a schema is compiled at every use rather than growing the cache.
const MaxCached = 4096

// Validator compiles each distinct schema once (by its bytes) and validates values against
// it. The zero value is not usable; call New. Safe for concurrent use.
type Validator struct {
	mu    sync.RWMutex
	cache map[string]entry // by the schema's bytes
}

var _ ports.SchemaValidator = (*Validator)(nil)

type entry struct {
	s   *Schema
	err error
}

// New returns a Validator with an empty cache.
func New() *Validator { return &Validator{cache: map[string]entry{}} }

// Validate returns every failure of value against schema, with JSON paths. A schema that does
// not compile is a fault.Invalid error.
func (v *Validator) Validate(schema json.RawMessage, value any) ([]tool.FieldError, error) {
	s, err := v.Compile(schema)
	if err != nil {
		return nil, err
	}
	return s.Validate(value), nil
}

// Check compiles schema and reports why it is not usable.
func (v *Validator) Check(schema json.RawMessage) error {
	_, err := v.Compile(schema)
	return err
}

// Compile returns the compiled form of schema, from the cache when it was seen before.
func (v *Validator) Compile(schema json.RawMessage) (*Schema, error) {
	v.mu.RLock()
	e, ok := v.cache[string(schema)] // no allocation: the compiler looks up []byte keys in place
	v.mu.RUnlock()
	if ok {
		return e.s, e.err
	}
	s, err := Compile(schema)
	v.mu.Lock()
	if len(v.cache) < MaxCached {
		v.cache[string(schema)] = entry{s, err}
	}
	v.mu.Unlock()
	return s, err
}

// jsonTypes are the values of the type keyword.
var jsonTypes = []string{"array", "boolean", "integer", "null", "number", "object", "string"}

// Schema is a compiled schema. It is immutable and safe for concurrent use.
type Schema struct {
	root     *jsonschema.Schema
	resolved *jsonschema.Resolved
	draft7   bool
	patterns map[string]*regexp.Regexp
	refs     map[*jsonschema.Schema]*jsonschema.Schema // a schema with $ref -> its target
	falses   map[*jsonschema.Schema]bool               // the schemas that are `false`
	// fallback is set when the schema uses keywords the walker does not implement:
	// jsonschema-go then validates too.
	fallback bool
}

// Compile parses and resolves a JSON Schema. An empty schema accepts everything. Errors are
// of kind fault.Invalid.
func Compile(raw json.RawMessage) (*Schema, error) {
	if len(raw) == 0 {
		raw = json.RawMessage(`{}`)
	}
	var root jsonschema.Schema
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil, fault.New(fault.Invalid, "JSON Schema does not parse: %w", err)
	}
	resolved, err := root.Resolve(nil)
	if err != nil {
		return nil, fault.New(fault.Invalid, "JSON Schema is not valid: %w", err)
	}
	s := &Schema{
		root:     &root,
		resolved: resolved,
		draft7:   root.Schema == "http://json-schema.org/draft-07/schema#" || root.Schema == "https://json-schema.org/draft-07/schema#",
		patterns: map[string]*regexp.Regexp{},
		refs:     map[*jsonschema.Schema]*jsonschema.Schema{},
		falses:   map[*jsonschema.Schema]bool{},
	}
	if err := s.prepare(&root, map[*jsonschema.Schema]bool{}); err != nil {
		return nil, fault.New(fault.Invalid, "JSON Schema: %w", err)
	}
	return s, nil
}

// prepare walks every subschema once: it compiles patterns, resolves local references and
// notes keywords the walker leaves to jsonschema-go.
func (s *Schema) prepare(sc *jsonschema.Schema, seen map[*jsonschema.Schema]bool) error {
	if sc == nil || seen[sc] {
		return nil
	}
	seen[sc] = true
	if sc.Not != nil {
		// jsonschema-go reads `false` as {"not": {}}, and writes it back as false.
		if b, err := json.Marshal(sc); err == nil && string(b) == "false" {
			s.falses[sc] = true
		}
	}
	if sc.DynamicRef != "" || sc.UnevaluatedItems != nil || sc.UnevaluatedProperties != nil {
		s.fallback = true
	}
	for _, t := range append([]string{sc.Type}, sc.Types...) {
		if t != "" && !slices.Contains(jsonTypes, t) {
			return fmt.Errorf("unknown type %q (want one of %s)", t, strings.Join(jsonTypes, ", "))
		}
	}
	if sc.MultipleOf != nil && *sc.MultipleOf <= 0 {
		return fmt.Errorf("multipleOf must be greater than 0, got %v", *sc.MultipleOf)
	}
	if err := s.compilePatterns(sc); err != nil {
		return err
	}
	if sc.Ref != "" {
		target, err := s.resolveRef(sc.Ref)
		if err != nil {
			return err
		}
		if target == nil {
			s.fallback = true
		} else {
			s.refs[sc] = target
			if err := s.prepare(target, seen); err != nil {
				return err
			}
		}
	}
	for _, child := range children(sc) {
		if err := s.prepare(child, seen); err != nil {
			return err
		}
	}
	return nil
}

func (s *Schema) compilePatterns(sc *jsonschema.Schema) error {
	add := func(p string) error {
		if _, ok := s.patterns[p]; ok {
			return nil
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return fmt.Errorf("pattern %q: %w", p, err)
		}
		s.patterns[p] = re
		return nil
	}
	if sc.Pattern != "" {
		if err := add(sc.Pattern); err != nil {
			return err
		}
	}
	for p := range sc.PatternProperties {
		if err := add(p); err != nil {
			return err
		}
	}
	return nil
}

// children lists the direct subschemas of sc.
func children(sc *jsonschema.Schema) []*jsonschema.Schema {
	out := []*jsonschema.Schema{sc.Items, sc.AdditionalItems, sc.Contains, sc.UnevaluatedItems,
		sc.AdditionalProperties, sc.PropertyNames, sc.UnevaluatedProperties, sc.Not, sc.If, sc.Then,
		sc.Else, sc.ContentSchema}
	out = append(out, sc.PrefixItems...)
	out = append(out, sc.ItemsArray...)
	out = append(out, sc.AllOf...)
	out = append(out, sc.AnyOf...)
	out = append(out, sc.OneOf...)
	for _, m := range []map[string]*jsonschema.Schema{sc.Defs, sc.Definitions, sc.Properties,
		sc.PatternProperties, sc.DependentSchemas, sc.DependencySchemas} {
		for _, c := range m {
			out = append(out, c)
		}
	}
	return out
}
