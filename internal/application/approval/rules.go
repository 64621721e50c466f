package approval

import (
	"encoding/json"
	"fmt"
	"path"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

// matchRule returns the index of the first rule that decides the call. Rules see the canonical
// form: `args` is one action of it, `tool` the tool's name, `step` the step's. A rule that
// loosens (auto) must hold for every action of a complete form, so a rule allowing `git
// status` does not allow `git status; rm -rf /`; a rule that tightens (prompt, deny) applies
// when it holds for any action, and when its condition cannot be evaluated (fail closed).
func (f *Flow) matchRule(req Request) (int, bool) {
	for i, r := range f.rules {
		if !toolMatches(r.Tool, req.Tool) {
			continue
		}
		if f.holds(r, req) {
			return i, true
		}
	}
	return 0, false
}

// toolMatches reports whether a rule's tool (a name or a glob; empty for every tool) covers
// name.
func toolMatches(pattern, name string) bool {
	if pattern == "" || pattern == name {
		return true
	}
	ok, err := path.Match(pattern, name)
	return err == nil && ok
}

func (f *Flow) holds(r workflow.ApprovalRule, req Request) bool {
	loosens := r.Decision == workflow.ApprovalAuto
	if loosens && req.Canonical.Opaque != "" {
		return false
	}
	if r.When == "" {
		return true
	}
	actions := req.Canonical.Actions
	if len(actions) == 0 {
		// A call with nothing to canonicalise (no arguments, an empty script) is judged on
		// its arguments as they are.
		args := req.Args
		if args == nil {
			args = map[string]any{}
		}
		actions = []map[string]any{args}
	}
	for _, a := range actions {
		ok, err := f.eval(r.When, req, a)
		if err != nil {
			// A broken condition never approves, and always tightens (fail closed).
			ok = !loosens
		}
		if loosens && !ok {
			return false
		}
		if !loosens && ok {
			return true
		}
	}
	return loosens
}

// eval evaluates a rule condition over one action; it must give a boolean.
func (f *Flow) eval(when string, req Request, action map[string]any) (bool, error) {
	v, err := f.cfg.Eval.Eval(when, ports.Scope{"args": action, "tool": req.Tool, "step": req.Step})
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("must be a boolean, got %T", v)
	}
	return b, nil
}

// alwaysKey identifies a call for "always" answers: the tool and its whole canonical form (and
// the raw arguments when the form is opaque), never a prefix.
func alwaysKey(req Request) string {
	b, err := json.Marshal(struct {
		Tool      string           `json:"t"`
		Actions   []map[string]any `json:"a"`
		Opaque    string           `json:"o,omitempty"`
		Arguments map[string]any   `json:"r,omitempty"`
	}{req.Tool, req.Canonical.Actions, req.Canonical.Opaque, rawIfOpaque(req)})
	if err != nil {
		// Unencodable arguments never match an earlier answer.
		return ""
	}
	return string(b)
}

func rawIfOpaque(req Request) map[string]any {
	if req.Canonical.Opaque != "" || len(req.Canonical.Actions) == 0 {
		return req.Args
	}
	return nil
}
