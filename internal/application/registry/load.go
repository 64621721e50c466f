package registry

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/semver"
)

// Load reads every source and registers what they define. It returns every problem found,
// sorted by position, and, when any is an error, the errors as a workflow.Problems error
// (fault.Invalid). Definitions with errors are skipped; the rest stay registered. A source
// that cannot be read at all stops Load with that error.
func (r *Registry) Load(sources ...ports.ToolSource) (workflow.Problems, error) {
	var probs workflow.Problems
	var added []*entry
	for _, src := range sources {
		set, err := src.Load()
		if err != nil {
			return probs, fmt.Errorf("load %s tools: %w", src.Level(), err)
		}
		probs = append(probs, set.Problems...)
		added = append(added, r.entries(set, src.Level())...)
	}
	r.mu.Lock()
	var kept []*entry
	for _, e := range added {
		if p, ok := r.insertLocked(e); !ok {
			probs = append(probs, p)
			continue
		}
		kept = append(kept, e)
	}
	for _, e := range kept {
		r.buildLocked(e, nil, &probs)
	}
	kept = slices.DeleteFunc(kept, func(e *entry) bool {
		if !r.presentLocked(e) {
			return true
		}
		if err := r.checkEntry(e); err != nil {
			probs = append(probs, problem(e, "%v", err))
			r.removeLocked(e)
			return true
		}
		return false
	})
	probs = append(probs, r.shadowsLocked(kept)...)
	probs = append(probs, r.cyclesLocked()...)
	r.mu.Unlock()
	probs.Sort()
	return probs, probs.Err()
}

// entries turns a source's set into entries at its level.
func (r *Registry) entries(set tool.Set, level tool.Level) []*entry {
	var out []*entry
	for _, t := range set.Tools {
		out = append(out, r.toolEntry(t, level))
	}
	for _, t := range set.Refined {
		e := r.toolEntry(t, level)
		e.refines = true
		out = append(out, e)
	}
	for _, m := range set.Manifests {
		out = append(out, r.manifestEntry(m, level))
	}
	for i := range set.Aliases {
		a := set.Aliases[i]
		target := a.Target
		if a.Constraint != "" {
			target += "@" + a.Constraint
		}
		out = append(out, &entry{Entry: Entry{Name: a.Name, Ref: a.Name, Kind: KindAlias, Level: level,
			Source: a.Source, Pos: a.Pos, Target: target}, alias: &a})
	}
	for i := range set.Wrapped {
		w := set.Wrapped[i]
		out = append(out, &entry{Entry: Entry{Name: w.Name, Ref: w.Name, Kind: KindWrapped, Level: level,
			Source: w.Source, Pos: w.Pos, Target: w.Wraps}, wrap: &w})
	}
	return out
}

// toolEntry describes a ready tool.
func (r *Registry) toolEntry(t tool.Tool, level tool.Level) *entry {
	e := &entry{Entry: Entry{Name: t.Name(), Ref: t.Name(), Kind: KindTool, Level: level, Tool: t}}
	if a, ok := t.(tool.Annotated); ok {
		n := a.Annotations()
		e.Version, e.Tags, e.Source, e.cacheable = n.Version, n.Tags, n.Source, n.Cacheable
	}
	if l, ok := t.(tool.Located); ok {
		e.Pos = l.Pos()
		if e.Source == "" {
			e.Source = e.Pos.File
		}
	}
	e.propTypes = propTypes(t.Parameters())
	return e
}

// manifestEntry wraps a manifest in the tool that runs it.
func (r *Registry) manifestEntry(m *tool.Manifest, level tool.Level) *entry {
	e := &entry{Entry: Entry{Name: m.Name, Ref: m.Ref(), Kind: KindMeta, Level: level, Source: m.Path,
		Pos: m.Pos, Version: m.Version, Category: m.Category, Tags: m.Tags, Manifest: m}, cacheable: m.Cache}
	if m.Version != "" && level == tool.LevelInstalled {
		e.Ref += "@" + m.Version
	}
	if m.Chain != nil {
		e.Kind = KindChain
		e.Tool = &chainTool{manifestTool{r: r, e: e, schema: m.Schema()}}
	} else {
		e.Tool = &metaTool{manifestTool{r: r, e: e, schema: m.Schema()}}
	}
	e.propTypes = propTypes(e.Tool.Parameters())
	return e
}

// checkEntry checks a built entry's name and parameter schema.
func (r *Registry) checkEntry(e *entry) error {
	if !tool.ValidName(e.Name) {
		return fault.New(fault.Invalid, "tool name %q: use 1 to 64 letters, digits, _ and -", e.Name)
	}
	if err := r.cfg.Validator.Check(e.Tool.Parameters()); err != nil {
		return fault.New(fault.Invalid, "tool %q: parameters: %w", e.Name, err)
	}
	if o, ok := e.Tool.(tool.OutputSchemer); ok && len(o.OutputSchema()) > 0 {
		if err := r.cfg.Validator.Check(o.OutputSchema()); err != nil {
			return fault.New(fault.Invalid, "tool %q: output schema: %w", e.Name, err)
		}
	}
	return nil
}

// insertLocked puts an entry in its level's table, or says why it cannot go there.
func (r *Registry) insertLocked(e *entry) (workflow.Problem, bool) {
	if e.Level == tool.LevelInstalled {
		return r.insertInstalledLocked(e)
	}
	table, ok := r.levels[e.Level]
	if !ok {
		return problem(e, "tool %q: unknown level %v", e.Name, e.Level), false
	}
	if !tool.ValidName(e.Name) {
		return problem(e, "tool name %q: use 1 to 64 letters, digits, _ and -", e.Name), false
	}
	if old := table[e.Name]; old != nil {
		return problem(e, "tool %q is defined twice at the %s level: here and at %s", e.Name, e.Level, where(old)), false
	}
	table[e.Name] = e
	r.names.Store(nil)
	return workflow.Problem{}, true
}

func (r *Registry) insertInstalledLocked(e *entry) (workflow.Problem, bool) {
	m := e.Manifest
	if m == nil || m.Owner == "" {
		return problem(e, "tool %q: installed tools are manifests with an owner", e.Name), false
	}
	v, err := semver.StrictNewVersion(m.Version)
	if err != nil {
		return problem(e, "tool %s: version %q is not a semantic version (such as 1.2.0)", m.Ref(), m.Version), false
	}
	list := r.installed[m.Ref()]
	for _, old := range list {
		if old.Version == m.Version {
			return problem(e, "tool %s@%s is installed twice: here and at %s", m.Ref(), m.Version, where(old)), false
		}
	}
	e.semver = v
	list = append(list, e)
	slices.SortFunc(list, func(a, b *entry) int { return b.semver.Compare(a.semver) })
	r.installed[m.Ref()] = list
	r.names.Store(nil)
	return workflow.Problem{}, true
}

// presentLocked reports whether the entry is still registered.
func (r *Registry) presentLocked(e *entry) bool {
	if e.Level == tool.LevelInstalled {
		return slices.Contains(r.installed[e.Manifest.Ref()], e)
	}
	return r.levels[e.Level][e.Name] == e
}

func (r *Registry) removeLocked(e *entry) {
	if e.Level == tool.LevelInstalled {
		ref := e.Manifest.Ref()
		r.installed[ref] = slices.DeleteFunc(r.installed[ref], func(x *entry) bool { return x == e })
		if len(r.installed[ref]) == 0 {
			delete(r.installed, ref)
			r.forgetNameLocked(ref)
		}
		return
	}
	if r.levels[e.Level][e.Name] == e {
		delete(r.levels[e.Level], e.Name)
		r.forgetNameLocked(e.Name)
	}
}

// forgetNameLocked takes name out of the cached names (see Registry.names) once nothing is
// registered under it. Loading drops each definition it cannot build (an alias of a tool
// that does not exist) right after looking for a hint, so dropping the whole list there
// would sort every name again for each of them.
func (r *Registry) forgetNameLocked(name string) {
	p := r.names.Load()
	if p == nil {
		return
	}
	for _, l := range tool.Levels {
		if _, ok := r.levels[l][name]; ok {
			return
		}
	}
	if _, ok := r.installed[name]; ok {
		return
	}
	if i, ok := slices.BinarySearch(*p, name); ok {
		// In place: the list is only read under the lock, which this caller holds to write.
		names := slices.Delete(*p, i, i+1)
		r.names.Store(&names)
	}
}

// buildLocked builds an alias or wrapped tool once its target is known, building the target
// first when it is itself pending. chain holds the pending definitions being built, to
// report a cycle of aliases. It reports whether the entry has a tool.
func (r *Registry) buildLocked(e *entry, chain []string, probs *workflow.Problems) bool {
	if e.Tool != nil {
		return true
	}
	if !r.presentLocked(e) {
		return false
	}
	if e.building {
		*probs = append(*probs, problem(e, "alias cycle: %s", strings.Join(append(chain, e.Name), " -> ")))
		return false
	}
	e.building = true
	defer func() { e.building = false }()
	what := "alias"
	if e.wrap != nil {
		what = "wrapped tool"
	}
	target, err := r.targetLocked(e)
	if err != nil {
		*probs = append(*probs, problem(e, "%s %q: %v", what, e.Name, err))
		r.removeLocked(e)
		return false
	}
	if !r.buildLocked(target, append(chain, e.Name), probs) {
		r.removeLocked(e)
		return false
	}
	e.target = target
	if e.alias != nil {
		t, err := narrowed(target.Tool, e.alias.Restrictions)
		if err != nil {
			*probs = append(*probs, problem(e, "%s %q: %v", what, e.Name, err))
			r.removeLocked(e)
			return false
		}
		e.Tool = &aliasTool{name: e.Name, desc: e.alias.Description, target: t}
		e.Version, e.Tags, e.cacheable, e.propTypes = target.Version, target.Tags, target.cacheable, target.propTypes
		return true
	}
	w, ok := unwrap(target.Tool).(tool.Wrappable)
	if !ok {
		*probs = append(*probs, problem(e, "wrapped tool %q: tool %q cannot be wrapped with a @command (wrap run_command or shell)",
			e.Name, e.Target))
		r.removeLocked(e)
		return false
	}
	built, err := w.Wrap(*e.wrap)
	if err != nil {
		*probs = append(*probs, problem(e, "wrapped tool %q: %v", e.Name, err))
		r.removeLocked(e)
		return false
	}
	e.Tool = built
	e.propTypes = propTypes(built.Parameters())
	return true
}

// targetLocked resolves what an alias or wrapped tool refers to, skipping the definition
// itself, and only on the alias's Level when it names one.
func (r *Registry) targetLocked(e *entry) (*entry, error) {
	if e.alias == nil || e.alias.Level == 0 {
		return r.resolveLocked(e.Target, e)
	}
	if t := r.levels[e.alias.Level][e.alias.Target]; t != nil && t != e {
		return t, nil
	}
	names := slices.Sorted(maps.Keys(r.levels[e.alias.Level])) // sorted: the same hint every time
	msg := fmt.Sprintf("there is no %s tool %q", e.alias.Level, e.alias.Target)
	if h := workflow.DidYouMean(e.alias.Target, names); h != "" {
		msg += " (" + h + ")"
	}
	return nil, fault.New(fault.Invalid, "%s", msg)
}

// shadowsLocked warns about each added definition that hides, or is hidden by, a definition
// of the same name on another level. An alias of the tool of its own name (a workflow's
// `read_file` entry over the built-in) hides nothing, nor does a refined built-in (Set.Refined).
func (r *Registry) shadowsLocked(added []*entry) workflow.Problems {
	var probs workflow.Problems
	seen := map[[2]*entry]bool{}
	for _, e := range added {
		if e.Level == tool.LevelInstalled {
			continue
		}
		for _, l := range tool.Levels {
			o := r.levels[l][e.Name]
			if o == nil || o == e {
				continue
			}
			hi, lo := e, o
			if l < e.Level {
				hi, lo = o, e
			}
			if seen[[2]*entry{hi, lo}] || hi.target == lo || (hi.refines && lo.Level == tool.LevelBuiltin) {
				continue
			}
			seen[[2]*entry{hi, lo}] = true
			p := problem(hi, "tool %q (%s) shadows the %s tool %q defined at %s", hi.Name, hi.Level, lo.Level, lo.Name, where(lo))
			p.Severity = workflow.SeverityWarning
			probs = append(probs, p)
		}
	}
	return probs
}

// problem is an error about an entry, at its position.
func problem(e *entry, format string, args ...any) workflow.Problem {
	pos := e.Pos
	if pos.File == "" && e.Source != "" {
		pos.File = e.Source
	}
	return workflow.Problem{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// propTypes reads the declared types of a schema's top-level properties.
func propTypes(schema json.RawMessage) map[string][]string {
	var s struct {
		Properties map[string]struct {
			Type json.RawMessage `json:"type"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil || len(s.Properties) == 0 {
		return nil
	}
	out := make(map[string][]string, len(s.Properties))
	for name, p := range s.Properties {
		var one string
		var many []string
		switch {
		case json.Unmarshal(p.Type, &one) == nil && one != "":
			out[name] = []string{one}
		case json.Unmarshal(p.Type, &many) == nil:
			out[name] = many
		}
	}
	return out
}

// narrowed is t under restrictions r (nil: t itself). Only a tool whose processes run under
// the sandbox policy can be narrowed; restricting any other is an error, so that no
// restriction is written that nothing enforces.
func narrowed(t tool.Tool, r *workflow.Restrictions) (tool.Tool, error) {
	if r == nil {
		return t, nil
	}
	n, ok := unwrap(t).(tool.Narrowable)
	if !ok {
		return nil, fmt.Errorf("restrictions cannot narrow tool %q: only tools that run processes under the sandbox "+
			"policy (shell, command templates, wrapped .tool files) can be restricted; a manifest's steps call other "+
			"tools (restrict those), an MCP tool runs in its server", t.Name())
	}
	return n.Narrow(r)
}
