package toolwire

import (
	"log/slog"
	"strings"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/config"
	"github.com/awf-dev/awf/internal/infrastructure/container"
	"github.com/awf-dev/awf/internal/infrastructure/netproxy"
	"github.com/awf-dev/awf/internal/infrastructure/process"
	"github.com/awf-dev/awf/internal/infrastructure/tools/command"
	"github.com/awf-dev/awf/internal/infrastructure/tools/file"
	"github.com/awf-dev/awf/internal/infrastructure/tools/httptool"
	"github.com/awf-dev/awf/internal/infrastructure/tools/shell"
)

// Processes returns the runner of tool processes: the sandboxed helper (host allowlists
// through the filtering proxy; a helper per sandbox that stays up for the run, or helpers for
// the next calls started ahead), or a container when the policy says backend: container. The
// returned function stops the proxies, the helpers and the container client. helper is the
// program re-run as the helper ("" for this one).
func Processes(workDir, helper string, log *slog.Logger) (ports.ProcessRunner, func()) {
	proxies := &netproxy.Pool{}
	helpers := process.New(process.Config{HelperPath: helper, Proxy: proxies.Port, Warm: true, Serve: true})
	procs := &container.Selector{Process: helpers, Container: container.Config{WorkDir: workDir, Log: log}}
	return procs, func() { procs.Close(); helpers.Close(); proxies.Close() }
}

// Sources returns the built-in tools for a run of wf (templates of its policy already
// resolved, see compile.ResolvePolicies) in workDir, and the workflow's own tools: command
// tools and restricted built-ins. Tool processes go through procs, never awf's own process;
// scope is the template scope of command tools for calls that carry none.
func Sources(wf *workflow.Workflow, workDir string, t ports.Templater, environ []string, procs ports.ProcessRunner, scope ports.Scope) (ports.StaticTools, command.Source, error) {
	policy := wf.Sandbox
	if policy == nil {
		policy = &workflow.Policy{} // the documented defaults; nil would mean no sandbox at all
	}
	exec := command.Config{Process: procs, Templater: t, Dir: workDir, Policy: policy, BaseEnv: ToolEnv(environ),
		Scope: scope, Timeout: policy.Limits.Timeout, OutputLimit: policy.Limits.Output}
	files := FilePolicy(wf, workDir)
	web := WebPolicy(wf)
	workflowTools := command.Source{Specs: wf.Tools, Config: exec, Builtin: Restricted(files, web, exec)}
	sh, err := shell.New(exec)
	if err != nil {
		return ports.StaticTools{}, workflowTools, err
	}
	fileTools, err := file.NewTools(files)
	if err != nil {
		return ports.StaticTools{}, workflowTools, err
	}
	webTool, err := httptool.New(web)
	if err != nil {
		return ports.StaticTools{}, workflowTools, err
	}
	return ports.StaticTools{At: tool.LevelBuiltin, Set: tool.Set{
		Tools: append([]tool.Tool{sh, webTool}, fileTools...), Aliases: shell.Aliases(),
	}}, workflowTools, nil
}

// KeyEnvNames lists the environment variables that hold provider API keys, whose values the
// audit log masks.
func KeyEnvNames(cfg config.Config) []string {
	names := []string{"OPENAI_API_KEY", "ANTHROPIC_API_KEY"}
	for _, p := range cfg.Providers {
		if p.APIKeyEnv != "" {
			names = append(names, p.APIKeyEnv)
		}
	}
	return names
}

// ToolEnv is the environment tools start from: the minimal one (no secrets of awf's own
// environment reach a tool), with awf's PATH and HOME so that the user's toolchains (go, npm)
// are found and keep their caches.
func ToolEnv(environ []string) []string {
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
