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
	e.write(".git/config", e.read(".git/config")+"[remote \"origin\"]\n\turl = https://u:host-secret-4@example.com/r.git\n[core]\n\thooksPath = /tmp/evil-hooks\n")
	config := e.read(".git/config")
	e.write("wf.yaml", protectWorkflow)
	res := e.runJSON(0, "run", "wf.yaml")
	st := e.state(res.RunID)

	for _, step := range []string{"cat_env", "git_config", "ls_awf", "policy_glob"} {
		s := st.States[step]
		for _, leak := range []string{"host-secret", "hooksPath", "runs", "audit", "\"tool\""} {
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
	if s := st.States["git_config"]; !strings.Contains(s.Output, "repositoryformatversion = 0") {
		t.Errorf("the hidden .git/config keeps the keys git needs to read the repository: %q", s.Output)
	}
	if s := st.States["git_status"]; s.Status != state.Completed {
		t.Errorf("git status in the workspace: %s %q %q; legitimate git must keep working with .git/config hidden", s.Status, s.Error, s.Stderr)
	}
}

// strictLs allows ls only, enforced by the kernel (sandbox.exec: allowlist); every other way
// to run /usr/bin/id must fail, each writing a marker if it ran (issue 11, item 3b).
const strictLs = `name: strict
approval: {default: auto}
sandbox: {commands: [ls], exec: allowlist}
steps:
  - {name: ls, type: tool, tool: shell, args: {command: "ls run.sh"}, continue_on_error: true}
  - {name: by_path, type: tool, tool: shell, args: {command: "/usr/bin/id > ran-path"}, continue_on_error: true}
  - {name: by_sh, type: tool, tool: shell, args: {command: "sh -c '/usr/bin/id > ran-sh'"}, continue_on_error: true}
  - {name: by_loader, type: tool, tool: shell, args: {command: "LOADER /usr/bin/id > ran-loader"}, continue_on_error: true}
  - {name: by_copy, type: tool, tool: shell, args: {command: "./id-copy > ran-copy"}, continue_on_error: true}
  - {name: by_script, type: tool, tool: shell, args: {command: "./run.sh"}, continue_on_error: true}
`

// strictMake allows make and nothing else: make's recipes need /bin/sh, which the kernel
// refuses, and make's SHELL pointed at the dynamic loader cannot map /usr/bin/id.
const strictMake = `name: strict_make
approval: {default: auto}
sandbox: {commands: [make], exec: allowlist}
steps:
  - {name: make_sh, type: tool, tool: shell, args: {command: "make -f sh.mk"}, continue_on_error: true}
  - {name: make_loader, type: tool, tool: shell, args: {command: "make -f loader.mk"}, continue_on_error: true}
`

func TestExecAllowlistThroughTheKernel(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox of tool processes is Linux-only")
	}
	loader := ""
	for _, p := range []string{"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"} {
		if _, err := os.Stat(p); err == nil {
			loader = p
		}
	}
	if loader == "" {
		t.Skip("no dynamic loader at a known path")
	}
	e := newEnv(t)
	id, err := os.ReadFile("/usr/bin/id")
	if err != nil {
		t.Skip("needs /usr/bin/id")
	}
	if err := os.WriteFile(filepath.Join(e.dir, "id-copy"), id, 0o755); err != nil {
		t.Fatal(err)
	}
	e.write("run.sh", "#!/bin/sh\n/usr/bin/id > ran-script\n")
	if err := os.Chmod(filepath.Join(e.dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.write("strict.yaml", strings.ReplaceAll(strictLs, "LOADER", loader))
	res := e.runJSON(0, "run", "strict.yaml")
	st := e.state(res.RunID)
	if s := st.States["ls"]; s.Status != state.Completed || strings.TrimSpace(s.Output) != "run.sh" {
		t.Errorf("ls under an exec allowlist of ls: %s, output %q, error %q", s.Status, s.Output, s.Error)
	}
	if a := e.audit()["ls"]; a.Sandbox == nil || !strings.HasPrefix(a.Sandbox.Applied["exec"], "allowlist") {
		t.Errorf("the audit record of ls does not say the exec allowlist was enforced: %+v", a.Sandbox)
	}
	for _, step := range []string{"by_path", "by_sh", "by_loader", "by_copy", "by_script"} {
		s := st.States[step]
		t.Logf("%s: %s, output %q, stderr %q, error %q", step, s.Status, s.Output, s.Stderr, s.Error)
		if s.Status != state.Failed || strings.Contains(s.Output, "uid=") {
			t.Errorf("step %s: %s, output %q; want it refused", step, s.Status, s.Output)
		}
		if s.Error == "" && s.Stderr == "" {
			t.Errorf("step %s: refused without a word", step)
		}
	}
	for _, marker := range []string{"ran-path", "ran-sh", "ran-loader", "ran-copy", "ran-script"} {
		if data, err := os.ReadFile(filepath.Join(e.dir, marker)); err == nil && len(data) > 0 {
			t.Errorf("%s: /usr/bin/id ran: %q", marker, data)
		}
	}

	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("needs make")
	}
	e.write("sh.mk", "all:\n\t/usr/bin/id > ran-make\n")
	e.write("loader.mk", "SHELL = "+loader+"\n.SHELLFLAGS =\nall:\n\t/usr/bin/id\n")
	e.write("make.yaml", strictMake)
	res = e.runJSON(0, "run", "make.yaml")
	st = e.state(res.RunID)
	for _, step := range []string{"make_sh", "make_loader"} {
		s := st.States[step]
		t.Logf("%s: %s, output %q, stderr %q, error %q", step, s.Status, s.Output, s.Stderr, s.Error)
		if s.Status != state.Failed || strings.Contains(s.Output, "uid=") {
			t.Errorf("step %s: %s, output %q, stderr %q; want make's child refused by the kernel", step, s.Status, s.Output, s.Stderr)
		}
	}
	if s := st.States["make_sh"]; !strings.Contains(s.Output+s.Stderr+s.Error, "Permission denied") {
		t.Errorf("make_sh: the refusal is not clear: output %q, stderr %q, error %q", s.Output, s.Stderr, s.Error)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "ran-make")); err == nil {
		t.Error("make ran /bin/sh under an exec allowlist of make")
	}
}
