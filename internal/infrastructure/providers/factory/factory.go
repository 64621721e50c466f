// Package factory builds the model provider of each agent step from configuration: the
// workflow's providers:, the providers: of the config files, and the built-in defaults
// (openai, anthropic and its alias claude, ollama, cli). It applies the command line's
// --provider and --model, substitutes the replay provider for every step under --replay, and
// wraps providers in a recorder under --record. A cli provider that runs an agent CLI
// (claude, codex, gemini) for a step with tools hands it the tools through `awf mcp serve`
// (Options.AgentMCP). API keys are read from the environment variables the configuration
// names, never from workflow files. It implements ports.ProviderSource.
package factory

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/config"
	awfmcp "github.com/awf-dev/awf/internal/infrastructure/mcp"
	"github.com/awf-dev/awf/internal/infrastructure/providers/anthropic"
	"github.com/awf-dev/awf/internal/infrastructure/providers/cliagent"
	"github.com/awf-dev/awf/internal/infrastructure/providers/ollama"
	"github.com/awf-dev/awf/internal/infrastructure/providers/openai"
	"github.com/awf-dev/awf/internal/infrastructure/providers/replay"
)

// Provider types.
const (
	TypeOpenAI    = "openai"
	TypeAnthropic = "anthropic"
	TypeClaude    = "claude" // alias of anthropic
	TypeOllama    = "ollama"
	TypeCLI       = "cli"
	TypeReplay    = "replay"
)

// DefaultCLICommand is the command of the built-in cli provider: Claude Code in print mode,
// reading the prompt on standard input.
const DefaultCLICommand = "claude -p"

// Options are the settings from outside the workflow.
type Options struct {
	// Getenv reads API keys from the variables the configuration names. Required.
	Getenv func(string) string
	// Environ is the environment of cli provider commands; nil means awf's own.
	Environ []string
	// WorkDir is where cli provider commands run; empty means the current directory.
	WorkDir string
	// Providers are the providers: of the config files, already merged by precedence.
	Providers map[string]config.ProviderConfig
	// DefaultProvider and DefaultModel (config provider and model: AWF_PROVIDER, AWF_MODEL,
	// config files) serve steps that name none.
	DefaultProvider string
	DefaultModel    string
	// Provider and Model (--provider, --model) replace every agent step's own.
	Provider string
	Model    string
	// Replay (--replay FILE) plays that cassette instead of any model; Record (--record
	// FILE) records every model turn into that cassette. At most one of them.
	Replay string
	Record string
	// HTTPClient sends the requests of HTTP providers; nil means theirs.
	HTTPClient *http.Client
	// AgentMCP is how agent CLIs start `awf mcp serve`: the awf executable and the global
	// flags to pass on (the audit log, the state directory, --non-interactive, --approve,
	// --yes). The factory adds the step's workflow, tools, inputs, run id and step name. A
	// cli provider whose program is claude, codex or gemini (or says so in options.agent)
	// then gives a step with tools to the agent through MCP instead of describing the tools
	// in the prompt, unless its options.mcp is false. Nil: every cli provider describes the
	// tools in the prompt and reads the calls out of the reply.
	AgentMCP *awfmcp.ServeCommand
}

// Factory resolves providers and keeps one client per distinct configuration. Safe for
// concurrent use. Call Close at the end of the run to write the recording.
type Factory struct {
	o        Options
	player   *replay.Player
	recorder *replay.Recorder

	mu      sync.Mutex
	clients map[string]ports.Provider
	players map[string]*replay.Player
}

var _ ports.ProviderSource = (*Factory)(nil)

// New checks o and opens the replay cassette. Asking for both --replay and --record, or a
// cassette that does not load, is a fault.Usage error.
func New(o Options) (*Factory, error) {
	if o.Getenv == nil {
		return nil, fault.New(fault.System, "provider factory: no Getenv")
	}
	if o.Replay != "" && o.Record != "" {
		return nil, fault.New(fault.Usage, "--replay and --record cannot be used together: a replayed run has no model to record")
	}
	f := &Factory{o: o, clients: map[string]ports.Provider{}, players: map[string]*replay.Player{}}
	if o.Replay != "" {
		p, err := replay.Open(o.Replay)
		if err != nil {
			return nil, err
		}
		f.player = p
	}
	if o.Record != "" {
		f.recorder = replay.NewRecorder(o.Record)
	}
	return f, nil
}

// Provider resolves an agent step's provider: --provider, else the step's provider:, else the
// configured default; its definition from the workflow's providers:, else the config files',
// else the built-in one of that name. The model is --model, else the step's options.model,
// else the provider's model, else the configured default.
func (f *Factory) Provider(_ context.Context, ref ports.ProviderRef) (ports.ResolvedProvider, error) {
	name := cmp.Or(f.o.Provider, ref.Name, f.o.DefaultProvider)
	wfName, wfDir := "", ""
	if ref.Workflow != nil {
		wfName, wfDir = ref.Workflow.Name, ref.Workflow.Dir
	}
	if name == "" && f.player != nil {
		return f.replayed(ref, wfName, "", f.o.Model, nil), nil
	}
	if name == "" {
		return ports.ResolvedProvider{}, fault.New(fault.Usage,
			"step %q names no provider and no default is configured: set provider: in the step, "+
				"or use --provider, AWF_PROVIDER or provider: in the config file", ref.Step)
	}
	s, err := f.lookup(name, ref.Workflow)
	if err != nil {
		return ports.ResolvedProvider{}, err
	}
	model, dropped := f.model(name, ref, s)
	tr, reqOpts, err := transportOf(s)
	if err != nil {
		return ports.ResolvedProvider{}, err
	}
	if f.player != nil {
		return f.replayed(ref, wfName, name, model, reqOpts), nil
	}
	if model == "" && dropped != "" && s.Type != TypeCLI && s.Type != TypeReplay {
		return ports.ResolvedProvider{}, fault.New(fault.Usage,
			"step %q: --provider %s replaces the step's provider %q, and its model %q is not carried over to another provider: set --model, or a model for %s under providers: in the workflow or the config file",
			ref.Step, name, ref.Name, dropped, name)
	}
	var p ports.Provider
	if s.Type == TypeReplay {
		player, err := f.cassette(tr.cassette, wfDir)
		if err != nil {
			return ports.ResolvedProvider{}, fmt.Errorf("provider %q (%s): %w", s.Name, s.from, err)
		}
		p = player.Step(wfName, ref.Step)
	} else if p, err = f.client(s, tr, cmp.Or(ref.ToolFormat, tr.toolFormat), wfDir); err != nil {
		return ports.ResolvedProvider{}, err
	}
	handoff := ""
	if c, ok := p.(*cliagent.Client); ok {
		if p, handoff, err = f.handoff(s, tr, c, ref); err != nil {
			return ports.ResolvedProvider{}, err
		}
	}
	if f.recorder != nil {
		p = f.recorder.Wrap(wfName, ref.Step, p)
	}
	return ports.ResolvedProvider{Provider: p, Name: name, Model: model, Options: reqOpts, Handoff: handoff,
		Endpoint: endpointHost(s.BaseURL), Cassette: cmp.Or(f.o.Record, tr.cassette)}, nil
}

// model picks the step's model: --model, else the step's options.model, else the provider's
// model, else the configured default. A model is never carried to a provider it was not
// written for: the step's own is dropped when --provider replaces the step's provider (it is
// returned as dropped, for the message when no other model is left), and the configured
// default serves only the configured default provider, when one is set.
func (f *Factory) model(name string, ref ports.ProviderRef, s spec) (model, dropped string) {
	stepModel := ref.Model
	if f.o.Provider != "" && ref.Name != "" && ref.Name != f.o.Provider {
		stepModel, dropped = "", ref.Model
	}
	def := f.o.DefaultModel
	if f.o.DefaultProvider != "" && f.o.DefaultProvider != name {
		def = ""
	}
	return cmp.Or(f.o.Model, stepModel, s.Model, def), dropped
}

// replayed is a step's provider under --replay: the cassette, whatever the step names.
func (f *Factory) replayed(ref ports.ProviderRef, wfName, name, model string, opts map[string]any) ports.ResolvedProvider {
	label := "replay"
	if name != "" {
		label = name + " (replayed)"
	}
	return ports.ResolvedProvider{Provider: f.player.Step(wfName, ref.Step), Name: label, Model: model, Options: opts,
		Cassette: f.o.Replay}
}

// endpointHost is the host (and port) of a base URL, for the record; "" when there is none.
func endpointHost(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	return u.Host
}

// Close writes the recording, if any.
func (f *Factory) Close() error {
	if f.recorder == nil {
		return nil
	}
	return f.recorder.Save()
}

// Unplayed lists, under --replay, the steps whose recorded turns were not all played.
func (f *Factory) Unplayed() []string {
	if f.player == nil {
		return nil
	}
	return f.player.Unused()
}

// spec is a provider definition, wherever it came from.
type spec struct {
	Name, Type, BaseURL, Model, APIKeyEnv, Command string
	Args                                           []string
	Options                                        map[string]any
	// from says where the definition is, for messages.
	from string
}

// builtins are the providers every workflow can name without defining them.
var builtins = map[string]spec{
	TypeOpenAI:    {Type: TypeOpenAI},
	TypeAnthropic: {Type: TypeAnthropic},
	TypeClaude:    {Type: TypeAnthropic},
	TypeOllama:    {Type: TypeOllama},
	TypeCLI:       {Type: TypeCLI, Command: DefaultCLICommand},
}

// lookup finds a provider's definition.
func (f *Factory) lookup(name string, wf *workflow.Workflow) (spec, error) {
	if wf != nil {
		if p, ok := wf.Providers[name]; ok {
			return withType(spec{Name: name, Type: p.Type, BaseURL: p.BaseURL, Model: p.Model, APIKeyEnv: p.APIKeyEnv,
				Command: p.Command, Args: p.Args, Options: p.Options, from: "the workflow's providers"})
		}
	}
	if p, ok := f.o.Providers[name]; ok {
		return withType(spec{Name: name, Type: p.Type, BaseURL: p.BaseURL, Model: p.Model, APIKeyEnv: p.APIKeyEnv,
			Command: p.Command, Args: p.Args, Options: p.Options, from: "the config file's providers"})
	}
	if b, ok := builtins[name]; ok {
		b.Name, b.from = name, "the built-in providers"
		return b, nil
	}
	var known []string
	if wf != nil {
		known = slices.Collect(maps.Keys(wf.Providers))
	}
	known = append(known, slices.Collect(maps.Keys(f.o.Providers))...)
	known = append(known, slices.Sorted(maps.Keys(builtins))...)
	msg := fmt.Sprintf("unknown provider %q: define it under providers: in the workflow or the config file, or use a built-in one (anthropic, claude, cli, ollama, openai)", name)
	if hint := workflow.DidYouMean(name, known); hint != "" {
		msg += " (" + hint + ")"
	}
	return spec{}, fault.New(fault.Usage, "%s", msg)
}

// withType fills in a definition's type: a definition named after a built-in may leave it out.
func withType(s spec) (spec, error) {
	if s.Type == "" {
		if b, ok := builtins[s.Name]; ok {
			s.Type = b.Type
			if s.Type == TypeCLI && s.Command == "" {
				s.Command = DefaultCLICommand
			}
			return s, nil
		}
		return s, fault.New(fault.Usage, "provider %q in %s has no type: set type: to openai, anthropic, ollama, cli or replay", s.Name, s.from)
	}
	if s.Type == TypeClaude {
		s.Type = TypeAnthropic
	}
	return s, nil
}

// client returns the provider for a definition, built once per distinct definition.
func (f *Factory) client(s spec, tr transport, toolFormat, wfDir string) (ports.Provider, error) {
	key := fmt.Sprintf("%s\x00%s\x00%s\x00%s\x00%s\x00%q\x00%s\x00%+v\x00%s", s.Type, s.BaseURL, s.Model, s.APIKeyEnv,
		s.Command, s.Args, toolFormat, tr, wfDir)
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok := f.clients[key]; ok {
		return p, nil
	}
	p, err := f.build(s, tr, toolFormat, wfDir)
	if err != nil {
		return nil, fmt.Errorf("provider %q (%s): %w", s.Name, s.from, err)
	}
	f.clients[key] = p
	return p, nil
}

func (f *Factory) build(s spec, tr transport, toolFormat, wfDir string) (ports.Provider, error) {
	switch s.Type {
	case TypeOpenAI:
		env := s.APIKeyEnv
		if env == "" && (s.BaseURL == "" || s.BaseURL == openai.DefaultBaseURL) {
			// Only OpenAI itself, or the server the user named in OPENAI_BASE_URL as the
			// official clients read it, gets OPENAI_API_KEY: a compatible server named in a
			// provider definition must be given a variable of its own, so the key never
			// reaches a third party by accident.
			env = openai.DefaultKeyEnv
		}
		return openai.New(openai.Config{BaseURL: f.baseURL(s), Model: s.Model, APIKey: f.key(env), APIKeyEnv: env,
			HTTPClient: f.o.HTTPClient, Stream: tr.stream, MaxRetries: tr.maxRetries, Headers: tr.headers, Timeout: tr.timeout})
	case TypeAnthropic:
		env := cmp.Or(s.APIKeyEnv, anthropic.DefaultKeyEnv)
		return anthropic.New(anthropic.Config{BaseURL: f.baseURL(s), Model: s.Model, APIKey: f.key(env), APIKeyEnv: env,
			HTTPClient: f.o.HTTPClient, Stream: tr.stream, MaxRetries: tr.maxRetries, Headers: tr.headers, Timeout: tr.timeout})
	case TypeOllama:
		return ollama.New(ollama.Config{BaseURL: f.baseURL(s), Model: s.Model, APIKey: f.key(s.APIKeyEnv), APIKeyEnv: s.APIKeyEnv,
			HTTPClient: f.o.HTTPClient, Stream: tr.stream, MaxRetries: tr.maxRetries, Headers: tr.headers, Timeout: tr.timeout})
	case TypeCLI:
		return cliagent.New(cliagent.Config{Name: s.Name, Command: s.Command, Args: s.Args, ToolFormat: toolFormat,
			Dir: f.o.WorkDir, Env: f.o.Environ, Timeout: tr.timeout, MaxRepairs: tr.maxRepairs})
	}
	return nil, fault.New(fault.Usage, "unknown type %q: want openai, anthropic, ollama, cli or replay", s.Type)
}

// baseURL is the definition's base_url, else the variable the provider's official client
// reads (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, OLLAMA_HOST), else "" for the adapter's default.
func (f *Factory) baseURL(s spec) string {
	if s.BaseURL != "" {
		return s.BaseURL
	}
	switch s.Type {
	case TypeOpenAI:
		return f.o.Getenv("OPENAI_BASE_URL")
	case TypeAnthropic:
		return f.o.Getenv("ANTHROPIC_BASE_URL")
	case TypeOllama:
		return ollamaHost(f.o.Getenv("OLLAMA_HOST"))
	}
	return ""
}

// ollamaHost turns OLLAMA_HOST as the ollama CLI reads it ("host", "host:port",
// "http://host:port", "https://host") into a base URL: http unless a scheme is given, port
// 11434 unless one is given (80 or 443 where a scheme without a port is).
func ollamaHost(v string) string {
	v = strings.TrimSpace(v)
	if v == "" {
		return ""
	}
	scheme, hostport, ok := strings.Cut(v, "://")
	if !ok {
		scheme, hostport = "http", v
	}
	hostport, path, _ := strings.Cut(hostport, "/")
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = strings.Trim(hostport, "[]"), "11434"
		if ok {
			port = cmp.Or(map[string]string{"http": "80", "https": "443"}[scheme], port)
		}
	}
	u := scheme + "://" + net.JoinHostPort(cmp.Or(host, "127.0.0.1"), port)
	if path != "" {
		u += "/" + strings.TrimSuffix(path, "/")
	}
	return u
}

// handoff gives a cli provider's agent CLI the step's tools through `awf mcp serve`, when the
// step has tools and either options.mcp is true or it is unset and the agent is known (from
// options.agent or the program's name). Otherwise c reads calls out of the text as before.
// options.mcp: true for a program awf does not know, or where no awf executable is known, is
// a fault.Usage error. It returns the agent the tools are handed to, "" when they are not.
func (f *Factory) handoff(s spec, tr transport, c *cliagent.Client, ref ports.ProviderRef) (ports.Provider, string, error) {
	agent := cmp.Or(tr.agent, awfmcp.AgentKind(c.Program()))
	switch {
	case len(ref.Tools) == 0, tr.mcpSet && !tr.mcp:
		return c, "", nil // nothing to hand over, or the text protocol asked for
	case !tr.mcpSet && (agent == "" || f.o.AgentMCP == nil):
		return c, "", nil // not an agent CLI awf knows, or no awf to serve the tools
	case agent == "":
		return nil, "", fault.New(fault.Usage, "provider %q (%s): options.mcp is true, but %q is not an agent CLI awf knows: "+
			"set options.agent to %s, %s or %s", s.Name, s.from, c.Program(), awfmcp.AgentClaude, awfmcp.AgentCodex, awfmcp.AgentGemini)
	case f.o.AgentMCP == nil:
		return nil, "", fault.New(fault.Usage, "provider %q (%s): options.mcp is true, but this command cannot start awf mcp serve", s.Name, s.from)
	}
	serve := *f.o.AgentMCP
	serve.Tools = slices.Clone(ref.Tools)
	serve.RunID, serve.Step = ref.RunID, ref.Step
	if ref.Workflow != nil && ref.Workflow.Path != "" {
		serve.Workflow, serve.Inputs = ref.Workflow.Path, ref.Inputs
	}
	return c.WithHandoff(cliagent.Handoff{Server: serve.ServerName(), Setup: func(turn cliagent.HandoffTurn) ([]string, []string, error) {
		serve := serve
		serve.CallsFile = turn.CallsFile
		setup, err := awfmcp.SetupAgent(agent, turn.Dir, serve)
		return setup.Args, setup.Env, err
	}}), agent, nil
}

// cassette is the player of a provider of type replay: a cassette named in the
// configuration (relative to the workflow's directory), opened once per run.
func (f *Factory) cassette(path, wfDir string) (*replay.Player, error) {
	if path == "" {
		return nil, fault.New(fault.Usage, "a replay provider needs options.cassette: the cassette file to play")
	}
	if !filepath.IsAbs(path) && wfDir != "" {
		path = filepath.Join(wfDir, path)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if p, ok := f.players[path]; ok {
		return p, nil
	}
	p, err := replay.Open(path)
	if err != nil {
		return nil, err
	}
	f.players[path] = p
	return p, nil
}

func (f *Factory) key(env string) string {
	if env == "" {
		return ""
	}
	return f.o.Getenv(env)
}
