package schema

import (
	"fmt"
	"maps"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/shorten"
)

// maxDepth bounds how deeply validation descends (instance nesting plus $ref hops), so that a
// reference cycle that consumes nothing ({"$ref": "#"}) cannot recurse forever.
const maxDepth = 256

// Validate returns every failure of value against the schema, each with its JSON path, in
// document order of the schema's keywords. nil means valid.
func (s *Schema) Validate(value any) []tool.FieldError {
	v, err := normalize(value)
	if err != nil {
		return []tool.FieldError{{Path: "$", Message: err.Error()}}
	}
	w := &walker{s: s, refs: map[refVisit]refResult{}}
	w.validate(s.root, v, nil, 0)
	sortErrors(w.errs)
	w.errs = dedupe(w.errs)
	if len(w.errs) == 0 && s.fallback {
		if w.ways > max(maxFallbackWays, 8*uint64(len(w.refs))) {
			w.add(nil, "the value reaches the schema's references in more than %d ways, too many to check the keywords awf leaves to jsonschema-go (unevaluatedProperties, unevaluatedItems, $dynamicRef), which takes every way; send a shallower value", maxFallbackWays)
		} else if err := s.resolved.Validate(floats(v)); err != nil {
			w.add(nil, "%s", err.Error())
		}
	}
	return w.errs
}

type walker struct {
	s    *Schema
	errs []tool.FieldError
	// refs are the failures of each reference target already validated at a place and
	// depth, shared by a Validate's walkers (see validateRef).
	refs map[refVisit]refResult
	// ways counts the references a walker taking every way would have followed here.
	ways uint64
}

// refResult is what validating a reference target at one place found: its failures, and the
// references followed under it counting every way (itself included).
type refResult struct {
	errs []tool.FieldError
	ways uint64
}

// maxFallbackWays bounds the ways a value may reach a schema's references when the schema
// also needs jsonschema-go, whose validator takes each way (about 3.5 us a way here; a
// branching schema and 22 nested arrays: 17 s). A big value that reaches each place in one
// or a few ways (a long array of referenced items) is not held to it: only ways beyond 8 per
// place validated count as branching.
const maxFallbackWays = 1 << 16

// refVisit is a reference target validated at one place of the value, at one depth.
type refVisit struct {
	target *jsonschema.Schema
	path   string
	depth  int
}

func (w *walker) add(path *jpath, format string, args ...any) {
	w.errs = append(w.errs, tool.FieldError{Path: path.String(), Message: fmt.Sprintf(format, args...)})
}

// valid reports whether v matches sc, without recording anything.
func (w *walker) valid(sc *jsonschema.Schema, v any, path *jpath, depth int) bool {
	return len(w.sub(sc, v, path, depth)) == 0
}

// sub validates into a fresh error list and returns it.
func (w *walker) sub(sc *jsonschema.Schema, v any, path *jpath, depth int) []tool.FieldError {
	inner := &walker{s: w.s, refs: w.refs}
	inner.validate(sc, v, path, depth)
	w.ways = addWays(w.ways, inner.ways)
	sortErrors(inner.errs)
	return inner.errs
}

// addWays adds counts of ways, saturating: references that branch at every level are
// 2^depth ways.
func addWays(a, b uint64) uint64 {
	if a > math.MaxUint64-b {
		return math.MaxUint64
	}
	return a + b
}

// validateRef validates v against a reference's target once per place and depth, and
// afterwards repeats what it found (each failure once). A schema reaches the same place through the same target
// in many ways when its references branch (an anyOf or allOf of two subschemas that both
// descend into the value): 2^depth ways, so that 19 nested arrays took 21 s to validate
// against a 200-byte schema. With the failures kept, each target is validated once per place
// (and depth, which bounds references that consume nothing).
func (w *walker) validateRef(target *jsonschema.Schema, v any, path *jpath, depth int) {
	if w.refs == nil { // nothing kept: every way is taken (the tests' reference)
		w.validate(target, v, path, depth)
		return
	}
	key := refVisit{target: target, path: path.String(), depth: depth}
	r, ok := w.refs[key]
	if !ok {
		inner := &walker{s: w.s, refs: w.refs}
		inner.validate(target, v, path, depth)
		r = refResult{errs: dedupe(inner.errs), ways: addWays(inner.ways, 1)}
		w.refs[key] = r
	}
	w.ways = addWays(w.ways, r.ways)
	w.errs = append(w.errs, r.errs...)
}

func (w *walker) validate(sc *jsonschema.Schema, v any, path *jpath, depth int) {
	if sc == nil {
		return
	}
	if depth > maxDepth {
		w.add(path, "nested too deeply (more than %d levels of values and references)", maxDepth)
		return
	}
	if w.s.falses[sc] {
		w.add(path, "no value is allowed here")
		return
	}
	if sc.Ref != "" {
		if target := w.s.refs[sc]; target != nil {
			w.validateRef(target, v, path, depth+1)
		}
		if w.s.draft7 {
			return // draft-07 ignores the siblings of $ref
		}
	}
	if !w.types(sc, v, path) {
		return // the other keywords would only restate the type mismatch
	}
	w.values(sc, v, path)
	switch x := v.(type) {
	case string:
		w.str(sc, x, path)
	case []any:
		w.array(sc, x, path, depth)
	case map[string]any:
		w.object(sc, x, path, depth)
	default:
		if isNumber(v) {
			w.number(sc, v, path)
		}
	}
	w.logic(sc, v, path, depth)
}

// types checks type; it returns false on a mismatch.
func (w *walker) types(sc *jsonschema.Schema, v any, path *jpath) bool {
	if sc.Type == "" && sc.Types == nil {
		return true
	}
	got := jsonType(v)
	ok := func(t string) bool { return t == got || t == "number" && got == "integer" }
	if sc.Type != "" && ok(sc.Type) || slices.ContainsFunc(sc.Types, ok) {
		return true
	}
	want := sc.Type
	if want == "" {
		want = strings.Join(sc.Types, " or ")
	}
	w.add(path, "want %s, got %s", want, got)
	return false
}

// values checks enum and const.
func (w *walker) values(sc *jsonschema.Schema, v any, path *jpath) {
	if sc.Enum != nil && !slices.ContainsFunc(sc.Enum, func(e any) bool { return equal(e, v) }) {
		shown := make([]string, len(sc.Enum))
		for i, e := range sc.Enum {
			shown[i] = show(e)
		}
		w.add(path, "want one of %s, got %s", strings.Join(shown, ", "), show(v))
	}
	if sc.Const != nil && !equal(*sc.Const, v) {
		w.add(path, "want %s, got %s", show(*sc.Const), show(v))
	}
}

func (w *walker) number(sc *jsonschema.Schema, v any, path *jpath) {
	if m := sc.MultipleOf; m != nil && *m > 0 && !multipleOf(v, *m) {
		w.add(path, "want a multiple of %s, got %s", num(*m), show(v))
	}
	if b := sc.Minimum; b != nil && compare(v, *b) < 0 {
		w.add(path, "want >= %s, got %s", num(*b), show(v))
	}
	if b := sc.Maximum; b != nil && compare(v, *b) > 0 {
		w.add(path, "want <= %s, got %s", num(*b), show(v))
	}
	if b := sc.ExclusiveMinimum; b != nil && compare(v, *b) <= 0 {
		w.add(path, "want > %s, got %s", num(*b), show(v))
	}
	if b := sc.ExclusiveMaximum; b != nil && compare(v, *b) >= 0 {
		w.add(path, "want < %s, got %s", num(*b), show(v))
	}
}

func multipleOf(v any, m float64) bool {
	r, ok := ratOf(v)
	if !ok {
		f, _ := float(v)
		q := f / m
		return !math.IsInf(q, 0) && q == math.Trunc(q)
	}
	q := new(big.Rat).Quo(r, decimal(m))
	return q.IsInt()
}

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func (w *walker) str(sc *jsonschema.Schema, s string, path *jpath) {
	n := -1
	count := func() int {
		if n < 0 {
			n = utf8.RuneCountInString(s)
		}
		return n
	}
	if m := sc.MinLength; m != nil && count() < *m {
		w.add(path, "want at least %d characters, got %d", *m, count())
	}
	if m := sc.MaxLength; m != nil && count() > *m {
		w.add(path, "want at most %d characters, got %d", *m, count())
	}
	if sc.Pattern != "" && !w.s.patterns[sc.Pattern].MatchString(s) {
		w.add(path, "want a string matching %s, got %s", strconv.Quote(sc.Pattern), show(s))
	}
}

func (w *walker) array(sc *jsonschema.Schema, a []any, path *jpath, depth int) {
	if m := sc.MinItems; m != nil && len(a) < *m {
		w.add(path, "want at least %d items, got %d", *m, len(a))
	}
	if m := sc.MaxItems; m != nil && len(a) > *m {
		w.add(path, "want at most %d items, got %d", *m, len(a))
	}
	prefix, rest := sc.PrefixItems, sc.Items
	if sc.ItemsArray != nil { // draft-07 tuple form
		prefix, rest = sc.ItemsArray, sc.AdditionalItems
	}
	for i, e := range a {
		if i < len(prefix) {
			w.validate(prefix[i], e, path.index(i), depth+1)
		} else {
			w.validate(rest, e, path.index(i), depth+1)
		}
	}
	if sc.UniqueItems {
		w.unique(a, path)
	}
	if sc.Contains != nil {
		w.contains(sc, a, path, depth)
	}
}

func (w *walker) unique(a []any, path *jpath) {
	seen := make(map[string]int, len(a))
	var b strings.Builder
	for i, e := range a {
		b.Reset()
		canonical(&b, e)
		if j, dup := seen[b.String()]; dup {
			w.add(path, "want unique items, but items %d and %d are equal", j, i)
			return
		}
		seen[b.String()] = i
	}
}

func (w *walker) contains(sc *jsonschema.Schema, a []any, path *jpath, depth int) {
	n := 0
	for i, e := range a {
		if w.valid(sc.Contains, e, path.index(i), depth+1) {
			n++
		}
	}
	lo, hi := 1, -1
	if sc.MinContains != nil {
		lo = *sc.MinContains
	}
	if sc.MaxContains != nil {
		hi = *sc.MaxContains
	}
	switch {
	case n < lo:
		w.add(path, "want at least %d items matching contains, got %d", lo, n)
	case hi >= 0 && n > hi:
		w.add(path, "want at most %d items matching contains, got %d", hi, n)
	}
}

func (w *walker) object(sc *jsonschema.Schema, m map[string]any, path *jpath, depth int) {
	if n := sc.MinProperties; n != nil && len(m) < *n {
		w.add(path, "want at least %d properties, got %d", *n, len(m))
	}
	if n := sc.MaxProperties; n != nil && len(m) > *n {
		w.add(path, "want at most %d properties, got %d", *n, len(m))
	}
	for _, name := range sc.Required {
		if _, ok := m[name]; !ok {
			w.add(path.child(name), "is required")
		}
	}
	for k, needs := range sc.DependentRequired {
		w.dependentRequired(k, needs, m, path)
	}
	for k, needs := range sc.DependencyStrings {
		w.dependentRequired(k, needs, m, path)
	}
	for k, dep := range sc.DependentSchemas {
		if _, ok := m[k]; ok {
			w.validate(dep, m, path, depth+1)
		}
	}
	for k, dep := range sc.DependencySchemas {
		if _, ok := m[k]; ok {
			w.validate(dep, m, path, depth+1)
		}
	}
	for k, e := range m {
		w.member(sc, k, e, path, depth)
	}
}

func (w *walker) dependentRequired(key string, needs []string, m map[string]any, path *jpath) {
	if _, ok := m[key]; !ok {
		return
	}
	for _, n := range needs {
		if _, ok := m[n]; !ok {
			w.add(path.child(n), "is required when %q is present", key)
		}
	}
}

// member validates one property against properties, patternProperties, additionalProperties
// and propertyNames.
func (w *walker) member(sc *jsonschema.Schema, k string, v any, path *jpath, depth int) {
	p := path.child(k)
	if sc.PropertyNames != nil {
		for _, e := range w.sub(sc.PropertyNames, k, p, depth+1) {
			w.add(p, "property name: %s", e.Message)
		}
	}
	matched := false
	if ps, ok := sc.Properties[k]; ok {
		matched = true
		w.validate(ps, v, p, depth+1)
	}
	for pat, ps := range sc.PatternProperties {
		if w.s.patterns[pat].MatchString(k) {
			matched = true
			w.validate(ps, v, p, depth+1)
		}
	}
	if matched || sc.AdditionalProperties == nil {
		return
	}
	if w.s.falses[sc.AdditionalProperties] {
		allowed := slices.Sorted(maps.Keys(sc.Properties))
		msg := "unknown property"
		switch {
		case len(allowed) == 0:
			msg += " (none are allowed)"
		case workflow.Suggest(k, allowed) != "":
			msg += " (" + workflow.DidYouMean(k, allowed) + ")"
		default:
			msg += " (allowed: " + strings.Join(allowed, ", ") + ")"
		}
		w.add(p, "%s", msg)
		return
	}
	w.validate(sc.AdditionalProperties, v, p, depth+1)
}

// logic applies allOf, anyOf, oneOf, not and if/then/else.
func (w *walker) logic(sc *jsonschema.Schema, v any, path *jpath, depth int) {
	for _, s := range sc.AllOf {
		w.validate(s, v, path, depth+1)
	}
	if len(sc.AnyOf) > 0 {
		var firsts []string
		var cause tool.Cause
		ok := false
		for i, s := range sc.AnyOf {
			errs := w.sub(s, v, path, depth+1)
			if len(errs) == 0 {
				ok = true
				break
			}
			firsts = append(firsts, reason(i, errs, path))
			cause = deeper(cause, errs)
		}
		if !ok {
			w.addSummary(path, cause, "matches none of the anyOf schemas: %s", strings.Join(firsts, "; "))
		}
	}
	if len(sc.OneOf) > 0 {
		var matches []string
		var firsts []string
		var cause tool.Cause
		for i, s := range sc.OneOf {
			if errs := w.sub(s, v, path, depth+1); len(errs) == 0 {
				matches = append(matches, strconv.Itoa(i+1))
			} else {
				firsts = append(firsts, reason(i, errs, path))
				cause = deeper(cause, errs)
			}
		}
		switch len(matches) {
		case 1:
		case 0:
			w.addSummary(path, cause, "matches none of the oneOf schemas: %s", strings.Join(firsts, "; "))
		default:
			w.add(path, "matches oneOf schemas %s, want exactly one", strings.Join(matches, " and "))
		}
	}
	if sc.Not != nil && w.valid(sc.Not, v, path, depth+1) {
		w.add(path, "must not match the schema under not")
	}
	if sc.If != nil {
		if w.valid(sc.If, v, path, depth+1) {
			w.validate(sc.Then, v, path, depth+1)
		} else {
			w.validate(sc.Else, v, path, depth+1)
		}
	}
}

// dedupe drops the failures that repeat an earlier one (same place, same message), keeping
// the order: where references branch, both ways report what they share below, and the copies
// would double at every level.
func dedupe(errs []tool.FieldError) []tool.FieldError {
	if len(errs) < 2 {
		return errs
	}
	seen := make(map[tool.FieldError]bool, len(errs))
	out := errs[:0:0]
	for _, e := range errs {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}

// maxReason bounds how much of a subschema's failure an anyOf or oneOf failure quotes: the
// quoted failure may itself quote others, and with references that branch, each level
// would double the message (19 levels: megabytes).
const maxReason = 240

// reason is how an anyOf or oneOf failure at path quotes subschema i's first failure: without
// the path when it is the same place (a path thirty lists deep is a hundred bytes).
func reason(i int, errs []tool.FieldError, path *jpath) string {
	e := errs[0].String()
	if errs[0].Path == path.String() {
		e = errs[0].Message
	}
	return fmt.Sprintf("(%d) %s", i+1, shorten.To(e, maxReason))
}

// addSummary records a failure that sums up its subschemas' failures and, when the deepest of
// them lies below path and its quotes do not already hold it, names it too: the quotes are
// cut at maxReason, and beneath nested anyOfs the failure to fix (a string where a number
// must be, thirty lists down) is past the cut.
func (w *walker) addSummary(path *jpath, cause tool.Cause, format string, args ...any) {
	p := path.String()
	msg := fmt.Sprintf(format, args...)
	if c := cause.Path + ": " + cause.Message; pathDepth(cause.Path) > pathDepth(p) && !strings.Contains(msg, c) {
		msg += "; deepest: " + shorten.To(c, maxReason)
	}
	w.errs = append(w.errs, tool.FieldError{Path: p, Message: msg, Cause: cause})
}

// deeper returns the deeper of best and the deepest failure in errs, seen through the causes
// of failures that sum up others; best on a tie. A summary whose cause is at its own place
// stands for itself: it quotes every way that place failed.
func deeper(best tool.Cause, errs []tool.FieldError) tool.Cause {
	for _, e := range errs {
		c := tool.Cause{Path: e.Path, Message: e.Message}
		if pathDepth(e.Cause.Path) > pathDepth(e.Path) {
			c = e.Cause
		}
		if best.Path == "" || pathDepth(c.Path) > pathDepth(best.Path) {
			best = c
		}
	}
	return best
}

// pathDepth is how many steps a JSON path ("$.a.b[2]") takes below the whole value; a key
// that holds dots or brackets counts for more, which only picks which failure to name.
func pathDepth(p string) int {
	return strings.Count(p, ".") + strings.Count(p, "[")
}

// floats converts json.Number to float64 throughout, for jsonschema-go, which types a
// json.Number as a string.
func floats(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = floats(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = floats(e)
		}
		return out
	default:
		if _, ok := v.(interface{ Float64() (float64, error) }); ok {
			f, _ := float(v)
			return f
		}
	}
	return v
}
