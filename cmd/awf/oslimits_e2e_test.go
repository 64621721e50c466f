//go:build unix

package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/domain/state"
)

// limitsWorkflow runs hostile shell tool calls under small sandbox limits.
const limitsWorkflow = `name: limits
approval: {default: auto}
sandbox:
  limits: {timeout: 60s, memory: 256MiB, pids: 64, output: 64KiB}
steps:
  - {name: interp_memory, type: tool, tool: shell, args: {command: "x=a; while true; do x=$x$x; done"}, continue_on_error: true}
  - {name: background_jobs, type: tool, tool: shell, args: {command: "for i in $(seq 200); do sleep 5 & done; wait"}, continue_on_error: true}
  - {name: stderr_flood, type: tool, tool: shell, args: {command: "echo start; yes >&2"}, continue_on_error: true}
  - {name: program_memory, type: tool, tool: shell, args: {command: "python3 -c 'x = bytearray(1 << 30)'"}, continue_on_error: true}
  - {name: orphans, type: tool, tool: shell, args: {command: "for i in $(seq 300); do sh -c 'true & true'; done; sh -c 'echo still-forking'"}, continue_on_error: true}
  - {name: after, type: tool, tool: shell, args: {command: "echo still-working"}}
`

// TestLimitsReportTheLimit (issue 11, item 5): a memory hog and a flood of background jobs in a
// shell tool are stopped by the limit they reach, and the result names it, not the Go stack
// trace of the helper that ran the interpreter; a stderr-only flood is stopped at the output
// limit, not left to the timeout.
func TestLimitsReportTheLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox of tool processes is Linux-only")
	}
	e := newEnv(t)
	e.write("limits.yaml", limitsWorkflow)
	res := e.runJSON(0, "run", "limits.yaml")
	st := e.state(res.RunID)
	noCrash := func(t *testing.T, s *state.StepState) {
		for _, crash := range []string{"goroutine ", "runtime.", "fatal error", "panic"} {
			if strings.Contains(s.Error, crash) {
				t.Errorf("error holds %q, a crash of the helper, not a limit:\n%.600s", crash, s.Error)
			}
		}
		if strings.Contains(s.Error, "timed out") {
			t.Errorf("error = %.300q: the limit did not stop it, the timeout did", s.Error)
		}
	}
	tests := []struct {
		step string
		want string
		// rootOnly rows need RLIMIT_NPROC, which binds the uid 65534 a root awf drops to, or
		// a cgroup.
		rootOnly bool
	}{
		{"interp_memory", "killed: memory limit 256 MiB reached", false},
		{"background_jobs", "killed: process limit 64 reached", true},
		{"stderr_flood", "output truncated at the limit", false},
		// A program that fails on the limit and says so in its own words.
		{"program_memory", "memory limit 256 MiB reached: exit status 1", false},
	}
	for _, tc := range tests {
		t.Run(tc.step, func(t *testing.T) {
			s := st.States[tc.step]
			if s == nil {
				t.Fatalf("no state for step %s", tc.step)
			}
			if strings.Contains(s.Error, "python3: not found") {
				t.Skip("python3 is not installed")
			}
			if tc.rootOnly && !strings.Contains(s.Error, tc.want) && strings.Contains(s.Error, "exit status") {
				t.Skipf("the process limit does not bind here (not root, no cgroup): %.200q", s.Error)
			}
			if s.Status != state.Failed || !strings.Contains(s.Error, tc.want) {
				t.Errorf("status %s, error %.600q; want failed with %q", s.Status, s.Error, tc.want)
			}
			noCrash(t, s)
		})
	}
	// Orphans (sh exits before its job) are reaped by the helper, the init of the tool's PID
	// namespace: as zombies they counted toward the process limit.
	if s := st.States["orphans"]; s == nil || strings.TrimSpace(s.Output) != "still-forking" {
		t.Errorf("300 orphaned jobs, each ended, made the process limit refuse a fork: %+v", s)
	}
	if s := st.States["after"]; s == nil || strings.TrimSpace(s.Output) != "still-working" {
		t.Errorf("the step after the limits did not run normally: %+v", s)
	}
}

// gitRepo makes dir a git repository with one commit, owned by the user running the tests
// (root here: the sandbox then runs tools as uid 65534, which owns nothing).
func gitRepo(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"init", "-q"}, {"config", "user.email", "awf@example.com"}, {"config", "user.name", "awf"},
		{"commit", "-q", "--allow-empty", "-m", "first"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// TestSandboxedGitReadOnly (issue 11, item 4): with a read-only workspace a root awf runs tools
// as uid 65534; legitimate read-only git must still work there, from the top of the
// repository and from a subdirectory.
func TestSandboxedGitReadOnly(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox of tool processes is Linux-only")
	}
	e := newEnv(t)
	gitRepo(t, e.dir)
	e.write("src/x.go", "package src\n")
	e.write("git.yaml", `name: git
approval: {default: auto}
sandbox:
  paths: {write: []}
steps:
  - {name: status, type: tool, tool: shell, args: {command: "git status --porcelain"}, continue_on_error: true}
  - {name: log, type: tool, tool: shell, args: {command: "set -o pipefail; git log --format=%s | cat"}, continue_on_error: true}
  - {name: subdir, type: tool, tool: shell, args: {command: "cd src && git status --porcelain ."}, continue_on_error: true}
`)
	res := e.runJSON(0, "run", "git.yaml")
	st := e.state(res.RunID)
	for step, want := range map[string]string{"status": "?? src/", "log": "first", "subdir": "?? src/"} {
		s := st.States[step]
		if s == nil || s.Status != state.Completed || !strings.Contains(s.Output, want) {
			t.Errorf("step %s = %+v; want completed with %q in the output", step, s, want)
		}
	}
}

// TestSandboxedGitHooksOff (issue 11, item 3a): git in a tool process runs no hooks and no
// fsmonitor, even when configuration of lower precedence names them (here the policy's own
// env.set; a repository's .git/config is lower still, and the sandbox hides it besides),
// unless the policy says sandbox.git_hooks: true (the control that shows they would have run).
func TestSandboxedGitHooksOff(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox of tool processes is Linux-only")
	}
	const hook = "#!/bin/sh\necho \"$0\" >> \"$(git rev-parse --show-toplevel)/hook-ran\"\nexit 0\n"
	for _, allowed := range []bool{false, true} {
		t.Run(fmt.Sprintf("git_hooks=%v", allowed), func(t *testing.T) {
			e := newEnv(t)
			gitRepo(t, e.dir)
			for _, name := range []string{"githooks/pre-commit", "githooks/post-commit", "fsmonitor.sh"} {
				e.write(name, hook)
				if err := os.Chmod(filepath.Join(e.dir, name), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			e.write("work.txt", "work\n")
			e.write("git.yaml", fmt.Sprintf(`name: git
approval: {default: auto}
sandbox:
  git_hooks: %v
  env:
    set:
      GIT_CONFIG_COUNT: "2"
      GIT_CONFIG_KEY_0: core.hooksPath
      GIT_CONFIG_VALUE_0: githooks
      GIT_CONFIG_KEY_1: core.fsmonitor
      GIT_CONFIG_VALUE_1: %s
      GIT_AUTHOR_NAME: awf
      GIT_AUTHOR_EMAIL: awf@example.com
      GIT_COMMITTER_NAME: awf
      GIT_COMMITTER_EMAIL: awf@example.com
steps:
  - {name: status, type: tool, tool: shell, args: {command: "git status --porcelain"}, continue_on_error: true}
  - {name: commit, type: tool, tool: shell, args: {command: "git add work.txt && git commit -q -m work"}, continue_on_error: true}
`, allowed, filepath.Join(e.dir, "fsmonitor.sh")))
			res := e.runJSON(0, "run", "git.yaml")
			st := e.state(res.RunID)
			for _, step := range []string{"status", "commit"} {
				if s := st.States[step]; s == nil || s.Status != state.Completed {
					t.Errorf("step %s = %+v; want completed", step, s)
				}
			}
			ran, _ := os.ReadFile(filepath.Join(e.dir, "hook-ran"))
			if !allowed {
				if len(ran) > 0 {
					t.Errorf("git ran the programs its configuration named, with hooks off:\n%s", ran)
				}
				return
			}
			for _, want := range []string{"fsmonitor.sh", "githooks/pre-commit", "githooks/post-commit"} {
				if !strings.Contains(string(ran), want) {
					t.Errorf("with git_hooks: true, %s did not run (ran: %q): the control proves nothing", want, ran)
				}
			}
		})
	}
}

// TestKilledAwfLeavesNoProcess (issue 11, item 6): after kill -9 of awf, nothing a shell step
// or a shell tool started keeps running or finishes its side effects: programs in the
// foreground and in the background, run by the interpreter or below a program (sh -c), and,
// where awf is root (a PID namespace per program), those that called setsid.
func TestKilledAwfLeavesNoProcess(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("parent-death signals and PID namespaces are Linux-only")
	}
	root := os.Geteuid() == 0
	// A duration no other test uses marks this test's sleeps in /proc/*/cmdline.
	mark := fmt.Sprintf("3.%06d", time.Now().UnixNano()%1000000)
	variants := []string{
		"sleep MARK; touch fg",
		"(sleep MARK; touch bg) &",
		"sh -c 'sleep MARK; touch sh' &",
	}
	if root {
		variants = append(variants, "setsid sh -c 'sleep MARK; touch setsid' &")
	}
	for _, kind := range []string{"shell step", "shell tool"} {
		t.Run(kind, func(t *testing.T) {
			e := newEnv(t)
			script := strings.ReplaceAll(strings.Join(slices.Concat(variants[1:], []string{"touch started", variants[0]}), "\n"), "MARK", mark)
			step := fmt.Sprintf("{name: work, type: shell, command: %q}", script)
			if kind == "shell tool" {
				step = fmt.Sprintf("{name: work, type: tool, tool: shell, args: {command: %q}}", script)
			}
			e.write("kill.yaml", "name: kill\napproval: {default: auto}\nsteps:\n  - "+step+"\n")
			cmd := e.cmd(t.Context(), "run", "kill.yaml", "--quiet")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// One sleep each, but the setsid one: its setsid program exits at once, and in a
			// shell step its PID namespace goes with it.
			want := 3
			waitFor(t, func() bool {
				_, err := os.Stat(filepath.Join(e.dir, "started"))
				return err == nil && len(survivors("sleep\x00"+mark)) >= want
			})
			cmd.Process.Kill()
			cmd.Wait()
			// The kernel kills a PID namespace asynchronously: look a few times.
			var left []string
			for range 20 {
				if left = survivors("sleep\x00" + mark); len(left) == 0 {
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
			for _, p := range left {
				t.Errorf("process outlived awf: %s", p)
				if pid, err := strconv.Atoi(strings.SplitN(p, ":", 2)[0]); err == nil {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			}
			time.Sleep(4 * time.Second) // past the sleeps: a survivor would have touched its file
			for _, name := range []string{"fg", "bg", "sh", "setsid"} {
				if _, err := os.Stat(filepath.Join(e.dir, name)); err == nil {
					t.Errorf("%s exists: a program started by the step finished after awf was killed", name)
				}
			}
		})
	}
}

// slowServer answers every request at once with its headers, then trickles a 1000-byte body
// one byte every 50 ms. It writes the file ready once it listens.
const slowServer = `import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], 80))
s.listen(5)
open("ready", "w").close()
while True:
    c, _ = s.accept()
    c.recv(65536)
    c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\nContent-Type: text/plain\r\n\r\n")
    try:
        for i in range(1000):
            c.sendall(b"x")
            time.sleep(0.05)
    except OSError:
        pass
    c.close()
`

// TestHTTPRequestPolicyTimeout (issue 11, item 5): http_request honours the policy's
// limits.timeout for the whole exchange, a body that trickles after prompt headers included
// (it used a fixed 30 s). http_request refuses loopback and private addresses, so awf runs in
// a network namespace of its own where a public address is on the loopback interface.
func TestHTTPRequestPolicyTimeout(t *testing.T) {
	if runtime.GOOS != "linux" || os.Geteuid() != 0 {
		t.Skip("needs root for a network namespace with a public address on loopback")
	}
	for _, prog := range []string{"unshare", "ip", "python3"} {
		if _, err := exec.LookPath(prog); err != nil {
			t.Skipf("%s is not installed", prog)
		}
	}
	e := newEnv(t)
	const addr = "93.184.216.34" // a public address, on this namespace's loopback only
	e.write("slow.py", slowServer)
	e.write("http.yaml", `name: http
approval: {default: auto}
sandbox:
  limits: {timeout: 1s}
steps:
  - {name: slow, type: tool, tool: http_request, args: {url: "http://`+addr+`/"}, continue_on_error: true}
`)
	script := `ip link set lo up && ip addr add ` + addr + `/32 dev lo || exit 99
python3 slow.py ` + addr + ` & server=$!
while [ ! -e ready ]; do sleep 0.05; done
"$AWF" run http.yaml --output json; code=$?
kill $server
exit $code`
	cmd := exec.CommandContext(t.Context(), "unshare", "-n", "sh", "-c", script)
	cmd.Dir, cmd.Env = e.dir, append(e.environ(), "AWF="+awfBin)
	r := e.capture(cmd, []string{"run", "http.yaml"})
	if r.code == 99 {
		t.Skipf("cannot set up the network namespace: %s", r.stderr)
	}
	res := e.wantExit(r, 0, []string{"run", "http.yaml"})
	var run runResult
	if err := json.Unmarshal([]byte(res.stdout), &run); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, res.stdout)
	}
	s := e.state(run.RunID).States["slow"]
	if s == nil || s.Status != state.Failed || !strings.Contains(s.Error, "reading the response body: timed out after 1s") {
		t.Errorf("step = %+v; want failed, timed out after 1s (limits.timeout) while reading the body", s)
	}
}

// TestSandboxedGitHooksStayOff: under a command allowlist of git, a line cannot undo the git
// settings the sandbox sets (unset, env -i, env -u, its own GIT_CONFIG_* entries): each is
// refused before anything runs, and no hook runs.
func TestSandboxedGitHooksStayOff(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox of tool processes is Linux-only")
	}
	e := newEnv(t)
	lib := filepath.Join(e.dir, "lib")
	gitRepo(t, lib)
	e.write("lib/.git/hooks/pre-commit", "#!/bin/sh\ntouch \"$(git rev-parse --show-toplevel)/hook-ran\"\n")
	if err := os.Chmod(filepath.Join(lib, ".git/hooks/pre-commit"), 0o755); err != nil {
		t.Fatal(err)
	}
	lines := []string{
		"cd lib && unset GIT_CONFIG_COUNT && git commit -q --allow-empty -m a",
		"cd lib && env -i git commit -q --allow-empty -m b",
		"cd lib && env -u GIT_CONFIG_COUNT git commit -q --allow-empty -m c",
		"cd lib && GIT_CONFIG_VALUE_1=.git/hooks git commit -q --allow-empty -m d",
		"cd lib && export -n GIT_CONFIG_COUNT && git commit -q --allow-empty -m e",
	}
	wf := "name: git\napproval: {default: auto}\nsandbox: {commands: [git]}\nsteps:\n"
	for i, l := range lines {
		wf += fmt.Sprintf("  - {name: s%d, type: tool, tool: shell, args: {command: %q}, continue_on_error: true}\n", i, l)
	}
	e.write("git.yaml", wf)
	res := e.runJSON(0, "run", "git.yaml")
	st := e.state(res.RunID)
	for i, l := range lines {
		if s := st.States[fmt.Sprintf("s%d", i)]; s == nil || s.Status != state.Failed || !strings.Contains(s.Error, "env-var") {
			t.Errorf("%q = %+v; want refused by the env-var rule", l, s)
		}
	}
	if _, err := os.Stat(filepath.Join(lib, "hook-ran")); err == nil {
		t.Error("a git hook ran")
	}
}
