//go:build unix

package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/goccy/go-yaml"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// runResult is the JSON object `awf run --output json` prints.
type runResult struct {
	RunID     string            `json:"run_id"`
	Workflow  string            `json:"workflow"`
	Status    string            `json:"status"`
	StateFile string            `json:"state_file"`
	Output    string            `json:"output"`
	Error     jsonError         `json:"error"`
	Steps     map[string]string `json:"steps"`
}

// jsonError is the error member of a failed command's --output json object.
type jsonError struct {
	Kind     string `json:"kind"`
	Message  string `json:"message"`
	ExitCode int    `json:"exit_code"`
}

// runState is the part of a state file the tests read.
type runState struct {
	Workflow string `yaml:"workflow"`
	Status   string `yaml:"status"`
	States   map[string]struct {
		Status string `yaml:"status"`
	} `yaml:"states"`
}

// TestAWFAsCIStep runs the awf image the way a CI job runs a container: the checkout mounted
// as the working directory, no terminal, CI=true, the job's uid, `awf run ... --non-interactive
// --output json`. It checks the exit codes a job's status depends on, the JSON on stdout, and
// the state (and, once awf writes one, audit) files left in the mounted workspace.
func TestAWFAsCIStep(t *testing.T) {
	t.Parallel()
	requireDocker(t)
	tests := []struct {
		name       string
		workflow   string
		wantCode   int
		wantResult *runResult // nil: the run never started (the JSON object holds only the error)
		wantStderr string
	}{
		{"passing workflow", "pass.yaml", 0,
			&runResult{Workflow: "ci-pass", Status: "completed", Output: "ci: 3 lines",
				Steps: map[string]string{"list": "completed", "build": "completed"}}, ""},
		{"failing step", "fail.yaml", 3,
			&runResult{Workflow: "ci-fail", Status: "failed", Error: jsonError{Kind: "execution", Message: `step "tests": exit status 4: 2 tests failed`, ExitCode: 3},
				Steps: map[string]string{"ok": "completed", "tests": "failed"}}, "2 tests failed"},
		{"invalid workflow", "invalid.yaml", 2, nil, `invalid.yaml:6:5: unknown key "comand"`},
		{"missing workflow file", "missing.yaml", 1, nil, "missing.yaml"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ws := checkout(t)
			code, out := runAWF(t, ws, "run", tc.workflow, "--non-interactive", "--output", "json")
			if code != tc.wantCode {
				t.Fatalf("awf run %s: exit %d, want %d\nstdout: %s\nstderr: %s", tc.workflow, code, tc.wantCode, out.stdout, out.stderr)
			}
			if !strings.Contains(out.stderr, tc.wantStderr) {
				t.Errorf("stderr %q does not contain %q", out.stderr, tc.wantStderr)
			}
			if strings.Contains(out.stderr, "\x1b[") {
				t.Errorf("stderr without a terminal has escape sequences: %q", out.stderr)
			}
			if tc.wantResult == nil {
				if res := decodeResult(t, out.stdout); res.RunID != "" || res.Error.ExitCode != tc.wantCode || res.Error.Message == "" {
					t.Errorf("JSON of a run that never started = %+v, want no run id and the error with exit code %d", res, tc.wantCode)
				}
				if _, err := os.Stat(filepath.Join(ws, ".awf", "runs")); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("state directory of a run that never started: %v, want none", err)
				}
				return
			}
			res := decodeResult(t, out.stdout)
			checkResult(t, res, tc.wantResult)
			checkStateFile(t, ws, res)
			checkAuditLog(t, ws, res.RunID)
		})
	}
}

// checkout copies testdata/ci into a fresh workspace, as a CI job's checkout.
func checkout(t *testing.T) string {
	t.Helper()
	ws := t.TempDir()
	if err := os.CopyFS(ws, os.DirFS(filepath.Join("testdata", "ci"))); err != nil {
		t.Fatal(err)
	}
	return ws
}

// runAWF runs the awf image with args in workspace ws, mounted at /work, and returns its exit
// code and output.
func runAWF(t *testing.T, ws string, args ...string) (int, output) {
	t.Helper()
	c := runContainer(t, awfImage,
		testcontainers.WithCmd(args...),
		testcontainers.WithEnv(map[string]string{"CI": "true", "HOME": "/tmp"}),
		testcontainers.WithConfigModifier(func(cfg *container.Config) {
			cfg.User = fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid())
			cfg.WorkingDir = "/work"
		}),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.Mounts = append(hc.Mounts, mount.Mount{Type: mount.TypeBind, Source: ws, Target: "/work"})
		}),
		testcontainers.WithWaitStrategy(wait.ForExit()))
	state, err := c.State(t.Context())
	if err != nil {
		t.Fatalf("container state: %v", err)
	}
	return state.ExitCode, logs(t, c.GetContainerID())
}

// decodeResult decodes stdout, which must hold one JSON object and nothing else.
func decodeResult(t *testing.T, stdout string) runResult {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(stdout))
	var res runResult
	var extra json.RawMessage
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("stdout is not the JSON result: %v\n%s", err, stdout)
	}
	if err := dec.Decode(&extra); err == nil {
		t.Fatalf("stdout holds more than one JSON object: %s", stdout)
	}
	return res
}

func checkResult(t *testing.T, got runResult, want *runResult) {
	t.Helper()
	if got.RunID == "" || got.StateFile == "" {
		t.Errorf("result without run_id or state_file: %+v", got)
	}
	w := *want
	w.RunID, w.StateFile = got.RunID, got.StateFile
	if fmt.Sprint(got) != fmt.Sprint(w) {
		t.Errorf("awf run result = %+v, want %+v", got, w)
	}
}

// checkStateFile reads the state file the result names, in the mounted workspace.
func checkStateFile(t *testing.T, ws string, res runResult) {
	t.Helper()
	path := res.StateFile
	if !filepath.IsAbs(path) {
		path = filepath.Join("/work", path)
	}
	rel, err := filepath.Rel("/work", path)
	if err != nil || strings.HasPrefix(rel, "..") || !strings.HasPrefix(rel, filepath.Join(".awf", "runs")+"/") {
		t.Fatalf("state file %s is not under /work/.awf/runs", res.StateFile)
	}
	host := filepath.Join(ws, rel)
	data, err := os.ReadFile(host)
	if err != nil {
		t.Fatalf("state file on the host: %v", err)
	}
	var st runState
	if err := yaml.Unmarshal(data, &st); err != nil {
		t.Fatalf("state file %s: %v", host, err)
	}
	if st.Workflow != res.Workflow || st.Status != res.Status {
		t.Errorf("state file: workflow %q status %q, want %q %q", st.Workflow, st.Status, res.Workflow, res.Status)
	}
	for step, status := range res.Steps {
		if st.States[step].Status != status {
			t.Errorf("state file: step %s is %q, want %q", step, st.States[step].Status, status)
		}
	}
	ownedByUs(t, host)
	if res.Status == "completed" {
		out := filepath.Join(ws, "build", "out.txt")
		if data, err := os.ReadFile(out); err != nil || string(data) != "ALPHA\nBETA\nGAMMA\n" {
			t.Errorf("build/out.txt on the host = %q (%v), want the upper-cased sources", data, err)
		}
		ownedByUs(t, out)
	}
}

// ownedByUs checks that a file awf wrote in the mount belongs to the job's user, not root.
func ownedByUs(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && (int(st.Uid) != os.Getuid() || int(st.Gid) != os.Getgid()) {
		t.Errorf("%s belongs to %d:%d, want the job's %d:%d", path, st.Uid, st.Gid, os.Getuid(), os.Getgid())
	}
}

// checkAuditLog checks the audit log, when awf has written one: JSON lines, 0600, every
// record of this run. A workflow of shell steps makes no tool calls, so an absent log is not a
// failure.
func checkAuditLog(t *testing.T, ws, runID string) {
	t.Helper()
	path := filepath.Join(ws, ".awf", "audit.jsonl")
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		t.Logf("no audit log at %s (no tool calls were made, or awf writes none yet)", path)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Mode().Perm() != 0o600 {
		t.Errorf("audit log mode %v, want 0600", fi.Mode().Perm())
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		var rec struct {
			RunID string `json:"run_id"`
			Tool  string `json:"tool"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || rec.RunID != runID || rec.Tool == "" {
			t.Errorf("audit record %s: run %q tool %q (%v), want run %s", sc.Bytes(), rec.RunID, rec.Tool, err, runID)
		}
	}
}

// TestAWFAsCIStepDeniesPrompts runs a tool call that needs approval with no terminal: the run
// must not wait for an answer. --non-interactive (deny) refuses the call, and a tool step whose
// call is refused ends the run as denied (exit 5, docs/cli.md); --non-interactive=fail ends the
// run as denied too (exit 5). Either way the write
// does not happen and the audit log in the workspace records the refusal and who made it.
func TestAWFAsCIStepDeniesPrompts(t *testing.T) {
	t.Parallel()
	requireDocker(t)
	tests := []struct {
		flag     string
		wantCode int
	}{
		{"--non-interactive", 5},
		{"--non-interactive=fail", 5},
	}
	for _, tc := range tests {
		t.Run(tc.flag, func(t *testing.T) {
			t.Parallel()
			ws := checkout(t)
			code, out := runAWF(t, ws, "run", "approve.yaml", tc.flag, "--output", "json")
			if code != tc.wantCode {
				t.Fatalf("awf run approve.yaml %s: exit %d, want %d\nstdout: %s\nstderr: %s", tc.flag, code, tc.wantCode, out.stdout, out.stderr)
			}
			if _, err := os.Stat(filepath.Join(ws, "approved.txt")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the refused write happened: %v", err)
			}
			res := decodeResult(t, out.stdout)
			if res.Status != "failed" || res.Steps["read"] != "completed" || res.Steps["write"] != "failed" {
				t.Errorf("result = %+v, want failed at step write after read", res)
			}
			checkStateFile(t, ws, res)
			data, err := os.ReadFile(filepath.Join(ws, ".awf", "audit.jsonl"))
			if err != nil {
				t.Fatalf("audit log: %v", err)
			}
			checkAuditLog(t, ws, res.RunID)
			var tools []string
			for line := range strings.Lines(string(data)) {
				var rec struct {
					Tool     string `json:"tool"`
					Outcome  string `json:"outcome"`
					Approval *struct {
						Decision string `json:"decision"`
						By       string `json:"by"`
					} `json:"approval"`
				}
				if err := json.Unmarshal([]byte(line), &rec); err != nil || rec.Approval == nil {
					t.Fatalf("audit record %s: %v", line, err)
				}
				tools = append(tools, fmt.Sprintf("%s %s %s by %s", rec.Tool, rec.Outcome, rec.Approval.Decision, rec.Approval.By))
			}
			// The allowed call is logged when it starts and when it ends; the refused one once.
			want := []string{"read_file started allow by auto", "read_file ok allow by auto", "write_file denied deny by non_interactive"}
			if fmt.Sprint(tools) != fmt.Sprint(want) {
				t.Errorf("audit records = %q, want %q", tools, want)
			}
		})
	}
}
