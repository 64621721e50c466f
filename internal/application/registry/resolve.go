package registry

import (
	"fmt"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/semver"
)

// resolve finds the entry a reference names (see the package doc). skip is the definition
// the reference appears in: a reference to its own name skips it.
func (r *Registry) resolve(ref string, skip *entry) (*entry, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.resolveLocked(ref, skip)
}

func (r *Registry) resolveLocked(ref string, skip *entry) (*entry, error) {
	return r.lookupLocked(ref, skip, true)
}

// lookupLocked is resolveLocked; with hint false, the error for a name nothing defines has no
// "did you mean", for a caller that only needs to know (the cycle check, which looks up
// every reference of every manifest: finding hints there made loading many manifests that
// call missing tools quadratic).
func (r *Registry) lookupLocked(ref string, skip *entry, hint bool) (*entry, error) {
	owner, name, constraint, err := tool.ParseRef(ref)
	if err != nil {
		return nil, fault.Wrap(fault.Invalid, err)
	}
	if owner != "" {
		return r.installedLocked(owner+"/"+name, constraint, skip, hint)
	}
	for _, l := range tool.Levels {
		e := r.levels[l][name]
		if e == nil || e == skip || skip != nil && name == skip.Name && l <= skip.Level {
			continue
		}
		if constraint != "" {
			if err := satisfies(e, constraint); err != nil {
				return nil, err
			}
		}
		return e, nil
	}
	if e, err, found := r.installedByNameLocked(name, constraint, skip, hint); found {
		return e, err
	}
	return nil, r.unknownLocked(ref, hint)
}

// installedLocked picks the highest installed version of owner/name satisfying constraint.
func (r *Registry) installedLocked(ref, constraint string, skip *entry, hint bool) (*entry, error) {
	versions := slices.DeleteFunc(slices.Clone(r.installed[ref]), func(e *entry) bool { return e == skip })
	if len(versions) == 0 {
		msg := fmt.Sprintf("tool %s is not installed (install it with: awf tools install %s)", ref, refWith(ref, constraint))
		if h := r.hintLocked(ref, hint); h != "" {
			msg += "; " + h
		}
		return nil, fault.New(fault.Invalid, "%s", msg)
	}
	if constraint == "" {
		return versions[0], nil
	}
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return nil, fault.New(fault.Invalid, "tool %s@%s: bad version constraint: %v", ref, constraint, err)
	}
	for _, e := range versions {
		if c.Check(e.semver) {
			return e, nil
		}
	}
	return nil, fault.New(fault.Invalid, "no installed version of %s satisfies %s (installed: %s); install one with: awf tools install %s@%s",
		ref, constraint, strings.Join(versionList(versions), ", "), ref, constraint)
}

// installedByNameLocked is the last resort for a bare name: the installed tools of that name,
// if a single owner has them.
func (r *Registry) installedByNameLocked(name, constraint string, skip *entry, hint bool) (*entry, error, bool) {
	var refs []string
	for ref := range r.installed {
		if _, n, _ := strings.Cut(ref, "/"); n == name {
			refs = append(refs, ref)
		}
	}
	switch len(refs) {
	case 0:
		return nil, nil, false
	case 1:
		e, err := r.installedLocked(refs[0], constraint, skip, hint)
		return e, err, true
	}
	slices.Sort(refs)
	return nil, fault.New(fault.Invalid, "tool %q is ambiguous: installed as %s; name one with owner/name", name, strings.Join(refs, ", ")), true
}

// satisfies checks the version of a bare-name definition against a constraint.
func satisfies(e *entry, constraint string) error {
	c, err := semver.NewConstraint(constraint)
	if err != nil {
		return fault.New(fault.Invalid, "tool %s@%s: bad version constraint: %v", e.Name, constraint, err)
	}
	v, err := semver.NewVersion(e.Version)
	if err != nil {
		return fault.New(fault.Invalid, "tool %s@%s: the %s tool has no version to check (defined at %s)", e.Name, constraint, e.Level, where(e))
	}
	if !c.Check(v) {
		return fault.New(fault.Invalid, "tool %s is version %s, which does not satisfy %s (defined at %s)", e.Name, e.Version, constraint, where(e))
	}
	return nil
}

// unknownLocked is the error for a name nothing defines.
func (r *Registry) unknownLocked(ref string, hint bool) error {
	if h := r.hintLocked(ref, hint); h != "" {
		return fault.New(fault.Invalid, "unknown tool %q (%s)", ref, h)
	}
	return fault.New(fault.Invalid, "unknown tool %q", ref)
}

// hintLocked is the "did you mean" for ref among every name a reference may use, when hint
// is set.
func (r *Registry) hintLocked(ref string, hint bool) string {
	if !hint {
		return ""
	}
	return workflow.DidYouMean(ref, r.namesLocked())
}

// namesLocked lists every name a reference may use, sorted. The list is shared: callers must
// not change it.
func (r *Registry) namesLocked() []string {
	if p := r.names.Load(); p != nil {
		return *p
	}
	var names []string
	for _, l := range tool.Levels {
		for n := range r.levels[l] {
			names = append(names, n)
		}
	}
	for ref := range r.installed {
		names = append(names, ref)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	r.names.Store(&names)
	return names
}

func versionList(es []*entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Version
	}
	return out
}

func refWith(ref, constraint string) string {
	if constraint == "" {
		return ref
	}
	return ref + "@" + constraint
}

// final follows aliases to the entry that does the work.
func final(e *entry) *entry {
	for i := 0; e.Kind == KindAlias && e.target != nil && i < 64; i++ {
		e = e.target
	}
	return e
}
