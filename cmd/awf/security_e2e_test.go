package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// securityData is where the fixtures of the attack suite live.
var securityData = filepath.Join("..", "..", "testdata", "e2e", "security")

// auditLine is the part of one .awf/audit.jsonl record the attack suite checks.
type auditLine struct {
	Step     string `json:"step"`
	Tool     string `json:"tool"`
	Outcome  string `json:"outcome"`
	Error    string `json:"error"`
	Approval *struct {
		Decision string `json:"decision"`
		By       string `json:"by"`
	} `json:"approval"`
	Sandbox *struct {
		Decision string            `json:"decision"`
		Rule     string            `json:"rule"`
		Layer    string            `json:"layer"`
		Backend  string            `json:"backend"`
		Applied  map[string]string `json:"applied"`
	} `json:"sandbox"`
	Verdict   *ports.AuditVerdict `json:"verdict"`
	Truncated bool                `json:"truncated"`
}

// audit reads the project's audit log, one completion record per step (the attack workflows
// make one call per step).
func (e *env) audit() map[string]auditLine {
	e.t.Helper()
	f, err := os.Open(filepath.Join(e.dir, ".awf", "audit.jsonl"))
	if err != nil {
		e.t.Fatal(err)
	}
	defer f.Close()
	lines := map[string]auditLine{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var l auditLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			e.t.Fatalf("audit line does not parse: %v\n%.200s", err, sc.Text())
		}
		if l.Outcome == "started" { // the completion record that follows says more
			continue
		}
		if _, dup := lines[l.Step]; dup {
			e.t.Errorf("step %s has more than one audit record", l.Step)
		}
		lines[l.Step] = l
	}
	if err := sc.Err(); err != nil {
		e.t.Fatal(err)
	}
	return lines
}

// hostileServer counts the requests that reach it: every attack aimed at it must leave it at 0.
func hostileServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprintln(w, "reached", r.URL.Path)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// udpReceived reports whether a datagram is waiting on conn, without waiting for one.
func udpReceived(t *testing.T, conn net.PacketConn) bool {
	t.Helper()
	raw, err := conn.(*net.UDPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var n int
	var rerr error
	buf := make([]byte, 64)
	if err := raw.Read(func(fd uintptr) bool {
		n, rerr = recvNow(fd, buf)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return rerr == nil && n > 0
}

// survivors lists the processes whose command line holds marker.
func survivors(marker string) []string {
	paths, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	var found []string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(data), marker) {
			found = append(found, filepath.Base(filepath.Dir(p))+": "+strings.ReplaceAll(string(data), "\x00", " "))
		}
	}
	return found
}

// attack is one hostile step of testdata/e2e/security/attacks.yaml and what must come of it.
type attack struct {
	step string
	tool string
	// status is the step's expected status; failed means the call was refused or failed.
	status state.Status
	// errHas are substrings of the step's error, all required.
	errHas []string
	// outcome is the audit record's outcome.
	outcome string
	// contained checks the host after the run: the attack had no effect outside its sandbox.
	contained func(t *testing.T, s state.StepState)
	// needs names a program the row needs on the host; the row is skipped without it.
	needs string
	// slow rows are skipped under -short.
	slow bool
}

// TestSecurityAttacks runs the attack suite of issue 4 through the real binary: one workflow
// whose steps each make one hostile call, all approved automatically, so that only the tools'
// own checks (L1) and the OS sandbox (L2) stand between the call and the host. Each row checks
// the step's state, its audit record, and the host.
func TestSecurityAttacks(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox of tool processes is Linux-only")
	}
	e := newEnv(t)
	e.copy(filepath.Join(securityData, "attacks.yaml"), "attacks.yaml")
	e.write("src/x.go", "package src\n")
	const hook, dotenv = "#!/bin/sh\nexit 0\n", "API_KEY=host-secret\n"
	_, hasGit := exec.LookPath("git")
	if hasGit == nil {
		if out, err := exec.Command("git", "init", "-q", e.dir).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
	}
	e.write(".git/hooks/pre-commit", hook)
	e.write(".env", dotenv)

	outside := t.TempDir() // a host directory outside the workspace
	const secret = "outside-secret-content\n"
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte(secret), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(e.dir, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(e.dir, "escape_dir")); err != nil {
		t.Fatal(err)
	}

	srv, hits := hostileServer(t)
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	udpPort := udp.LocalAddr().(*net.UDPAddr).Port

	marker := "awf-env-marker-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	survivor := "awf-survivor-" + strconv.FormatInt(time.Now().UnixNano(), 36)

	r := e.runIO("", []string{"AWF_SECURITY_MARKER=" + marker},
		"run", "attacks.yaml", "--output", "json",
		"--input", "outside="+outside, "--input", "port="+strconv.Itoa(port),
		"--input", "udp_port="+strconv.Itoa(udpPort), "--input", "survivor="+survivor)
	if r.code != 0 {
		t.Fatalf("awf run: exit %d\nstdout:\n%s\nstderr:\n%.4000s", r.code, r.stdout, r.stderr)
	}
	res := decode[runResult](t, r)
	st := e.state(res.RunID)
	audit := e.audit()

	hostUnchanged := func(name, want string) func(*testing.T, state.StepState) {
		return func(t *testing.T, _ state.StepState) {
			got, err := os.ReadFile(name)
			if err != nil {
				t.Fatalf("host file %s: %v", name, err)
			}
			if string(got) != want {
				t.Errorf("host file %s = %q, want %q (the attack reached it)", name, got, want)
			}
		}
	}
	absent := func(name string) func(*testing.T, state.StepState) {
		return func(t *testing.T, _ state.StepState) {
			if _, err := os.Lstat(name); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s exists on the host: the attack wrote it (lstat: %v)", name, err)
			}
		}
	}
	outputLacks := func(s string) func(*testing.T, state.StepState) {
		return func(t *testing.T, st state.StepState) {
			if strings.Contains(st.Output, s) || strings.Contains(st.Error, s) {
				t.Errorf("the step's output or error holds %q:\noutput: %.500q\nerror: %.500q", s, st.Output, st.Error)
			}
		}
	}
	literal := func(v string) func(*testing.T, state.StepState) {
		return func(t *testing.T, st state.StepState) {
			if st.Output != v {
				t.Errorf("output = %q, want the value %q byte for byte", st.Output, v)
			}
			absent(filepath.Join(e.dir, "pwned"))(t, st)
		}
	}
	noHit := func(t *testing.T, _ state.StepState) {
		if n := hits.Load(); n != 0 {
			t.Errorf("the loopback server received %d requests", n)
		}
	}
	all := func(fs ...func(*testing.T, state.StepState)) func(*testing.T, state.StepState) {
		return func(t *testing.T, s state.StepState) {
			for _, f := range fs {
				f(t, s)
			}
		}
	}
	secretFile := filepath.Join(outside, "secret")
	refusedIP := "private and local addresses are not allowed"

	attacks := []attack{
		{step: "traversal_read", tool: "read_file", status: state.Failed, outcome: "denied",
			errHas: []string{"outside the allowed read paths"}},
		{step: "absolute_read", tool: "read_file", status: state.Failed, outcome: "denied",
			errHas: []string{`"/etc/passwd" is outside the allowed read paths`}},
		{step: "traversal_write", tool: "write_file", status: state.Failed, outcome: "denied",
			errHas: []string{"outside the allowed write paths"}, contained: absent(filepath.Join(outside, "pwned"))},
		{step: "absolute_write", tool: "write_file", status: state.Failed, outcome: "denied",
			errHas: []string{"outside the allowed write paths"}, contained: absent(filepath.Join(outside, "pwned"))},
		{step: "symlink_read", tool: "read_file", status: state.Failed, outcome: "denied",
			errHas: []string{"leads outside its allowed directory through a symlink"}, contained: outputLacks("outside-secret")},
		{step: "symlink_write", tool: "write_file", status: state.Failed, outcome: "denied",
			errHas: []string{"does not write through symlinks"}, contained: hostUnchanged(secretFile, secret)},
		{step: "symlink_dir_write", tool: "write_file", status: state.Failed, outcome: "denied",
			errHas: []string{"symlink"}, contained: absent(filepath.Join(outside, "pwned"))},
		{step: "shell_symlink_read", tool: "shell", status: state.Failed, outcome: "error",
			errHas: []string{"exit status"}, contained: outputLacks("outside-secret")},
		{step: "shell_symlink_write", tool: "shell", status: state.Failed, outcome: "error",
			errHas: []string{"exit status"}, contained: hostUnchanged(secretFile, secret)},
		{step: "hook_write", tool: "write_file", status: state.Failed, outcome: "denied",
			errHas: []string{".git/hooks/pre-commit is protected"}, contained: hostUnchanged(filepath.Join(e.dir, ".git/hooks/pre-commit"), hook)},
		{step: "env_read", tool: "read_file", status: state.Failed, outcome: "denied",
			errHas: []string{".env is protected"}, contained: outputLacks("host-secret")},
		{step: "env_write", tool: "write_file", status: state.Failed, outcome: "denied",
			errHas: []string{".env is protected"}, contained: hostUnchanged(filepath.Join(e.dir, ".env"), dotenv)},
		{step: "shell_hook_write", tool: "shell", status: state.Failed, outcome: "error",
			errHas: []string{"read-only file system"}, contained: hostUnchanged(filepath.Join(e.dir, ".git/hooks/pre-commit"), hook)},
		{step: "shell_env_write", tool: "shell", status: state.Failed, outcome: "error",
			errHas: []string{"read-only file system"}, contained: hostUnchanged(filepath.Join(e.dir, ".env"), dotenv)},
		{step: "inject_semicolon", tool: "echo_value", status: state.Completed, outcome: "ok", contained: literal("x; touch pwned")},
		{step: "inject_subst", tool: "echo_value", status: state.Completed, outcome: "ok", contained: literal("$(touch pwned)")},
		{step: "inject_backticks", tool: "echo_value", status: state.Completed, outcome: "ok", contained: literal("`touch pwned`")},
		{step: "inject_newline", tool: "echo_value", status: state.Completed, outcome: "ok", contained: literal("x\ntouch pwned")},
		{step: "shell_write_outside", tool: "shell", status: state.Failed, outcome: "error",
			errHas: []string{"exit status"}, contained: absent(filepath.Join(outside, "f"))},
		{step: "shell_read_environ", tool: "shell", status: state.Completed, outcome: "ok",
			contained: all(outputLacks(marker), outputLacks("AWF_SECURITY_MARKER"))},
		{step: "shell_udp", tool: "shell", status: state.Failed, outcome: "error", needs: "python3",
			errHas: []string{"Error"}, contained: all(outputLacks("SENT"), func(t *testing.T, _ state.StepState) {
				if udpReceived(t, udp) {
					t.Error("the loopback UDP socket received a datagram from the tool")
				}
			})},
		{step: "shell_tcp", tool: "shell", status: state.Failed, outcome: "error", needs: "python3",
			errHas: []string{"Error"}, contained: all(outputLacks("CONNECTED"), noHit)},
		{step: "shell_flood", tool: "shell", status: state.Failed, outcome: "error", slow: true,
			errHas: []string{"output truncated at the limit"}},
		{step: "shell_timeout", tool: "shell", status: state.Failed, outcome: "timeout",
			errHas: []string{"timed out after 1s"}},
		{step: "shell_setsid", tool: "shell", status: state.Completed, outcome: "ok", needs: "setsid",
			contained: func(t *testing.T, s state.StepState) {
				if s.Output != "setsid-started" {
					t.Fatalf("the setsid child never started (output %q): the row proves nothing", s.Output)
				}
				// awf has exited; a survivor would still be running. The kernel reaps the killed
				// PID namespace asynchronously, so look again a few times before calling it one.
				var found []string
				for range 20 {
					if found = survivors(survivor); len(found) == 0 {
						return
					}
					time.Sleep(100 * time.Millisecond)
				}
				t.Errorf("processes started by the tool outlived the run: %v", found)
				for _, p := range found {
					if pid, err := strconv.Atoi(strings.SplitN(p, ":", 2)[0]); err == nil {
						killPID(pid)
					}
				}
			}},
		{step: "ssrf_loopback", tool: "http_request", status: state.Failed, outcome: "denied",
			errHas: []string{"address 127.0.0.1 is loopback", refusedIP}, contained: noHit},
		{step: "ssrf_localhost", tool: "http_request", status: state.Failed, outcome: "denied",
			errHas: []string{"host localhost resolves only to refused addresses", refusedIP}, contained: noHit},
		{step: "ssrf_metadata", tool: "http_request", status: state.Failed, outcome: "denied",
			errHas: []string{"169.254.169.254 is a cloud metadata endpoint and is never allowed"}},
		{step: "ssrf_mapped", tool: "http_request", status: state.Failed, outcome: "denied",
			errHas: []string{"::ffff:127.0.0.1 is IPv4-mapped loopback", refusedIP}, contained: noHit},
		{step: "ssrf_decimal", tool: "http_request", status: state.Failed, outcome: "denied",
			errHas: []string{`host "2130706433" looks like an IPv4 address in a non-standard spelling`}, contained: noHit},
		{step: "ssrf_short", tool: "http_request", status: state.Failed, outcome: "denied",
			errHas: []string{`host "127.1" looks like an IPv4 address in a non-standard spelling`}, contained: noHit},
		{step: "legit_read", tool: "read_file", status: state.Completed, outcome: "ok",
			contained: func(t *testing.T, s state.StepState) {
				if s.Output != "package src" { // a tool step loses one trailing newline
					t.Errorf("output = %q, want the content of src/x.go", s.Output)
				}
			}},
		{step: "legit_write", tool: "write_file", status: state.Completed, outcome: "ok",
			contained: hostUnchanged(filepath.Join(e.dir, "src/new.go"), "package src\n")},
		{step: "legit_shell_write", tool: "shell", status: state.Completed, outcome: "ok",
			contained: hostUnchanged(filepath.Join(e.dir, "src/built.txt"), "built\n")},
		{step: "legit_git_status", tool: "shell", status: state.Completed, outcome: "ok", needs: "git",
			contained: func(t *testing.T, s state.StepState) {
				if !strings.Contains(s.Output, "?? src/") {
					t.Errorf("git status output = %q, want the untracked src/", s.Output)
				}
			}},
	}
	for _, a := range attacks {
		t.Run(a.step, func(t *testing.T) {
			if a.needs != "" {
				if _, err := exec.LookPath(a.needs); err != nil {
					t.Skipf("%s is not installed", a.needs)
				}
			}
			if a.slow && testing.Short() {
				t.Skip("slow row; skipped under -short")
			}
			s, ok := st.States[a.step]
			if !ok {
				t.Fatalf("the state file has no step %s", a.step)
			}
			if s.Status != a.status {
				t.Errorf("status = %s, want %s (error %q, output %.200q)", s.Status, a.status, s.Error, s.Output)
			}
			for _, want := range a.errHas {
				if !strings.Contains(s.Error, want) {
					t.Errorf("error = %q, want it to contain %q", s.Error, want)
				}
			}
			checkAudit(t, audit, a)
			if a.contained != nil {
				a.contained(t, *s)
			}
		})
	}
	t.Run("legit GET to an allowed host", func(t *testing.T) {
		t.Skip("needs the network: a public host is the only kind http_request allows by default, and tests run offline")
	})
}

// checkAudit checks the one audit record of a's step: its tool, outcome and approval, and the
// sandbox part, which for a tool that starts a process names the layers applied.
func checkAudit(t *testing.T, audit map[string]auditLine, a attack) {
	t.Helper()
	l, ok := audit[a.step]
	if !ok {
		t.Fatalf("the audit log has no record for step %s", a.step)
	}
	if l.Tool != a.tool || l.Outcome != a.outcome {
		t.Errorf("audit tool, outcome = %s, %s; want %s, %s (error %q)", l.Tool, l.Outcome, a.tool, a.outcome, l.Error)
	}
	if a.status == state.Failed && l.Error == "" {
		t.Errorf("audit record of a failed call has no error")
	}
	if l.Approval == nil || l.Approval.Decision != "allow" || l.Approval.By != "auto" {
		t.Errorf("audit approval = %+v, want allow by auto (the workflow approves everything)", l.Approval)
	}
	if a.outcome == "denied" { // refused by a layer inside the tool: a denial naming it
		if l.Sandbox == nil || l.Sandbox.Decision != "deny" || l.Verdict == nil || l.Verdict.Decision != "deny" ||
			l.Verdict.Layer == "" || l.Verdict.Rule == "" {
			t.Errorf("audit sandbox = %+v, verdict = %+v; want a denial with its layer and rule", l.Sandbox, l.Verdict)
		}
		return
	}
	if l.Sandbox == nil || l.Sandbox.Decision != "allow" {
		t.Fatalf("audit sandbox = %+v, want a record with decision allow", l.Sandbox)
	}
	if a.tool == "shell" || a.tool == "echo_value" { // tools that start a process
		if l.Sandbox.Backend == "" || l.Sandbox.Applied["layers"] == "" {
			t.Errorf("audit sandbox = %+v, want the backend and the layers applied to the tool's process", l.Sandbox)
		}
	}
}

// TestSecurityPolicyLimits checks that the workflow's sandbox.limits bound the shell tool's
// processes through the binary.
func TestSecurityPolicyLimits(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox of tool processes is Linux-only")
	}
	e := newEnv(t)
	e.copy(filepath.Join(securityData, "limits.yaml"), "limits.yaml")
	res := e.runJSON(0, "run", "limits.yaml")
	st := e.state(res.RunID)
	t.Run("timeout", func(t *testing.T) {
		s := st.States["limit_timeout"]
		if s.Status != state.Failed || !strings.Contains(s.Error, "timed out") {
			t.Errorf("sandbox.limits.timeout 1s did not stop `sleep 3` run by the shell tool: status %s, error %q", s.Status, s.Error)
		}
	})
	t.Run("output", func(t *testing.T) {
		s := st.States["limit_output"]
		if s.OutputSize > 64<<10 {
			t.Errorf("sandbox.limits.output 64KiB did not cap the shell tool's output: %d bytes kept, error %q", s.OutputSize, s.Error)
		}
		if !strings.Contains(s.Error, "output truncated") {
			t.Errorf("error = %q, want the output marked truncated", s.Error)
		}
	})
}
