package runner

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
)

// stderrCap bounds the stderr tail kept in the state of a failed shell step.
const stderrCap = 4 << 10

// shell runs a shell step. Its output is stdout with one trailing newline removed (as most
// engines do, so `{{states.x.output}}` of `echo hi` is "hi"); the state file holds the same.
// A non-zero exit fails the step with `exit status N: <last stderr line>` and keeps the tail
// of stderr in the state. The step runs with the process environment (Deps.Environ) plus its
// env, and without the workflow's sandbox policy: like a Makefile's recipes, shell steps are
// the author's own commands; the policy governs tools, which models drive.
func (e *execution) shell(ctx context.Context, sr *stepRun) (StepOutcome, error) {
	sh := sr.step.Shell
	scope := e.scope()
	cmd, err := e.r.d.Templater.Command(sh.Command, scope)
	if err != nil {
		return StepOutcome{}, fmt.Errorf("command: %w", err)
	}
	dir, err := e.render(sh.Dir, scope)
	if err != nil {
		return StepOutcome{}, fmt.Errorf("dir: %w", err)
	}
	env, err := e.renderMap(sh.Env, scope, "env")
	if err != nil {
		return StepOutcome{}, err
	}
	res, err := e.r.d.Process.Run(ctx, ports.ProcessRequest{
		Script:  cmd.Script,
		Vars:    cmd.Vars,
		Dir:     resolvePath(e.st.WorkDir, dir),
		BaseEnv: e.r.d.Environ,
		Env:     env,
		Timeout: sr.step.Timeout,
	})
	if err != nil {
		return StepOutcome{}, err
	}
	if res.Truncated {
		e.emit(ports.Event{Kind: ports.Warning, Step: sr.step.Name, Message: "output truncated at the output limit"})
	}
	code := res.ExitCode
	out := StepOutcome{Output: trimNewline(res.Stdout), ExitCode: &code, Command: cmd.Argv}
	if code != 0 {
		out.Stderr = tail(res.Stderr, stderrCap)
		msg := fmt.Sprintf("exit status %d", code)
		if line := lastLine(res.Stderr); line != "" {
			msg += ": " + line
		}
		return out, fault.New(fault.Execution, "%s", msg)
	}
	return out, nil
}

// render renders a template; the empty template is the empty string.
func (e *execution) render(tmpl string, scope ports.Scope) (string, error) {
	if tmpl == "" {
		return "", nil
	}
	return e.r.d.Templater.Render(tmpl, scope)
}

// renderMap renders every value of a map of templates, in key order so that the first error
// reported is always the same one.
func (e *execution) renderMap(tmpls map[string]string, scope ports.Scope, what string) (map[string]string, error) {
	if len(tmpls) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(tmpls))
	for _, k := range slices.Sorted(maps.Keys(tmpls)) {
		v, err := e.render(tmpls[k], scope)
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", what, k, err)
		}
		out[k] = v
	}
	return out, nil
}

func trimNewline(s string) string {
	s, ok := strings.CutSuffix(s, "\n")
	if ok {
		s = strings.TrimSuffix(s, "\r")
	}
	return s
}

// lastLine is the last non-blank line of s, trimmed.
func lastLine(s string) string {
	s = strings.TrimRight(s, " \t\r\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

// tail keeps at most the last n bytes of s, starting at a line when one begins in them.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[len(s)-n:]
	if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
		s = s[i+1:]
	}
	return "...\n" + s
}
