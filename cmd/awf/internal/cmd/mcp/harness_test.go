package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/awf-dev/awf/cmd/awf/internal/cmdutil"
	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/cmd/awf/internal/ptytest"
	"github.com/awf-dev/awf/internal/domain/ports"
	auditlog "github.com/awf-dev/awf/internal/infrastructure/audit"
	"github.com/awf-dev/awf/internal/infrastructure/config"
	"github.com/awf-dev/awf/internal/infrastructure/loader"
	"github.com/awf-dev/awf/internal/infrastructure/templater"
)

// env is one test's world: a work directory with the test workflows and a file to read, a
// file outside it, and an audit log.
type env struct {
	t     *testing.T
	root  string // holds work and the outside file
	dir   string // the working directory
	audit string
	notes string // the test MCP server's notes file
}

func newEnv(t *testing.T) *env {
	t.Helper()
	root := t.TempDir()
	e := &env{t: t, root: root, dir: filepath.Join(root, "work"), audit: filepath.Join(root, "audit.jsonl"),
		notes: filepath.Join(root, "notes.txt")}
	for _, name := range []string{"serve.yaml", "agent.yaml"} {
		data, err := os.ReadFile(filepath.Join(moduleRoot, "testdata", "mcp", name))
		if err != nil {
			t.Fatal(err)
		}
		e.write(name, string(data))
	}
	e.write("hello.txt", "hello from the workspace\n")
	if err := os.WriteFile(filepath.Join(root, "outside.txt"), []byte("secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) write(name, content string) {
	e.t.Helper()
	p := filepath.Join(e.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// environ is awf's environment in the tests: no CI, no API keys, the test server's path.
func (e *env) environ() []string {
	home := filepath.Join(e.root, "home")
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"GOCOVERDIR=" + os.Getenv("GOCOVERDIR"),
		"TESTSERVER=" + testServerBin,
		"NOTES_FILE=" + e.notes,
	}
}

func (e *env) getenv(name string) string {
	for _, kv := range e.environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// factory is a Factory for in-process commands, with the audit log in the test's root.
func (e *env) factory(ios *iostreams.IOStreams) *cmdutil.Factory {
	return &cmdutil.Factory{
		IO: ios, Version: "test", Getenv: e.getenv, Environ: e.environ(), Flags: &cmdutil.GlobalFlags{},
		Config: func() (config.Config, error) {
			cfg := config.Resolve(config.Defaults())
			cfg.AuditLog = e.audit
			return cfg, nil
		},
		Log:       func() *slog.Logger { return slog.New(slog.NewTextHandler(e.t.Output(), nil)) },
		Loader:    func() ports.WorkflowLoader { return loader.New() },
		Templater: func() ports.Templater { return templater.New() },
	}
}

// auditRecords reads the audit log, one record per call (started records folded into their
// completions, as awf audit shows them).
func (e *env) auditRecords() []ports.AuditRecord {
	e.t.Helper()
	data, err := os.ReadFile(e.audit)
	if err != nil {
		e.t.Fatalf("read the audit log: %v", err)
	}
	var recs []ports.AuditRecord
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r ports.AuditRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			e.t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	return auditlog.Fold(recs)
}

// launcher starts `awf mcp serve args...` in the env's directory and returns a client
// session on it, closed at the end of the test.
type launcher struct {
	name  string
	start func(e *env, args ...string) *sdk.ClientSession
}

var launchers = []launcher{{"in-process", inProcess}, {"binary", subprocess}}

func newClient() *sdk.Client {
	return sdk.NewClient(&sdk.Implementation{Name: "awf-test", Version: "1"}, nil)
}

// inProcess runs the serve command in this process on pipes, with no terminal.
func inProcess(e *env, args ...string) *sdk.ClientSession {
	t := e.t
	t.Chdir(e.dir)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ios, _, _, errOut := iostreams.Test()
	ios.In, ios.Out = inR, outW
	f := e.factory(ios)
	cmd := NewCmdServe(f, func(ctx context.Context, o *ServeOptions) error {
		o.OpenTerminal = noTerminal
		return runServe(ctx, o)
	})
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := cmd.ExecuteContext(ctx)
		outW.CloseWithError(io.EOF)
		done <- err
	}()
	sess, err := newClient().Connect(t.Context(), &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		cancel()
		t.Fatalf("connect: %v (serve: %v; stderr: %s)", err, <-done, errOut)
	}
	t.Cleanup(func() {
		sess.Close()
		if err := <-done; err != nil {
			t.Errorf("serve ended with %v; stderr: %s", err, errOut)
		}
		cancel()
	})
	return sess
}

func noTerminal() (*os.File, error) { return nil, os.ErrNotExist }

// subprocess runs the awf binary, in a session of its own: it has no controlling terminal,
// so nobody can be asked to approve.
func subprocess(e *env, args ...string) *sdk.ClientSession {
	t := e.t
	if awfSkip != "" {
		t.Skip(awfSkip)
	}
	cmd := exec.Command(awfBin, append([]string{"--audit-log", e.audit, "mcp", "serve"}, args...)...)
	cmd.Dir, cmd.Env = e.dir, e.environ()
	var stderr syncBuffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = ptytest.SessionAttr(-1)
	sess, err := newClient().Connect(t.Context(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect to awf mcp serve: %v; stderr: %s", err, stderr.String())
	}
	t.Cleanup(func() {
		if err := sess.Close(); err != nil {
			t.Errorf("awf mcp serve ended with %v; stderr: %s", err, stderr.String())
		}
	})
	return sess
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// callTool calls a tool and returns its text and whether it is an error result.
func callTool(t *testing.T, sess *sdk.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := sess.CallTool(t.Context(), &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("CallTool(%s) = %v", name, err)
	}
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n"), res.IsError
}
