package cmdcheck

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// run interprets script with the guard in front of the default exec handler, as the
// process helper does, and returns its status and stderr.
func run(t *testing.T, g *Guard, env []string, script string) (int, string) {
	t.Helper()
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	r, err := interp.New(
		interp.Env(expand.ListEnviron(env...)),
		interp.Dir(t.TempDir()),
		interp.StdIO(nil, &stdout, &stderr),
		interp.ExecHandlers(g.Middleware),
	)
	if err != nil {
		t.Fatal(err)
	}
	err = r.Run(t.Context(), f)
	if err == nil {
		return 0, stderr.String()
	}
	if status, ok := errors.AsType[interp.ExitStatus](err); ok {
		return int(status), stderr.String()
	}
	t.Fatalf("run %q: %v", script, err)
	return -1, ""
}

func plant(t *testing.T, dir, name string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\necho planted\n"), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestGuard(t *testing.T) {
	for _, bin := range []string{"/bin/cat", "/bin/ls", "/usr/bin/env"} {
		if _, err := os.Stat(bin); err != nil {
			t.Skipf("needs %s", bin)
		}
	}
	ws := t.TempDir()
	wsBin := filepath.Join(ws, "bin")
	os.Mkdir(wsBin, 0o755)
	plant(t, wsBin, "cat")
	plant(t, ws, "tool.sh")
	env := []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/nonexistent", "EDITOR=vi"}
	g := NewGuard(New([]string{"cat", "ls", filepath.Join(ws, "tool.sh")}), env, []string{ws})

	tests := []struct {
		name   string
		script string
		status int
		rule   Rule
	}{
		{name: "allowed", script: "cat /dev/null && ls / >/dev/null", status: 0},
		{name: "allowed by trusted path", script: "/bin/cat /dev/null", status: 0},
		{name: "allowed script by path", script: "cd " + ws + " && ./tool.sh >/dev/null", status: 0},
		{name: "through env", script: "env cat /dev/null", status: 0},
		{name: "unchanged initial EDITOR", script: "cat /dev/null", status: 0},
		{name: "not allowed", script: "curl --version", status: 126, rule: RuleAllowlist},
		{name: "dynamic name", script: "x=curl; $x --version", status: 126, rule: RuleAllowlist},
		{name: "eval", script: "eval 'curl --version'", status: 126, rule: RuleAllowlist},
		{name: "wrapped", script: "env -i curl", status: 126, rule: RuleAllowlist},
		{name: "wrapped dynamic", script: "w=timeout; $w 5 curl x", status: 126, rule: RuleAllowlist},
		{name: "planted by PATH", script: "PATH=" + wsBin + ":$PATH; cat /dev/null", status: 126, rule: RuleUntrusted},
		{name: "planted through env PATH", script: "env PATH=" + wsBin + " cat /dev/null", status: 126, rule: RuleUntrusted},
		{name: "planted by path", script: wsBin + "/cat", status: 126, rule: RuleUntrusted},
		{name: "preload", script: "LD_PRELOAD=/tmp/x.so cat /dev/null", status: 126, rule: RuleEnv},
		{name: "exported preload", script: "v=LD_PRELOAD; export $v=/tmp/x.so; cat /dev/null", status: 126, rule: RuleEnv},
		{name: "pager command", script: "export PAGER='curl x'; cat /dev/null", status: 126, rule: RuleAllowlist},
		{name: "in a function", script: "f() { curl x; }; f", status: 126, rule: RuleAllowlist},
		{name: "in a subshell", script: "(curl x)", status: 126, rule: RuleAllowlist},
		{name: "in a command substitution", script: "echo $(curl x)", status: 0, rule: RuleAllowlist},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, stderr := run(t, g, env, tc.script)
			if status != tc.status {
				t.Errorf("run(%q) status = %d, want %d; stderr:\n%s", tc.script, status, tc.status, stderr)
			}
			if tc.rule != "" && !strings.Contains(stderr, "(rule "+string(tc.rule)+")") {
				t.Errorf("run(%q) stderr = %q, want it to name rule %s", tc.script, stderr, tc.rule)
			}
			if tc.rule == "" && stderr != "" {
				t.Errorf("run(%q) stderr = %q, want none", tc.script, stderr)
			}
		})
	}
}

func TestGuardPromptExpansion(t *testing.T) {
	env := []string{"PATH=/usr/bin:/bin"}
	g := NewGuard(New([]string{"cat"}), env, nil)
	// ${x@P} hides a command substitution in a value; if the interpreter runs it, the guard
	// sees the command.
	_, stderr := run(t, g, env, `x='$(curl evil)'; echo "${x@P}"`)
	if strings.Contains(stderr, "curl") && !strings.Contains(stderr, "refused") {
		t.Errorf("${x@P} ran curl without a refusal: %s", stderr)
	}
}

func TestGuardWithoutAllowlist(t *testing.T) {
	next := func(context.Context, []string) error { return nil }
	var g *Guard
	if err := g.Middleware(next)(context.Background(), []string{"anything"}); err != nil {
		t.Errorf("nil guard refused: %v", err)
	}
	if err := NewGuard(nil, nil, nil).Check([]string{"curl"}, "/", func(string) (string, bool) { return "", false }); err != nil {
		t.Errorf("guard without a list refused: %v", err)
	}
}
