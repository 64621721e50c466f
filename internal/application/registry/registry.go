package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/semver"
)

// DefaultMaxDepth is how deeply meta-tools may nest when Config.MaxDepth is 0 (seed 000).
const DefaultMaxDepth = 10

// Config is what a Registry needs. Validator and Clock are required.
type Config struct {
	Validator ports.SchemaValidator
	Clock     ports.Clock
	// MaxDepth bounds meta-tool nesting; 0 means DefaultMaxDepth.
	MaxDepth int
	// Timeout bounds every call that sets none of its own; 0 means none beyond the context.
	Timeout time.Duration
	// Stages run after argument validation and before execution, the first outermost: the
	// place for policy, approval and audit.
	Stages []Stage
	// Context is what tool descriptions may depend on (the working directory).
	Context tool.Context
}

// Registry holds tools and runs calls. Build it with New. Safe for concurrent use.
type Registry struct {
	cfg Config

	mu        sync.RWMutex
	levels    map[tool.Level]map[string]*entry
	installed map[string][]*entry // "owner/name" -> versions, highest first
	// names caches namesLocked's list, built on the first unknown reference after a change:
	// dropped (nil) when a tool is added, a name taken out when its last tool goes (see
	// forgetNameLocked). Sorting every name for each unknown reference made checking a
	// workflow of many such references, or loading many aliases of missing tools, quadratic.
	names atomic.Pointer[[]string]

	handler Handler
	cache   resultCache
}

var _ ports.ToolInvoker = (*Registry)(nil)

// New returns an empty Registry, or a fault.System error naming a missing dependency.
func New(cfg Config) (*Registry, error) {
	var missing []string
	if cfg.Validator == nil {
		missing = append(missing, "Validator")
	}
	if cfg.Clock == nil {
		missing = append(missing, "Clock")
	}
	if len(missing) > 0 {
		return nil, fault.New(fault.System, "registry: missing %s", strings.Join(missing, ", "))
	}
	if cfg.MaxDepth <= 0 {
		cfg.MaxDepth = DefaultMaxDepth
	}
	r := &Registry{
		cfg:       cfg,
		levels:    map[tool.Level]map[string]*entry{},
		installed: map[string][]*entry{},
		cache:     resultCache{m: map[string]tool.Result{}},
	}
	for _, l := range tool.Levels {
		r.levels[l] = map[string]*entry{}
	}
	r.handler = r.pipeline()
	return r, nil
}

// Kind says what defines a registered tool.
type Kind string

// Kinds of entries.
const (
	KindTool    Kind = "tool"    // a Go tool: a built-in, a custom command, registered code
	KindMeta    Kind = "meta"    // a manifest whose steps call other tools
	KindChain   Kind = "chain"   // a manifest that is a chain
	KindAlias   Kind = "alias"   // another name for a tool
	KindWrapped Kind = "wrapped" // a .tool file's wrapped command
)

// Entry describes one registered definition, for listing and `awf tools show`. Its JSON form
// is what `--output json` prints.
type Entry struct {
	Name        string          `json:"name"` // what a bare reference uses (installed tools: the name part)
	Ref         string          `json:"ref"`  // how to refer to it exactly: the name, or owner/name@version
	Kind        Kind            `json:"kind"`
	Level       tool.Level      `json:"level"`
	Source      string          `json:"source,omitempty"` // the defining file, or "builtin", ...
	Pos         workflow.Pos    `json:"-"`
	Version     string          `json:"version,omitempty"`
	Category    string          `json:"category,omitempty"`
	Tags        []string        `json:"tags,omitempty"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
	Target      string          `json:"target,omitempty"` // what an alias or a wrapped tool wraps
	Tool        tool.Tool       `json:"-"`
	Manifest    *tool.Manifest  `json:"-"` // for meta-tools and chains
	// Shadows lists the lower-level definitions of the same name this one hides.
	Shadows []string `json:"shadows,omitempty"`
}

// entry is a registered definition and what the registry keeps about it.
type entry struct {
	Entry
	alias     *tool.Alias
	wrap      *tool.WrapSpec
	target    *entry          // resolved target of an alias or wrapped tool
	semver    *semver.Version // installed tools
	building  bool
	cacheable bool
	refines   bool                // narrows the built-in of its name on purpose (tool.Set.Refined)
	propTypes map[string][]string // parameter types, for coercion
}

// Register adds a Go tool at the builtin level. A name already registered there, an invalid
// name or a parameter schema that does not compile is a fault.Invalid error.
func (r *Registry) Register(t tool.Tool) error {
	e := r.toolEntry(t, tool.LevelBuiltin)
	if err := r.checkEntry(e); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if old := r.levels[tool.LevelBuiltin][e.Name]; old != nil {
		return fault.New(fault.Invalid, "tool %q is already registered (%s)", e.Name, where(old))
	}
	r.levels[tool.LevelBuiltin][e.Name] = e
	r.names.Store(nil)
	return nil
}

// Unregister removes the definition a bare name (or owner/name, for every installed version)
// resolves to, and reports whether there was one. A definition it shadowed becomes visible.
func (r *Registry) Unregister(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if strings.Contains(name, "/") {
		ref, _, _ := strings.Cut(name, "@")
		_, ok := r.installed[ref]
		delete(r.installed, ref)
		r.forgetNameLocked(ref)
		return ok
	}
	for _, l := range tool.Levels {
		if _, ok := r.levels[l][name]; ok {
			delete(r.levels[l], name)
			r.forgetNameLocked(name)
			return true
		}
	}
	return false
}

// Get returns the tool a name resolves to.
func (r *Registry) Get(name string) (tool.Tool, bool) {
	e, err := r.resolve(name, nil)
	if err != nil {
		return nil, false
	}
	return e.Tool, true
}

// Lookup returns the entry a name resolves to, or the fault.Invalid error explaining why
// there is none.
func (r *Registry) Lookup(name string) (Entry, error) {
	e, err := r.resolve(name, nil)
	if err != nil {
		return Entry{}, err
	}
	return r.view(e), nil
}

// Contains reports whether a name resolves.
func (r *Registry) Contains(name string) bool {
	_, err := r.resolve(name, nil)
	return err == nil
}

// List returns the visible definitions sorted by name: for each bare name the one it
// resolves to, and each installed owner/name at its highest version.
func (r *Registry) List() []Entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []Entry
	seen := map[string]bool{}
	for _, l := range tool.Levels {
		for name, e := range r.levels[l] {
			if !seen[name] {
				seen[name] = true
				out = append(out, r.viewLocked(e))
			}
		}
	}
	for _, versions := range r.installed {
		out = append(out, r.viewLocked(versions[0]))
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.ListName(), b.ListName()) })
	return out
}

// ListName is how an entry is listed: installed tools as owner/name.
func (e Entry) ListName() string {
	if e.Level == tool.LevelInstalled && e.Manifest != nil {
		return e.Manifest.Ref()
	}
	return e.Name
}

// ListNames returns the names List lists.
func (r *Registry) ListNames() []string {
	var names []string
	for _, e := range r.List() {
		names = append(names, e.ListName())
	}
	return names
}

// Definitions returns every definition of a bare name (or every installed version of an
// owner/name), the one it resolves to first.
func (r *Registry) Definitions(name string) []Entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	var out []Entry
	if strings.Contains(name, "/") {
		ref, _, _ := strings.Cut(name, "@")
		for _, e := range r.installed[ref] {
			out = append(out, r.viewLocked(e))
		}
		return out
	}
	for _, l := range tool.Levels {
		if e := r.levels[l][name]; e != nil {
			out = append(out, r.viewLocked(e))
		}
	}
	return out
}

// Search returns the listed entries q matches (seed 003's search), sorted by name.
func (r *Registry) Search(q tool.Query) []Entry {
	var out []Entry
	for _, e := range r.List() {
		if q.Matches(e.ListName(), e.Tags) {
			out = append(out, e)
		}
	}
	return out
}

// Len counts the listed entries.
func (r *Registry) Len() int { return len(r.List()) }

// Schemas returns what a model is told about the named tools, in the order given; an unknown
// name is a fault.Invalid error suggesting the nearest one.
func (r *Registry) Schemas(names []string) ([]ports.ToolSchema, error) {
	out := make([]ports.ToolSchema, 0, len(names))
	for _, n := range names {
		e, err := r.resolve(n, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, ports.ToolSchema{Name: n, Description: e.Tool.Description(r.cfg.Context),
			Parameters: e.Tool.Parameters()})
	}
	return out, nil
}

func (r *Registry) view(e *entry) Entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.viewLocked(e)
}

// viewLocked completes an entry's description for callers.
func (r *Registry) viewLocked(e *entry) Entry {
	v := e.Entry
	v.Tags = slices.Clone(v.Tags)
	if e.Tool != nil {
		v.Description = e.Tool.Description(r.cfg.Context)
		v.Parameters = e.Tool.Parameters()
	}
	v.Shadows = nil
	if e.Level != tool.LevelInstalled {
		for _, l := range tool.Levels {
			if o := r.levels[l][e.Name]; l > e.Level && o != nil {
				v.Shadows = append(v.Shadows, fmt.Sprintf("%s (%s)", where(o), l))
			}
		}
	}
	return v
}

// where names the place an entry was defined.
func where(e *entry) string {
	switch {
	case e.Pos.File != "" && e.Pos.Line > 0:
		return fmt.Sprintf("%s:%d", e.Pos.File, e.Pos.Line)
	case e.Pos.File != "":
		return e.Pos.File
	case e.Source != "":
		return e.Source
	}
	return e.Level.String()
}

// callKey carries the *Call being executed to the tools the registry runs itself.
type callKey struct{}

// callFrom returns the call a tool is executing under, if the registry runs it.
func callFrom(ctx context.Context) *Call {
	c, _ := ctx.Value(callKey{}).(*Call)
	return c
}

var _ ports.ToolCatalog = (*Registry)(nil)

// Describe tells the agent loop about the named tools, in the order given
// (ports.ToolCatalog): each name as asked, its description for the run's working directory,
// its parameters, annotations and one-line summary. An unknown name is a fault.Invalid error
// suggesting the nearest one.
func (r *Registry) Describe(_ context.Context, q ports.ToolQuery) ([]ports.ToolInfo, error) {
	tctx := r.cfg.Context
	if q.WorkDir != "" {
		tctx.WorkDir = q.WorkDir
	}
	out := make([]ports.ToolInfo, 0, len(q.Names))
	for _, n := range q.Names {
		e, err := r.resolve(n, nil)
		if err != nil {
			return nil, err
		}
		info := ports.ToolInfo{Schema: ports.ToolSchema{Name: n, Description: e.Tool.Description(tctx),
			Parameters: e.Tool.Parameters()}}
		if a, ok := e.Tool.(tool.Annotated); ok {
			info.Annotations = a.Annotations()
		}
		if s, ok := e.Tool.(tool.Summarizer); ok {
			info.Meta = s.Meta
		}
		if c, ok := e.Tool.(tool.Checker); ok && c.Checks() {
			info.Checker = c
		}
		out = append(out, info)
	}
	return out, nil
}
