package cli

import (
	"fmt"
	"strings"
	"sync"

	"github.com/awf-dev/awf/cmd/awf/internal/approver"
	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/internal/application/approval"
	"github.com/awf-dev/awf/internal/application/govern"
	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/audit"
	"github.com/awf-dev/awf/internal/infrastructure/container"
	"github.com/awf-dev/awf/internal/infrastructure/manifest"
	"github.com/awf-dev/awf/internal/infrastructure/netproxy"
	"github.com/awf-dev/awf/internal/infrastructure/process"
	"github.com/awf-dev/awf/internal/infrastructure/schema"
	"github.com/awf-dev/awf/internal/infrastructure/tools/command"
	"github.com/awf-dev/awf/internal/infrastructure/tools/file"
	"github.com/awf-dev/awf/internal/infrastructure/tools/httptool"
	"github.com/awf-dev/awf/internal/infrastructure/tools/shell"
)

// toolWiring holds what is built once per process for tools: the audit log (one appender)
// and the terminal approver (one reader of standard input).
type toolWiring struct {
	f        *cmdutil.Factory
	auditLog func() (*audit.Log, error)
	approver func() *approver.Terminal
}

func newToolWiring(f *cmdutil.Factory) *toolWiring {
	w := &toolWiring{f: f}
	w.auditLog = sync.OnceValues(func() (*audit.Log, error) {
		cfg, err := f.Config()
		if err != nil {
			return nil, err
		}
		log, err := audit.Open(cfg.AuditLog, audit.Options{})
		if err == nil {
			f.Cleanup = append(f.Cleanup, func() { log.Close() })
		}
		return log, err
	})
	w.approver = sync.OnceValue(func() *approver.Terminal {
		return approver.New(f.IO, approver.Options{Pause: func() func() {
			if f.Pause == nil {
				return func() {}
			}
			return f.Pause()
		}})
	})
	return w
}

// build returns the governed tool set for a run of wf: built-ins restricted to workDir, the
// workflow's tools, project, user and installed tools, behind the approval flow and the audit
// log.
func (w *toolWiring) build(wf *workflow.Workflow, workDir string) (*cmdutil.Tools, error) {
	f := w.f
	log, err := w.auditLog()
	if err != nil {
		return nil, err
	}
	// Before approval.New: it rewrites server.tool references (rules included) to the
	// registered names.
	mcpTools, err := mcpSource(f, wf, workDir)
	if err != nil {
		return nil, err
	}
	flow, err := approval.New(approval.Config{
		Policy: wf.Approval, Tools: wf.Tools, Override: f.Flags.Approve, Yes: f.Flags.Yes,
		NonInteractive: f.Flags.NonInteractive, Approver: w.approver(), Eval: f.Templater(),
	})
	if err != nil {
		return nil, err
	}
	gate, err := govern.New(govern.Deps{
		Approval: flow, Policy: newPolicyReport(wf, workDir), Audit: log, Clock: ports.ClockFunc(nowFunc), Log: f.Log(),
		Secrets: govern.SecretValues(wf.Sandbox, providerKeyEnvNames(f), f.Environ),
	})
	if err != nil {
		return nil, err
	}
	validator := schema.New()
	reg, err := registry.New(registry.Config{
		Validator: validator, Clock: ports.ClockFunc(nowFunc),
		Stages: []registry.Stage{gate.Stage}, Context: tool.Context{WorkDir: workDir},
	})
	if err != nil {
		return nil, err
	}
	proxies := &netproxy.Pool{}
	f.Cleanup = append(f.Cleanup, func() { proxies.Close() })
	procs := &container.Selector{Process: process.New(process.Config{Proxy: proxies.Port}), Container: container.Config{WorkDir: workDir, Log: f.Log()}}
	f.Cleanup = append(f.Cleanup, func() { procs.Close() })
	builtins, exec, err := builtinTools(wf, workDir, f.Templater(), toolEnv(f.Environ), procs)
	if err != nil {
		return nil, err
	}
	warnings, err := reg.Load(builtins,
		command.Source{Specs: wf.Tools, Config: exec, Builtin: restricted(filePolicy(wf, workDir), webPolicy(wf))},
		manifest.Project("."), manifest.User(f.Getenv),
		manifest.Installed{Dir: manifest.DefaultInstallDir(f.Getenv)},
		mcpTools)
	if err != nil {
		return nil, err
	}
	return &cmdutil.Tools{Registry: reg, Invoker: gate.Invoker(reg), Validator: validator, Warnings: intended(wf, warnings)}, nil
}

// intended drops the shadowing warnings of `builtin: true` entries: restricting a built-in
// under its own name is what such an entry is for.
func intended(wf *workflow.Workflow, warnings workflow.Problems) workflow.Problems {
	var out workflow.Problems
	for _, w := range warnings {
		keep := true
		for _, t := range wf.Tools {
			if t.Builtin && strings.Contains(w.Msg, fmt.Sprintf("tool %q (workflow) shadows the builtin", t.Name)) {
				keep = false
			}
		}
		if keep {
			out = append(out, w)
		}
	}
	return out
}

// builtinTools returns the built-in tools for workDir and the configuration command tools run
// with: through procs (the sandboxed helper process, or a container when the policy says
// backend: container), never in awf's own process.
func builtinTools(wf *workflow.Workflow, workDir string, t ports.Templater, env []string, procs ports.ProcessRunner) (ports.StaticTools, command.Config, error) {
	policy := wf.Sandbox
	if policy == nil {
		policy = &workflow.Policy{} // the documented defaults; nil would mean no sandbox at all
	}
	exec := command.Config{Process: procs, Templater: t, Dir: workDir, Policy: policy, BaseEnv: env,
		Timeout: policy.Limits.Timeout, OutputLimit: policy.Limits.Output}
	sh, err := shell.New(exec)
	if err != nil {
		return ports.StaticTools{}, exec, err
	}
	files, err := file.NewTools(filePolicy(wf, workDir))
	if err != nil {
		return ports.StaticTools{}, exec, err
	}
	web, err := httptool.New(webPolicy(wf))
	if err != nil {
		return ports.StaticTools{}, exec, err
	}
	return ports.StaticTools{At: tool.LevelBuiltin, Set: tool.Set{
		Tools: append([]tool.Tool{sh, web}, files...), Aliases: shell.Aliases(),
	}}, exec, nil
}

// providerKeyEnvNames lists the environment variables that hold provider API keys, whose
// values the audit log masks.
func providerKeyEnvNames(f *cmdutil.Factory) []string {
	names := []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY"}
	if cfg, err := f.Config(); err == nil {
		for _, p := range cfg.Providers {
			if p.APIKeyEnv != "" {
				names = append(names, p.APIKeyEnv)
			}
		}
	}
	return names
}

// toolEnv is the environment tools start from: the minimal one (no secrets of awf's own
// environment reach a tool), with awf's PATH and HOME so that the user's toolchains (go, npm)
// are found and keep their caches.
func toolEnv(environ []string) []string {
	env := process.MinimalEnv()
	for _, kv := range environ {
		for _, keep := range []string{"PATH=", "HOME="} {
			if strings.HasPrefix(kv, keep) {
				env = append(env, kv) // later entries win
			}
		}
	}
	return env
}
