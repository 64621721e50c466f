package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/application/agent"
	"github.com/awf-dev/awf/internal/application/runner"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/infrastructure/config"
	"github.com/awf-dev/awf/internal/infrastructure/loader"
	"github.com/awf-dev/awf/internal/infrastructure/process"
	"github.com/awf-dev/awf/internal/infrastructure/statestore"
	"github.com/awf-dev/awf/internal/infrastructure/templater"
)

// newFactory wires the real adapters. Every constructor is lazy and built at most once.
func newFactory(ios *iostreams.IOStreams, getenv func(string) string, environ []string) *cmdutil.Factory {
	f := &cmdutil.Factory{IO: ios, Version: Version, Getenv: getenv, Environ: environ, Flags: &cmdutil.GlobalFlags{}}
	f.Config = sync.OnceValues(func() (config.Config, error) { return loadConfig(f) })
	f.Log = sync.OnceValue(func() *slog.Logger { return newLogger(f) })
	f.Loader = sync.OnceValue(func() ports.WorkflowLoader { return loader.New() })
	f.Templater = sync.OnceValue(func() ports.Templater { return templater.New() })
	f.Store = sync.OnceValues(func() (ports.StateStore, error) {
		cfg, err := f.Config()
		if err != nil {
			return nil, err
		}
		return statestore.New(cfg.StateDir)
	})
	tw := newToolWiring(f)
	f.Tools = tw.build
	f.Describe = tw.describe
	f.Catalog = tw.catalog
	f.ToolRegistry = tw.toolRegistry
	f.Pins = tw.pins
	f.Runner = func(events ports.Events, opts cmdutil.RunnerOptions) (*runner.Runner, func() error, error) {
		return newRunner(f, environ, events, opts)
	}
	f.Agents = func(t *cmdutil.Tools, opts cmdutil.RunnerOptions) (runner.AgentExecutor, func() error, error) {
		return agentsOnly(f, environ, t, opts)
	}
	f.Providers = func(opts cmdutil.RunnerOptions) (ports.ProviderSource, func() error, error) {
		p, err := providerSource(f, environ, opts)
		if err != nil {
			return nil, nil, err
		}
		return p, p.Close, nil
	}
	return f
}

// newRunner wires a runner: the state store, the in-process shell for steps, the governed
// tools, and the agent loop with the run's model providers.
func newRunner(f *cmdutil.Factory, environ []string, events ports.Events, opts cmdutil.RunnerOptions) (*runner.Runner, func() error, error) {
	store, err := f.Store()
	if err != nil {
		return nil, nil, err
	}
	providers, err := providerSource(f, environ, opts)
	if err != nil {
		return nil, nil, err
	}
	done := func() error {
		for _, turn := range providers.Unplayed() {
			fmt.Fprintf(f.IO.ErrOut, "warning: cassette turn not played: %s\n", turn)
		}
		return providers.Close()
	}
	deps := runner.Deps{
		Store:     store,
		Templater: f.Templater(),
		Process:   process.NewLocal(process.Config{}), // steps: the author's own commands; tools use the sandboxed helper
		Loader:    f.Loader(),
		Events:    events,
		Clock:     ports.ClockFunc(nowFunc),
		NewID:     func() string { return uuid.NewString() },
		Environ:   environ,
		Stat:      os.Stat,
		Log:       f.Log(),
		// A quick step is recorded once, at its end; see runner.Deps.
		StartSaveDelay: 200 * time.Millisecond,
	}
	if t := opts.Tools; t != nil {
		deps.Tools, deps.Catalog = t.Invoker, t.Registry
		if deps.Agents, err = newAgents(f, providers, t); err != nil {
			return nil, nil, err
		}
	}
	r, err := runner.New(deps)
	if err != nil {
		return nil, nil, err
	}
	return r, done, nil
}

// newAgents wires the agent loop of a run: its model providers and its governed tools.
func newAgents(f *cmdutil.Factory, providers ports.ProviderSource, t *cmdutil.Tools) (runner.AgentExecutor, error) {
	return agent.New(agent.Deps{
		Providers: providers, Tools: t.Invoker, Refusals: t.Refuser, Catalog: t.Registry, Templater: f.Templater(),
		Schemas: t.Validator, Clock: ports.ClockFunc(nowFunc), Audit: t.Audit, Settler: t.Settler,
	})
}

// agentsOnly is Factory.Agents: the agent loop alone, for an engine that runs the steps
// around it itself.
func agentsOnly(f *cmdutil.Factory, environ []string, t *cmdutil.Tools, opts cmdutil.RunnerOptions) (runner.AgentExecutor, func() error, error) {
	providers, err := providerSource(f, environ, opts)
	if err != nil {
		return nil, nil, err
	}
	agents, err := newAgents(f, providers, t)
	if err != nil {
		return nil, nil, err
	}
	return agents, providers.Close, nil
}

// loadConfig resolves flags > environment > project file > user file > defaults.
func loadConfig(f *cmdutil.Factory) (config.Config, error) {
	flags := config.Layer{Source: "flag"}
	changed := f.Flags.Changed
	if changed == nil {
		changed = func(string) bool { return false }
	}
	set := func(dst **string, name, v string) {
		if changed(name) {
			*dst = &v
		}
	}
	set(&flags.StateDir, "state-dir", f.Flags.StateDir)
	set(&flags.LogLevel, "log-level", f.Flags.LogLevel)
	set(&flags.LogFormat, "log-format", f.Flags.LogFormat)
	set(&flags.AuditLog, "audit-log", f.Flags.AuditLog)
	cwd, err := os.Getwd()
	if err != nil {
		return config.Config{}, fault.Wrap(fault.System, fmt.Errorf("working directory: %w", err))
	}
	proj := config.FindProject(cwd, f.Getenv("HOME"), f.Flags.AwfDir, f.Getenv(config.DirEnv))
	if proj.Refused != "" {
		return config.Config{}, fault.New(fault.Usage, "%s: awf will not use it, for its config.yaml can name commands awf runs "+
			"(remove it, or name the project's awf directory with --awf-dir or AWF_DIR)", proj.Refused)
	}
	project, err := config.FromFile(filepath.Join(proj.Dir, "config.yaml"))
	if err != nil {
		return config.Config{}, err
	}
	layers := []config.Layer{flags, config.FromEnv(f.Getenv), project.Rooted(proj.Root, cwd)}
	if path := config.UserFile(f.Getenv); path != "" {
		user, err := config.FromFile(path)
		switch _, unreadable := errors.AsType[*config.UnreadableError](err); {
		case unreadable:
			// The user's own defaults, which awf cannot see: every command would fail until
			// the file is fixed, for settings flags and the project file can still give.
			fmt.Fprintf(f.IO.ErrOut, "warning: %v; its settings are ignored (fix its permissions, or remove it)\n", err)
		case err != nil:
			return config.Config{}, err
		default:
			layers = append(layers, user)
		}
	}
	cfg := config.Resolve(append(layers, config.ProjectDefaults(proj, cwd))...)
	cfg.Project = proj
	return cfg, nil
}

// newLogger builds the diagnostics logger: stderr or --log-file, text or json, warn by
// default. A bad level or format falls back to the defaults with a warning on stderr.
func newLogger(f *cmdutil.Factory) *slog.Logger {
	cfg, err := f.Config()
	if err != nil {
		cfg = config.Resolve(config.Defaults())
	}
	var w io.Writer = f.IO.ErrOut
	if f.Flags.LogFile != "" {
		file, err := os.OpenFile(f.Flags.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintf(f.IO.ErrOut, "warning: log file: %v\n", err)
		} else {
			w = file // closed by process exit
		}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.LogLevel)); err != nil {
		fmt.Fprintf(f.IO.ErrOut, "warning: log level %q: want debug, info, warn or error\n", cfg.LogLevel)
		level = slog.LevelWarn
	}
	opts := &slog.HandlerOptions{Level: level}
	if strings.EqualFold(cfg.LogFormat, "json") {
		return slog.New(newUniqueKeys(slog.NewJSONHandler(w, opts)))
	}
	return slog.New(newUniqueKeys(slog.NewTextHandler(w, opts)))
}

// nowFunc is the wall clock, the one place the CLI reads it for the runner.
var nowFunc = time.Now
