package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/cmd/awf/internal/ptytest"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/tool"
	awfmcp "github.com/awf-dev/awf/internal/infrastructure/mcp"
)

// TestServeRecoversFromPanickingTool: a Go tool that panics (which only code registering
// tools can make) is an error result through the whole governed path, audited, and the
// server goes on.
func TestServeRecoversFromPanickingTool(t *testing.T) {
	e := newEnv(t)
	t.Chdir(e.dir)
	ios, _, _, _ := iostreams.Test()
	ts, err := BuildToolset(e.factory(ios), ToolsetRequest{WorkDir: e.dir, RunID: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Close() })
	err = ts.Registry.Register(&tool.Func{ToolName: "boom", Desc: "Panics.", Notes: tool.Annotations{ReadOnly: true},
		Fn: func(context.Context, tool.Invocation) tool.Result { panic("kaboom") }})
	if err != nil {
		t.Fatal(err)
	}
	infos, err := ts.Registry.Describe(t.Context(), ports.ToolQuery{Names: []string{"boom", "read_file"}})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := awfmcp.NewServer(awfmcp.ServerConfig{Tools: infos, Invoker: ts.Invoker, Refuser: ts.Refuser, RunID: "run-1", NewID: uuid.NewString})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(t.Context(), inR, outW) }()
	sess, err := newClient().Connect(t.Context(), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, isErr := callTool(t, sess, "boom", nil); !isErr || !strings.Contains(got, `tool "boom" crashed: kaboom`) {
		t.Errorf("boom = %q (isError %v), want a crash error result", got, isErr)
	}
	if got, isErr := callTool(t, sess, "read_file", map[string]any{"path": "hello.txt"}); isErr || !strings.Contains(got, "hello") {
		t.Errorf("read_file after the panic = %q (isError %v)", got, isErr)
	}
	sess.Close()
	if err := <-done; err != nil {
		t.Errorf("Serve() = %v", err)
	}
	var got []string
	for _, r := range e.auditRecords() {
		got = append(got, r.Tool+":"+r.Outcome)
	}
	if diff := cmp.Diff([]string{"boom:error", "read_file:ok"}, got); diff != "" {
		t.Errorf("audit log (-want +got):\n%s", diff)
	}
}

// TestServeHTTP serves streamable HTTP on a loopback port and stops when its context ends.
func TestServeHTTP(t *testing.T) {
	e := newEnv(t)
	t.Chdir(e.dir)
	ios, _, _, errOut := iostreams.Test()
	f := e.factory(ios)
	addrs := make(chan net.Addr, 1)
	opts := &ServeOptions{IO: ios, Factory: f, Workflow: "serve.yaml", HTTP: "127.0.0.1:0",
		Listening: func(a net.Addr) { addrs <- a }}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, opts) }()
	var addr net.Addr
	select {
	case addr = <-addrs:
	case err := <-done:
		t.Fatalf("runServe() = %v before listening; stderr: %s", err, errOut)
	}
	sess, err := newClient().Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: awfmcp.URL(addr)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, isErr := callTool(t, sess, "greet", map[string]any{"name": "web"}); isErr || got != "hello web\n" {
		t.Errorf("greet over HTTP = %q (isError %v)", got, isErr)
	}
	sess.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("runServe() = %v after cancel", err)
	}
	if !strings.Contains(errOut.String(), "serving 5 tools at http://127.0.0.1:") {
		t.Errorf("stderr = %q, want the URL", errOut)
	}
	if recs := e.auditRecords(); len(recs) != 1 || recs[0].Tool != "greet" || recs[0].Outcome != ports.OutcomeOK {
		t.Errorf("audit log = %+v, want the greet call", recs)
	}
}

func TestServeFlags(t *testing.T) {
	tests := []struct {
		args []string
		want string // "" when the flags are accepted
	}{
		{[]string{"--tools", "read_file"}, ""},
		{[]string{"--workflow", "wf.yaml"}, ""},
		{[]string{"--all", "--http", "8080"}, ""},
		{[]string{"--all", "--http", "0.0.0.0:8080", "--allow-remote"}, ""},
		{[]string{}, "say which tools to serve"},
		{[]string{"--all", "--tools", "x"}, "exclude each other"},
		{[]string{"--tools", "x", "--input", "a=b"}, "need --workflow"},
		{[]string{"--all", "--http", "0.0.0.0:8080"}, "not a loopback address"},
		{[]string{"--all", "--allow-remote"}, "--allow-remote needs --http"},
		{[]string{"--all", "--step", "x"}, "--step needs --run-id"},
		{[]string{"--all", "--run-id", "r", "--step", "x"}, ""},
		{[]string{"--tools", "read_file", "--calls-file", "calls.jsonl"}, ""},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			ios, _, _, _ := iostreams.Test()
			var got *ServeOptions
			cmd := NewCmdServe(newEnv(t).factory(ios), func(_ context.Context, o *ServeOptions) error { got = o; return nil })
			cmd.SetArgs(tc.args)
			cmd.SilenceUsage, cmd.SilenceErrors = true, true
			err := cmd.Execute()
			if tc.want == "" {
				if err != nil || got == nil {
					t.Errorf("serve %v = %v, want it accepted", tc.args, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || fault.KindOf(err) != fault.Usage {
				t.Errorf("serve %v = %v, want a usage error containing %q", tc.args, err, tc.want)
			}
		})
	}
}

// TestServeAsksOnTheTerminal: over stdio, calls needing approval are asked on the terminal
// (here a pseudo-terminal played by the test), never on the protocol's standard input.
func TestServeAsksOnTheTerminal(t *testing.T) {
	p := ptytest.Open(t)
	e := newEnv(t)
	t.Chdir(e.dir)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ios, _, _, _ := iostreams.Test()
	ios.In, ios.Out = inR, outW
	opts := &ServeOptions{IO: ios, Factory: e.factory(ios), Workflow: "serve.yaml",
		OpenTerminal: func() (*os.File, error) { return os.OpenFile(p.Name, os.O_RDWR|syscall.O_NOCTTY, 0) }}
	done := make(chan error, 1)
	go func() {
		done <- runServe(t.Context(), opts)
		outW.Close()
	}()
	sess, err := newClient().Connect(t.Context(), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		if _, ok := p.WaitFor("Allow?", 1); ok {
			fmt.Fprint(p.Master, "y\n")
		}
	}()
	got, isErr := callTool(t, sess, "write_file", map[string]any{"path": "new.txt", "content": "approved\n"})
	<-answered
	if isErr || !strings.Contains(got, "new.txt") {
		t.Errorf("write_file after yes = %q (isError %v)", got, isErr)
	}
	if data, err := os.ReadFile(filepath.Join(e.dir, "new.txt")); err != nil || string(data) != "approved\n" {
		t.Errorf("new.txt = %q, %v", data, err)
	}
	if screen := p.Text(); !strings.Contains(screen, "write_file") {
		t.Errorf("the terminal showed %q, want the call", screen)
	}
	sess.Close()
	if err := <-done; err != nil {
		t.Errorf("runServe() = %v", err)
	}
	if recs := e.auditRecords(); len(recs) != 1 || recs[0].Approval.By != ports.ByUser || recs[0].Approval.Answer != "yes" {
		t.Errorf("audit log = %+v, want write_file approved by the user", recs)
	}
}

// TestBinaryRefusesRemoteListen: the real binary exits with a usage error (1) for a
// non-loopback --http address without --allow-remote.
func TestBinaryRefusesRemoteListen(t *testing.T) {
	if awfSkip != "" {
		t.Skip(awfSkip)
	}
	e := newEnv(t)
	cmd := exec.Command(awfBin, "mcp", "serve", "--all", "--http", "0.0.0.0:0")
	cmd.Dir, cmd.Env = e.dir, e.environ()
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "--allow-remote") {
		t.Errorf("awf mcp serve --http 0.0.0.0:0 = %v, %q; want exit 1 naming --allow-remote", err, out)
	}
}

// TestBinaryAsksOnItsTerminal runs the real binary with a pseudo-terminal as its controlling
// terminal and pipes as stdin and stdout (as an MCP client starts it): the approval question
// appears on the terminal, and the answer typed there decides.
func TestBinaryAsksOnItsTerminal(t *testing.T) {
	if awfSkip != "" {
		t.Skip(awfSkip)
	}
	p := ptytest.Open(t)
	term, err := os.OpenFile(p.Name, os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Close()
	e := newEnv(t)
	cmd := exec.Command(awfBin, "--audit-log", e.audit, "mcp", "serve", "--workflow", "serve.yaml")
	cmd.Dir, cmd.Env = e.dir, e.environ()
	cmd.ExtraFiles = []*os.File{term} // fd 3 in the child
	cmd.SysProcAttr = ptytest.SessionAttr(3)
	var stderr syncBuffer
	cmd.Stderr = &stderr
	sess, err := newClient().Connect(t.Context(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v; stderr: %s", err, stderr.String())
	}
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		if _, ok := p.WaitFor("Allow?", 1); ok {
			fmt.Fprint(p.Master, "n\n")
		}
	}()
	got, isErr := callTool(t, sess, "write_file", map[string]any{"path": "new.txt", "content": "x"})
	<-answered
	if !isErr || !strings.Contains(got, "denied") {
		t.Errorf("write_file after no = %q (isError %v), want a denial", got, isErr)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("write_file ran after no: %v", err)
	}
	if err := sess.Close(); err != nil {
		t.Errorf("awf mcp serve ended with %v; stderr: %s", err, stderr.String())
	}
	if recs := e.auditRecords(); len(recs) != 1 || recs[0].Approval.By != ports.ByUser || recs[0].Approval.Answer != "no" {
		t.Errorf("audit log = %+v, want write_file denied by the user", recs)
	}
}
