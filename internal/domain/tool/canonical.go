package tool

// Canonicalizer is implemented by tools whose arguments do not plainly say what a call does: a
// path with ".." or a symlink in it, a shell script running several commands, a URL spelt in an
// unusual way. Approval rules, "always" answers and the sandbox policy see the canonical form,
// so that an approval given to one spelling is never an approval of something else.
type Canonicalizer interface {
	// Canonical returns what the call would really do. An error means the arguments cannot be
	// understood (a script that does not parse); the engine then treats the call as opaque.
	Canonical(args map[string]any) (Canonical, error)
}

// Canonical is the canonical form of one call: every action it would perform, each as the
// argument map that approval rules see as `args`. A file read has one action (its resolved
// path); a shell script has one per simple command it contains, however deeply nested. A rule
// that approves automatically must hold for every action; a rule that asks or denies applies
// when it holds for any.
type Canonical struct {
	Actions []map[string]any `json:"actions"`
	// Opaque says why part of what the call does cannot be known before it runs (a command
	// name taken from a variable, eval); empty when the form is complete. No rule approves an
	// opaque call automatically.
	Opaque string `json:"opaque,omitempty"`
}

// CanonicalOf returns t's canonical form of args. Tools that do not implement Canonicalizer
// have their arguments as the one action; an error from Canonical makes the form opaque, with
// the raw arguments as the one action.
func CanonicalOf(t Tool, args map[string]any) Canonical {
	c, ok := t.(Canonicalizer)
	if !ok {
		return Canonical{Actions: []map[string]any{args}}
	}
	canon, err := c.Canonical(args)
	if err != nil {
		return Canonical{Actions: []map[string]any{args}, Opaque: err.Error()}
	}
	return canon
}
