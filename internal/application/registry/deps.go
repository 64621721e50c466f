package registry

import (
	"fmt"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/semver"
)

// Missing is a dependency that is not available: declared in a manifest's dependencies, or
// called by one of its steps without resolving.
type Missing struct {
	Tool       string       `json:"tool"`       // the tool that needs it
	Dependency string       `json:"dependency"` // as declared: owner/name@constraint
	Reason     string       `json:"reason"`
	Installed  []string     `json:"installed,omitempty"` // versions present, when none fits
	Pos        workflow.Pos `json:"-"`
}

// Install is the command that installs what the tool needs; "" when the dependency is a bare
// name, which no registry provides: it is defined, not installed (see Fix).
func (m Missing) Install() string {
	if !Installable(m.Dependency) {
		return ""
	}
	return "awf tools install --deps " + m.Tool
}

// Fix says how to get the dependency: the command that installs it, or where to define a
// bare name.
func (m Missing) Fix() string {
	if c := m.Install(); c != "" {
		return "install with: " + c
	}
	return DefineHint(m.Dependency)
}

// Installable reports whether a tool reference names a registry's tool (owner/name[@...]):
// bare names are built-in, the workflow's, the project's or the user's.
func Installable(ref string) bool { return strings.Contains(ref, "/") }

// DefineHint is the advice for a bare tool name that does not resolve: no registry has it.
func DefineHint(name string) string {
	if i := strings.IndexAny(name, "@ "); i > 0 {
		name = name[:i]
	}
	return fmt.Sprintf("define %s as a project or user tool (.awf/wrapped-tools/%s.tool, or .awf/tools/%s/config.yaml; see docs/tools.md); no registry provides bare names",
		name, name, name)
}

func (m Missing) String() string {
	return fmt.Sprintf("tool %s needs %s: %s; %s", m.Tool, m.Dependency, m.Reason, m.Fix())
}

// CheckDependencies returns what the named tools need and is missing, following the
// meta-tools and chains they call; no names checks every manifest. An unknown name is a
// fault.Invalid error. Nothing is installed.
func (r *Registry) CheckDependencies(names ...string) ([]Missing, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var queue []*entry
	if len(names) == 0 {
		queue = r.manifestsLocked()
	}
	for _, n := range names {
		e, err := r.resolveLocked(n, nil)
		if err != nil {
			return nil, err
		}
		queue = append(queue, final(e))
	}
	var out []Missing
	seen := map[*entry]bool{}
	for len(queue) > 0 {
		e := queue[0]
		queue = queue[1:]
		if seen[e] || e.Manifest == nil {
			continue
		}
		seen[e] = true
		missing, calls := r.missingLocked(e)
		out = append(out, missing...)
		queue = append(queue, calls...)
	}
	return out, nil
}

// missingLocked checks one manifest's dependencies and step references, and returns the
// manifests it calls.
func (r *Registry) missingLocked(e *entry) ([]Missing, []*entry) {
	m := e.Manifest
	var out []Missing
	declared := map[string]bool{}
	for _, d := range m.Dependencies {
		declared[d.Ref] = true
		if reason, installed := r.checkDepLocked(d, e); reason != "" {
			out = append(out, Missing{Tool: e.Ref, Dependency: d.String(), Reason: reason, Installed: installed, Pos: d.Pos})
		}
	}
	var calls []*entry
	for _, ref := range m.References() {
		t, err := r.resolveLocked(ref.Tool, e)
		if err != nil {
			if dep, _ := tool.ParseDependency(ref.Tool); !declared[dep.Ref] {
				declared[dep.Ref] = true
				out = append(out, Missing{Tool: e.Ref, Dependency: ref.Tool, Reason: err.Error(), Pos: ref.Pos})
			}
			continue
		}
		if f := final(t); f.Manifest != nil {
			calls = append(calls, f)
		}
	}
	return out, calls
}

// checkDepLocked says why a dependency is not satisfied ("" when it is), with the installed
// versions when some are.
func (r *Registry) checkDepLocked(d tool.Dependency, from *entry) (string, []string) {
	if owner, _, _ := strings.Cut(d.Ref, "/"); owner != d.Ref {
		versions := r.installed[d.Ref]
		if len(versions) == 0 {
			return "not installed", nil
		}
		if d.Constraint == "" {
			return "", nil
		}
		c, err := semver.NewConstraint(d.Constraint)
		if err != nil {
			return fmt.Sprintf("bad version constraint %q: %v", d.Constraint, err), nil
		}
		if slices.ContainsFunc(versions, func(e *entry) bool { return c.Check(e.semver) }) {
			return "", nil
		}
		have := versionList(versions)
		return fmt.Sprintf("no installed version satisfies %s (installed: %s)", d.Constraint, strings.Join(have, ", ")), have
	}
	e, err := r.resolveLocked(d.Ref, from)
	if err != nil {
		return "not found: " + err.Error(), nil
	}
	if d.Constraint != "" {
		if err := satisfies(e, d.Constraint); err != nil {
			return err.Error(), []string{e.Version}
		}
	}
	return "", nil
}

// unmet is the error a meta-tool or chain fails with before its first step when a direct
// dependency or a step's tool is missing; "" when all are there.
func (r *Registry) unmet(e *entry) string {
	r.mu.RLock()
	missing, _ := r.missingLocked(e)
	r.mu.RUnlock()
	if len(missing) == 0 {
		return ""
	}
	parts := make([]string, len(missing))
	for i, m := range missing {
		parts[i] = fmt.Sprintf("%s (%s)", m.Dependency, m.Reason)
	}
	return fmt.Sprintf("tool %s cannot run: missing %s; nothing is installed automatically, %s",
		e.Ref, strings.Join(parts, ", "), missing[0].Fix())
}

// manifestsLocked lists every manifest entry, in a stable order.
func (r *Registry) manifestsLocked() []*entry {
	var out []*entry
	for _, l := range tool.Levels {
		for _, e := range r.levels[l] {
			if e.Manifest != nil {
				out = append(out, e)
			}
		}
	}
	for _, versions := range r.installed {
		out = append(out, versions...)
	}
	slices.SortFunc(out, func(a, b *entry) int {
		if c := strings.Compare(a.Ref, b.Ref); c != 0 {
			return c
		}
		return int(a.Level - b.Level)
	})
	return out
}
