// Package config resolves awf's settings from their layers: flags, then AWF_* environment
// variables, then the project file (.awf/config.yaml), then the user file
// ($XDG_CONFIG_HOME/awf/config.yaml), then defaults. Each layer is read into a Layer of
// pointers (nil = not set there); Resolve takes the first value set and remembers its source.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/goccy/go-yaml"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/infrastructure/yamlnode"
)

// Layer is what one source says. Nil fields are not set by that source.
type Layer struct {
	Source    string  `yaml:"-"`
	StateDir  *string `yaml:"state_dir"`
	AuditLog  *string `yaml:"audit_log"`
	LogLevel  *string `yaml:"log_level"`
	LogFormat *string `yaml:"log_format"`
	Provider  *string `yaml:"provider"`
	Model     *string `yaml:"model"`
	// Engine runs `awf run`: local (this process) or temporal (a Temporal server's workers).
	Engine *string `yaml:"engine"`
	// Temporal is where the temporal engine's server is (HOST:PORT), Namespace and
	// TaskQueue which of its namespaces and task queues runs awf's workflows.
	Temporal  *string `yaml:"temporal"`
	Namespace *string `yaml:"temporal_namespace"`
	TaskQueue *string `yaml:"temporal_task_queue"`
	// The temporal engine's timing and size settings (docs/distributed.md), kept as written
	// and parsed by the engine, which names the setting and its source when one is wrong.
	HeartbeatTimeout *string                   `yaml:"temporal_heartbeat_timeout"`
	PinnedWait       *string                   `yaml:"temporal_pinned_wait"`
	ContinueAfter    *string                   `yaml:"temporal_continue_after"`
	PayloadRetention *string                   `yaml:"temporal_payload_retention"`
	Providers        map[string]ProviderConfig `yaml:"providers"`
}

// ProviderConfig is a named provider as config files declare it. API keys are never stored
// here: APIKeyEnv names the environment variable that holds the key.
type ProviderConfig struct {
	Type      string         `yaml:"type"`
	BaseURL   string         `yaml:"base_url"`
	Model     string         `yaml:"model"`
	APIKeyEnv string         `yaml:"api_key_env"`
	Command   string         `yaml:"command"`
	Args      []string       `yaml:"args"`
	Options   map[string]any `yaml:"options"`
}

// Config is the resolved configuration.
type Config struct {
	StateDir  string
	AuditLog  string
	LogLevel  string
	LogFormat string
	Provider  string
	Model     string
	Engine    string
	Temporal  string
	Namespace string
	TaskQueue string
	// HeartbeatTimeout, PinnedWait, ContinueAfter and PayloadRetention are the temporal
	// engine's settings as written ("" when unset: the engine's defaults).
	HeartbeatTimeout, PinnedWait, ContinueAfter, PayloadRetention string
	// Providers merges every layer's providers; a name defined in a higher layer wins whole.
	Providers map[string]ProviderConfig
	// Sources maps each setting to the layer it came from ("state_dir" -> "env AWF_STATE_DIR").
	Sources map[string]string
	// Project is the project's awf directory, as FindProject found it (zero when the caller
	// resolved without one).
	Project Project
}

// Defaults is the lowest layer, for a project in the working directory.
func Defaults() Layer {
	return Layer{
		Source:    "default",
		StateDir:  ptr(filepath.Join(DirName, "runs")),
		AuditLog:  ptr(filepath.Join(DirName, "audit.jsonl")),
		LogLevel:  ptr("warn"),
		LogFormat: ptr("text"),
		Engine:    ptr("local"),
		Temporal:  ptr("localhost:7233"),
		Namespace: ptr("default"),
		TaskQueue: ptr("awf"),
	}
}

// ProjectDefaults is the lowest layer for project p of a command run in cwd: its state and
// audit log live in p's awf directory (Project.Path).
func ProjectDefaults(p Project, cwd string) Layer {
	l := Defaults()
	l.StateDir = ptr(p.Path(cwd, "runs"))
	l.AuditLog = ptr(p.Path(cwd, "audit.jsonl"))
	return l
}

// Rooted returns l with its relative paths (state_dir, audit_log) resolved against root, for
// a command run in cwd: a project config file means the paths it names from the project root,
// wherever in the project awf runs. In the root itself they stay as written.
func (l Layer) Rooted(root, cwd string) Layer {
	if root == cwd {
		return l
	}
	for _, p := range []**string{&l.StateDir, &l.AuditLog} {
		if *p != nil && !filepath.IsAbs(**p) {
			*p = ptr(filepath.Join(root, **p))
		}
	}
	return l
}

// FromEnv reads AWF_STATE_DIR, AWF_AUDIT_LOG, AWF_LOG_LEVEL, AWF_LOG_FORMAT, AWF_PROVIDER,
// AWF_MODEL, AWF_ENGINE, AWF_TEMPORAL, AWF_TEMPORAL_NAMESPACE, AWF_TEMPORAL_TASK_QUEUE,
// AWF_TEMPORAL_HEARTBEAT_TIMEOUT, AWF_TEMPORAL_PINNED_WAIT, AWF_TEMPORAL_CONTINUE_AFTER and
// AWF_TEMPORAL_PAYLOAD_RETENTION.
func FromEnv(getenv func(string) string) Layer {
	l := Layer{Source: "env"}
	set := func(dst **string, key string) {
		if v := getenv(key); v != "" {
			*dst = ptr(v)
		}
	}
	set(&l.StateDir, "AWF_STATE_DIR")
	set(&l.AuditLog, "AWF_AUDIT_LOG")
	set(&l.LogLevel, "AWF_LOG_LEVEL")
	set(&l.LogFormat, "AWF_LOG_FORMAT")
	set(&l.Provider, "AWF_PROVIDER")
	set(&l.Model, "AWF_MODEL")
	set(&l.Engine, "AWF_ENGINE")
	set(&l.Temporal, "AWF_TEMPORAL")
	set(&l.Namespace, "AWF_TEMPORAL_NAMESPACE")
	set(&l.TaskQueue, "AWF_TEMPORAL_TASK_QUEUE")
	set(&l.HeartbeatTimeout, "AWF_TEMPORAL_HEARTBEAT_TIMEOUT")
	set(&l.PinnedWait, "AWF_TEMPORAL_PINNED_WAIT")
	set(&l.ContinueAfter, "AWF_TEMPORAL_CONTINUE_AFTER")
	set(&l.PayloadRetention, "AWF_TEMPORAL_PAYLOAD_RETENTION")
	return l
}

// FromFile reads a config file. A missing file is an empty layer; unknown keys are errors.
func FromFile(path string) (Layer, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Layer{Source: path}, nil
	}
	if err != nil {
		return Layer{}, fault.Wrap(fault.Usage, &UnreadableError{Path: path, Err: err})
	}
	var l Layer
	if data, err = yamlnode.CheckFile(path, data); err != nil {
		return Layer{}, fault.New(fault.Usage, "config %w", err)
	}
	if len(bytes.TrimSpace(data)) > 0 {
		dec := yaml.NewDecoder(bytes.NewReader(data), yaml.DisallowUnknownField())
		if err := dec.Decode(&l); err != nil {
			return Layer{}, fault.New(fault.Usage, "config %s: %s", path, yaml.FormatError(err, false, false))
		}
	}
	l.Source = path
	return l, nil
}

// UnreadableError is a config file that exists but cannot be read (no permission, a
// directory): FromFile's error for it, apart from one that does not parse, because the user
// file's is only a warning (docs/cli.md, Configuration).
type UnreadableError struct {
	Path string
	Err  error
}

func (e *UnreadableError) Error() string {
	err := e.Err
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		err = pe.Err // the path is said once
	}
	return fmt.Sprintf("read config %s: %v", e.Path, err)
}

func (e *UnreadableError) Unwrap() error { return e.Err }

// UserFile returns the user config path: $XDG_CONFIG_HOME/awf/config.yaml, else
// $HOME/.config/awf/config.yaml.
func UserFile(getenv func(string) string) string {
	if d := getenv("XDG_CONFIG_HOME"); d != "" {
		return filepath.Join(d, "awf", "config.yaml")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "awf", "config.yaml")
	}
	return ""
}

// Resolve merges layers, highest precedence first.
func Resolve(layers ...Layer) Config {
	c := Config{Sources: map[string]string{}, Providers: map[string]ProviderConfig{}}
	pick := func(dst *string, key string, get func(Layer) *string) {
		for _, l := range layers {
			if v := get(l); v != nil {
				*dst = *v
				c.Sources[key] = l.Source
				return
			}
		}
	}
	pick(&c.StateDir, "state_dir", func(l Layer) *string { return l.StateDir })
	pick(&c.AuditLog, "audit_log", func(l Layer) *string { return l.AuditLog })
	pick(&c.LogLevel, "log_level", func(l Layer) *string { return l.LogLevel })
	pick(&c.LogFormat, "log_format", func(l Layer) *string { return l.LogFormat })
	pick(&c.Provider, "provider", func(l Layer) *string { return l.Provider })
	pick(&c.Model, "model", func(l Layer) *string { return l.Model })
	pick(&c.Engine, "engine", func(l Layer) *string { return l.Engine })
	pick(&c.Temporal, "temporal", func(l Layer) *string { return l.Temporal })
	pick(&c.Namespace, "temporal_namespace", func(l Layer) *string { return l.Namespace })
	pick(&c.TaskQueue, "temporal_task_queue", func(l Layer) *string { return l.TaskQueue })
	pick(&c.HeartbeatTimeout, "temporal_heartbeat_timeout", func(l Layer) *string { return l.HeartbeatTimeout })
	pick(&c.PinnedWait, "temporal_pinned_wait", func(l Layer) *string { return l.PinnedWait })
	pick(&c.ContinueAfter, "temporal_continue_after", func(l Layer) *string { return l.ContinueAfter })
	pick(&c.PayloadRetention, "temporal_payload_retention", func(l Layer) *string { return l.PayloadRetention })
	for i := len(layers) - 1; i >= 0; i-- {
		for name, p := range layers[i].Providers {
			c.Providers[name] = p
			c.Sources["providers."+name] = layers[i].Source
		}
	}
	return c
}

// Describe lists each setting with its source, for --debug.
func (c Config) Describe() []string {
	var out []string
	for k, src := range c.Sources {
		out = append(out, fmt.Sprintf("%s from %s", k, src))
	}
	sort.Strings(out)
	return out
}

func ptr[T any](v T) *T { return &v }
