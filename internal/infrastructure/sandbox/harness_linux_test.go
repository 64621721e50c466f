//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// The test binary plays three parts: the test itself; the process helper (helperEnv set),
// which reads a request on fd 3, applies the sandbox with Helper.Setup, reports what it
// applied on fd 4 and interprets the script as the real helper does; and an attacker program
// that scripts run inside the sandbox ("attack NAME", see attack_linux_test.go).
const helperEnv = "AWF_SANDBOX_TEST_HELPER"

func TestMain(m *testing.M) {
	switch {
	case os.Getenv(helperEnv) != "":
		os.Exit(helperMain())
	case len(os.Args) > 2 && os.Args[1] == "attack":
		os.Exit(attackMain(os.Args[2], os.Args[3:]))
	}
	os.Exit(m.Run())
}

type helperRequest struct {
	Spec   json.RawMessage `json:"spec"`
	Script string          `json:"script"`
	Env    []string        `json:"env"`
}

// helperMain is what process.HelperConfig does with the sandbox hooks: Setup, then the
// interpreter with the Middleware.
func helperMain() int {
	status := os.NewFile(4, "status")
	var req helperRequest
	if err := json.NewDecoder(os.NewFile(3, "request")).Decode(&req); err != nil {
		fmt.Fprintln(os.Stderr, "helper: request:", err)
		return 125
	}
	var h Helper
	env, err := req.Env, error(nil)
	if len(req.Spec) > 0 && string(req.Spec) != "null" {
		env, err = h.Setup(req.Spec, req.Env)
	}
	json.NewEncoder(status).Encode(struct {
		Applied *Applied `json:"applied"`
		Error   string   `json:"error,omitempty"`
	}{h.Applied, errString(err)})
	status.Close()
	if err != nil {
		fmt.Fprintln(os.Stderr, "helper:", err)
		return 125
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(req.Script), "script")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	dir, _ := os.Getwd()
	r, err := interp.New(interp.Env(expand.ListEnviron(env...)), interp.Dir(dir),
		interp.StdIO(os.Stdin, os.Stdout, os.Stderr), interp.ExecHandlers(h.Middleware, startProgram))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 125
	}
	err = r.Run(context.Background(), f)
	if status, ok := errors.AsType[interp.ExitStatus](err); ok {
		return int(status)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// startProgram is the innermost exec handler, as process.programExec is in the real helper:
// it starts each program where the sandbox wants it started (StartProgram), then waits.
func startProgram(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	return func(ctx context.Context, args []string) error {
		hc := interp.HandlerCtx(ctx)
		path, err := interp.LookPathDir(hc.Dir, hc.Env, args[0])
		if err != nil {
			fmt.Fprintln(hc.Stderr, err)
			return interp.ExitStatus(127)
		}
		cmd := exec.Command(path, args[1:]...)
		cmd.Args[0], cmd.Dir = args[0], hc.Dir
		for name, vr := range hc.Env.Each {
			if vr.Exported && vr.IsSet() {
				cmd.Env = append(cmd.Env, name+"="+vr.String())
			}
		}
		cmd.Stdin, cmd.Stdout, cmd.Stderr = hc.Stdin, hc.Stdout, hc.Stderr
		if err := StartProgram(cmd.Start); err != nil {
			fmt.Fprintln(hc.Stderr, err)
			return interp.ExitStatus(126)
		}
		if err := cmd.Wait(); err != nil {
			if exit, ok := errors.AsType[*exec.ExitError](err); ok {
				if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					return interp.ExitStatus(128 + int(ws.Signal()))
				}
				return interp.ExitStatus(exit.ExitCode())
			}
			return err
		}
		return nil
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// helperPath is the executable started as the helper: this test binary, or a copy every
// uid can run (a simulated non-root user cannot reach go test's build directory).
var helperPath = os.Args[0]

// result is one sandboxed run.
type result struct {
	status         int
	stdout, stderr string
	applied        *Applied
	setupErr       string
	prepareErr     error
	pid            int // the helper's pid, seen from the test
}

// runSandboxed runs script in a sandboxed helper started the way the process runner does:
// Prepare, the helper with Launch.SysProcAttr and its own process group, the spec on the
// wire, everything the group holds killed at the end.
func runSandboxed(t testing.TB, spec *Spec, rep Report, script string, env []string, timeout time.Duration) result {
	t.Helper()
	l, err := Prepare(spec, rep)
	if err != nil {
		return result{prepareErr: err}
	}
	defer l.Close()
	return runLaunch(t, l, script, env, timeout)
}

// runLaunch runs script in a helper prepared by l.
func runLaunch(t testing.TB, l *Launch, script string, env []string, timeout time.Duration) result {
	t.Helper()
	var encoded []byte
	var extra []*os.File
	dir, attr := "", &syscall.SysProcAttr{}
	if l != nil {
		extra = l.ExtraFiles(5) // after the request and status pipes, as the runner does
		var err error
		if encoded, err = l.Spec.Encode(); err != nil {
			t.Fatal(err)
		}
		dir, attr = l.Spec.Dir, l.SysProcAttr
	}
	reqR, reqW, _ := os.Pipe()
	statusR, statusW, _ := os.Pipe()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, helperPath)
	cmd.Env = []string{helperEnv + "=1", "GORACE=atexit_sleep_ms=0"}
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.ExtraFiles = append([]*os.File{reqR, statusW}, extra...)
	cmd.SysProcAttr = attr
	cmd.SysProcAttr.Setpgid = true
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper: %v", err)
	}
	reqR.Close()
	statusW.Close()
	json.NewEncoder(reqW).Encode(helperRequest{Spec: encoded, Script: script, Env: env})
	reqW.Close()
	var st struct {
		Applied *Applied `json:"applied"`
		Error   string   `json:"error"`
	}
	data, _ := io.ReadAll(statusR)
	statusR.Close()
	json.Unmarshal(data, &st)
	err := cmd.Wait()
	killGroup(cmd.Process.Pid)
	res := result{stdout: stdout.String(), stderr: stderr.String(), applied: st.Applied, setupErr: st.Error, pid: cmd.Process.Pid}
	res.status = cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.status = 128 + int(ws.Signal())
	}
	if err != nil && res.status == -1 {
		t.Fatalf("helper: %v", err)
	}
	return res
}

// killGroup kills what is left of the helper's process group, as the runner does, and waits
// for it to be gone: without a pid namespace, uid 65534's processes of one run would
// otherwise still count against the next run's RLIMIT_NPROC.
func killGroup(pgid int) {
	syscall.Kill(-pgid, syscall.SIGKILL)
	for range 500 {
		if syscall.Kill(-pgid, 0) == syscall.ESRCH {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}
