package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/mcp/wire"
)

// Defaults of SourceConfig.
const (
	DefaultStartTimeout = 30 * time.Second
	DefaultCallTimeout  = 5 * time.Minute
	DefaultMaxOutput    = 1 << 20
)

// SourceConfig is what a Source needs. Servers is required; every other field has a default.
type SourceConfig struct {
	// Servers are the workflow's mcp_servers, by name.
	Servers map[string]workflow.MCPServer
	// Start names the servers Load starts; nil starts them all. Referenced(wf) gives the
	// servers a run needs.
	Start []string
	// Dir is the directory stdio servers start in, and what a relative command path is
	// relative to; "" is awf's own.
	Dir string
	// Environ is the base environment of stdio servers ("K=V"), to which a server's env:
	// entries are added; nil means awf's own environment. ${NAME} in env values, args,
	// command and url is expanded from it.
	Environ []string
	// StartTimeout bounds starting one server and listing its tools.
	StartTimeout time.Duration
	// CallTimeout bounds a call whose context has no deadline (tool_options.timeout_per_call
	// sets one), so that a server that stops answering never hangs a run.
	CallTimeout time.Duration
	// MaxOutput caps the text of one result kept for the model, in bytes.
	MaxOutput int
	// HTTPClient reaches url servers; nil means a client that ignores proxy settings.
	HTTPClient *http.Client
	// Version is awf's version, sent to servers in the handshake.
	Version string
	Log     *slog.Logger
}

// Source is the MCP servers of one workflow as a tool source (ports.ToolSource) at the
// workflow level: Load starts the servers (once; later calls return the same set) and lists
// their tools, registered as server__tool; Close stops them. Build one per run. Safe for
// concurrent use.
type Source struct {
	cfg SourceConfig

	mu     sync.Mutex
	loaded bool
	set    tool.Set
	conns  map[string]*conn
	tools  map[string][]*remoteTool // by server, sorted by name
	closed bool
}

var _ ports.ToolSource = (*Source)(nil)

// NewSource returns a Source over cfg.Servers; nothing starts before Load.
func NewSource(cfg SourceConfig) *Source {
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = DefaultCallTimeout
	}
	if cfg.MaxOutput <= 0 {
		cfg.MaxOutput = DefaultMaxOutput
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	return &Source{cfg: cfg, conns: map[string]*conn{}, tools: map[string][]*remoteTool{}}
}

// ForWorkflow returns the Source of wf's mcp_servers that starts only the servers wf's steps
// use (Referenced). cfg.Servers and cfg.Start are set from wf.
func ForWorkflow(wf *workflow.Workflow, cfg SourceConfig) *Source {
	cfg.Servers = wf.MCPServers
	cfg.Start = Referenced(wf)
	if cfg.Start == nil {
		cfg.Start = []string{}
	}
	return NewSource(cfg)
}

// Level is tool.LevelWorkflow: the servers are declared by the workflow, and a tool of the
// workflow's tools: list with the same name is a collision the registry reports.
func (s *Source) Level() tool.Level { return tool.LevelWorkflow }

// Load starts the servers, lists their tools and returns them. A server that does not start
// or list, a bad server name, a tool whose name or schema awf cannot use, and two tools of
// one server with the same registered name are problems at the server's mcp_servers entry
// (errors: the registry then refuses the run). It runs once; later calls return the first
// result. After Close it fails.
func (s *Source) Load() (tool.Set, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return tool.Set{}, fault.New(fault.System, "MCP servers: the source is closed")
	}
	if s.loaded {
		return s.set, nil
	}
	s.loaded = true
	for _, name := range s.starting() {
		tools, probs := s.loadServer(name)
		s.set.Tools = append(s.set.Tools, tools...)
		s.set.Problems = append(s.set.Problems, probs...)
	}
	return s.set, nil
}

// starting lists the servers Load starts, sorted.
func (s *Source) starting() []string {
	names := serverNames(s.cfg.Servers)
	if s.cfg.Start == nil {
		return names
	}
	return slices.DeleteFunc(names, func(n string) bool { return !slices.Contains(s.cfg.Start, n) })
}

// loadServer starts one server and turns its tools into registry tools.
func (s *Source) loadServer(name string) ([]tool.Tool, workflow.Problems) {
	spec := s.cfg.Servers[name]
	fail := func(err error) workflow.Problems {
		return workflow.Problems{{Pos: spec.Pos, Field: "mcp_servers." + name, Msg: err.Error()}}
	}
	if err := ValidServerName(name); err != nil {
		return nil, fail(err)
	}
	if spec.Command == "" && spec.URL == "" {
		return nil, fail(fmt.Errorf("MCP server %q needs a command or a url", name))
	}
	c := newConn(name, spec, &s.cfg)
	c.onListChanged = func() { s.recheck(name) }
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.StartTimeout)
	defer cancel()
	if err := c.start(ctx); err != nil {
		return nil, fail(startError(err, s.cfg.StartTimeout))
	}
	s.conns[name] = c
	listed, err := c.list(ctx)
	if err != nil {
		return nil, fail(startError(err, s.cfg.StartTimeout))
	}
	s.cfg.Log.Info("MCP server started", "server", name, "tools", len(listed))
	var out []tool.Tool
	var probs workflow.Problems
	seen := map[string]string{}
	for _, t := range listed {
		reg, err := ToolName(name, t.Name)
		if err == nil && seen[reg] != "" {
			err = fmt.Errorf("tools %q and %q of MCP server %q both become %s", seen[reg], t.Name, name, reg)
		}
		var rt *remoteTool
		if err == nil {
			rt, err = newRemoteTool(reg, c, t)
		}
		if err != nil {
			probs = append(probs, fail(err)...)
			continue
		}
		seen[reg] = t.Name
		s.tools[name] = append(s.tools[name], rt)
		out = append(out, rt)
	}
	slices.SortFunc(s.tools[name], func(a, b *remoteTool) int { return strings.Compare(a.name, b.name) })
	return out, probs
}

// recheck lists the tools of server name again after it said they changed, and refuses from
// then on the calls of every tool whose description or schema is no longer the one loaded at
// the start of the run (which the lock file, if any, was checked against): a server cannot
// change a tool under a running workflow (a rug pull). New tools are not added.
func (s *Source) recheck(name string) {
	s.mu.Lock()
	c, tools := s.conns[name], slices.Clone(s.tools[name])
	s.mu.Unlock()
	if c == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.StartTimeout)
	defer cancel()
	listed, err := c.list(ctx)
	if err != nil {
		s.cfg.Log.Warn("MCP server changed its tools and could not list them again", "server", name, "error", err)
		return
	}
	now := make(map[string]*wire.Tool, len(listed))
	for _, t := range listed {
		now[t.Name] = t
	}
	for _, rt := range tools {
		what := rt.differs(now[rt.remote])
		if what == "" || rt.changed.Load() != nil {
			continue
		}
		why := fmt.Sprintf("MCP server %q changed tool %s during the run (%s): its calls are refused; review it, then run awf tools lock", name, rt.remote, what)
		rt.changed.Store(&why)
		s.cfg.Log.Warn("MCP server changed a tool during the run: refused", "server", name, "tool", rt.remote, "changed", what)
	}
}

func startError(err error, timeout time.Duration) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w (no answer within %s)", err, timeout)
	}
	return err
}

// Close stops every server Load started and waits for them. It is safe to call more than
// once; later calls do nothing.
func (s *Source) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	conns := make([]*conn, 0, len(s.conns))
	for _, c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(conns))
	for i, c := range conns {
		wg.Go(func() { errs[i] = c.close() })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Imported is one tool of an MCP server, for listings (`awf tools list --mcp`).
type Imported struct {
	// Name is the registered name (server__tool); Ref is the workflow spelling (server.tool).
	Name        string `json:"name"`
	Ref         string `json:"ref"`
	Server      string `json:"server"`
	Tool        string `json:"tool"`
	Description string `json:"description"`
	ReadOnly    bool   `json:"read_only"`
}

// Imported lists the tools Load found, sorted by registered name. It is empty before Load.
func (s *Source) Imported() []Imported {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Imported
	for _, server := range serverNames(s.cfg.Servers) {
		for _, t := range s.tools[server] {
			out = append(out, Imported{Name: t.name, Ref: server + "." + t.remote, Server: server, Tool: t.remote,
				Description: t.desc, ReadOnly: t.notes.ReadOnly})
		}
	}
	return out
}

// Expand turns tool references into registered names: "fs.read_text" and "fs__read_text"
// into fs__read_text, "fs.*" into every tool of fs (sorted), in place; other names stay as
// they are. It loads the servers first if needed; their problems (a server that does not
// start) come back as the error. A reference to a server that is not declared or was not
// started, or to a tool the server does not list, is a fault.Invalid error that suggests the
// nearest name.
func (s *Source) Expand(names []string) ([]string, error) {
	set, err := s.Load()
	if err != nil {
		return nil, err
	}
	if err := set.Problems.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	var errs []error
	for _, n := range names {
		got, err := s.expandLocked(n)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, g := range got {
			if !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	if len(errs) > 0 {
		return nil, fault.Wrap(fault.Invalid, errors.Join(errs...))
	}
	return out, nil
}

func (s *Source) expandLocked(name string) ([]string, error) {
	servers := serverNames(s.cfg.Servers)
	ref, ok := ParseRef(name, servers)
	if !ok {
		if server, dotted := LooksLikeRef(name); dotted {
			msg := fmt.Sprintf("tool %q: no MCP server %q is declared in mcp_servers", name, server)
			if hint := workflow.DidYouMean(server, servers); hint != "" {
				msg += " (" + hint + ")"
			}
			return nil, errors.New(msg)
		}
		return []string{name}, nil
	}
	tools, started := s.tools[ref.Server]
	if _, live := s.conns[ref.Server]; !live && !started {
		return nil, fmt.Errorf("tool %q: MCP server %q was not started", name, ref.Server)
	}
	if ref.All {
		out := make([]string, len(tools))
		for i, t := range tools {
			out[i] = t.name
		}
		return out, nil
	}
	var candidates []string
	for _, t := range tools {
		if ref.Dotted && t.remote == ref.Tool || !ref.Dotted && t.name == ref.Server+Separator+ref.Tool {
			return []string{t.name}, nil
		}
		candidates = append(candidates, t.remote)
	}
	tn := strings.TrimPrefix(ref.Tool, ref.Server+Separator)
	msg := fmt.Sprintf("tool %q: MCP server %q has no tool %q", name, ref.Server, tn)
	if hint := workflow.DidYouMean(tn, candidates); hint != "" {
		msg += " (" + hint + ")"
	}
	return nil, errors.New(msg)
}

// Resolve rewrites wf's references to imported tools into registered names (see Expand): the
// tools of agent steps, the tool of tool steps (one tool: "fs.*" is refused there) and the
// tool patterns of approval rules ("fs.*" becomes "fs__*", "fs.write" becomes "fs__write"), at
// every depth of parallel steps. Problems point at the step; a server that does not start is
// reported instead, at its mcp_servers entry. It starts the servers if needed. Call it on the
// workflow a run executes, after loading it.
func (s *Source) Resolve(wf *workflow.Workflow) workflow.Problems {
	set, err := s.Load()
	if err != nil {
		return workflow.Problems{{Pos: wf.Pos, Field: "mcp_servers", Msg: err.Error()}}
	}
	if probs := set.Problems.Errors(); len(probs) > 0 {
		return probs
	}
	var probs workflow.Problems
	resolveSteps(s, wf.Steps, "steps", &probs)
	if wf.Approval != nil {
		servers := serverNames(wf.MCPServers)
		for i := range wf.Approval.Rules {
			r := &wf.Approval.Rules[i]
			if ref, ok := ParseRef(r.Tool, servers); ok && ref.Dotted {
				r.Tool = ref.Server + Separator + ref.Tool
				if ref.All {
					r.Tool = ref.Server + Separator + "*"
				}
			}
		}
	}
	return probs
}

func resolveSteps(s *Source, steps []workflow.Step, path string, probs *workflow.Problems) {
	for i := range steps {
		st := &steps[i]
		field := fmt.Sprintf("%s[%d]", path, i)
		switch {
		case st.Agent != nil:
			got, err := s.Expand(st.Agent.Tools)
			if err != nil {
				*probs = append(*probs, workflow.Problem{Pos: st.FieldPos("tools"), Field: field + ".tools", Msg: err.Error()})
				continue
			}
			st.Agent.Tools = got
		case st.Tool != nil:
			got, err := s.Expand([]string{st.Tool.Tool})
			switch {
			case err != nil:
				*probs = append(*probs, workflow.Problem{Pos: st.FieldPos("tool"), Field: field + ".tool", Msg: err.Error()})
			case len(got) != 1:
				*probs = append(*probs, workflow.Problem{Pos: st.FieldPos("tool"), Field: field + ".tool",
					Msg: fmt.Sprintf("tool %q names %d tools; a tool step calls one", st.Tool.Tool, len(got))})
			default:
				st.Tool.Tool = got[0]
			}
		case st.Parallel != nil:
			resolveSteps(s, st.Parallel.Steps, field+".steps", probs)
		}
	}
}

// ListTools starts every server of servers, lists their tools and stops them: what `awf tools
// list --mcp` shows. Servers that fail are reported in the error, the others still listed.
func ListTools(servers map[string]workflow.MCPServer, cfg SourceConfig) ([]Imported, error) {
	cfg.Servers, cfg.Start = servers, nil
	src := NewSource(cfg)
	set, err := src.Load()
	list := src.Imported()
	if cerr := src.Close(); cerr != nil {
		src.cfg.Log.Warn("stop MCP servers", "error", cerr)
	}
	if err != nil {
		return list, err
	}
	return list, set.Problems.Err()
}
