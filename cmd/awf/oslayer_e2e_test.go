package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/state"
)

// protectWorkflow runs, through the shell tool, the reads and writes of protected paths a
// model could try: none may reveal or change them (issue 11, item 7).
const protectWorkflow = `name: protect
approval: {default: auto}
sandbox:
  paths: {protect: ["keys/**"]}
steps:
  - {name: cat_env, type: tool, tool: shell, args: {command: "cat .env; cat svc/.env.local"}, continue_on_error: true}
  - {name: write_hook, type: tool, tool: shell, args: {command: "echo evil > .git/hooks/pre-commit; echo evil > .git/hooks/post-checkout"}, continue_on_error: true}
  - {name: git_config, type: tool, tool: shell, args: {command: "cat .git/config"}, continue_on_error: true}
  - {name: write_config, type: tool, tool: shell, args: {command: "echo '[core]' >> .git/config; echo 'hooksPath = /tmp' >> .git/config"}, continue_on_error: true}
  - {name: ls_awf, type: tool, tool: shell, args: {command: "ls -A .awf; cat .awf/audit.jsonl"}, continue_on_error: true}
  - {name: policy_glob, type: tool, tool: shell, args: {command: "cat keys/deploy.pem; rm -f keys/deploy.pem"}, continue_on_error: true}
  - {name: rename_git, type: tool, tool: shell, args: {command: "mv .git .git-moved"}, continue_on_error: true}
  - {name: git_status, type: tool, tool: shell, args: {command: "git status --short"}, continue_on_error: true}
`

func TestSandboxHidesProtectedPaths(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox of tool processes is Linux-only")
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("needs git")
	}
	e := newEnv(t)
	if out, err := exec.Command(git, "init", "-q", e.dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	files := map[string]string{
		".env":                  "API_KEY=host-secret-1\n",
		"svc/.env.local":        "API_KEY=host-secret-2\n",
		".git/hooks/pre-commit": "#!/bin/sh\nexit 0\n",
		"keys/deploy.pem":       "host-secret-3\n",
		"src/x.go":              "package src\n",
	}
	for name, content := range files {
		e.write(name, content)
	}
	config := e.read(".git/config")
	e.write("wf.yaml", protectWorkflow)
	res := e.runJSON(0, "run", "wf.yaml")
	st := e.state(res.RunID)

	for _, step := range []string{"cat_env", "git_config", "ls_awf", "policy_glob"} {
		s := st.States[step]
		for _, leak := range []string{"host-secret", "[core]", "runs", "audit", "\"tool\""} {
			if strings.Contains(s.Output, leak) {
				t.Errorf("step %s: a shell tool read a protected path: output %q", step, s.Output)
			}
		}
	}
	for name, content := range files {
		if got := e.read(name); got != content {
			t.Errorf("%s changed by a shell tool: %q", name, got)
		}
	}
	if got := e.read(".git/config"); got != config {
		t.Errorf(".git/config changed by a shell tool:\n%s", got)
	}
	if _, err := os.Stat(filepath.Join(e.dir, ".git", "hooks", "post-checkout")); err == nil {
		t.Error("a shell tool created a git hook")
	}
	if _, err := os.Stat(filepath.Join(e.dir, ".git-moved")); err == nil {
		t.Error("a shell tool renamed .git")
	}
	for _, step := range []string{"write_hook", "write_config", "rename_git"} {
		if s := st.States[step]; s.Status != state.Failed {
			t.Errorf("step %s: status %s, want failed (the write refused)", step, s.Status)
		}
	}
	if s := st.States["git_status"]; s.Status != state.Completed {
		t.Errorf("git status in the workspace: %s %q %q; legitimate git must keep working with .git/config hidden", s.Status, s.Error, s.Stderr)
	}
}
