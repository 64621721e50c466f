package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/workflow"
	"github.com/awf-dev/awf/internal/infrastructure/mcp/wire"
)

// stopGrace is how long a stdio server has to exit once its standard input is closed, and
// then once it is sent SIGTERM, before it is killed.
const stopGrace = 2 * time.Second

// conn is the session with one MCP server: started once, used by every call of the run,
// closed at the end. A server that stops (its process exits, its HTTP endpoint goes away) is
// not restarted: every later call is an error result saying why it stopped. Safe for
// concurrent use.
type conn struct {
	name string
	spec workflow.MCPServer
	cfg  *SourceConfig

	// onListChanged, when set before start, is called (on its own goroutine) each time the
	// server says its list of tools changed (notifications/tools/list_changed).
	onListChanged func()

	mu      sync.Mutex
	sess    *wire.ClientSession
	cmd     *exec.Cmd
	stderr  *tail
	done    chan struct{} // closed when the session has ended
	endErr  error         // why it ended; set before done is closed
	closing bool
}

func newConn(name string, spec workflow.MCPServer, cfg *SourceConfig) *conn {
	return &conn{name: name, spec: spec, cfg: cfg, stderr: &tail{max: 4 << 10}, done: make(chan struct{})}
}

// start connects to the server: runs its command (stdio) or opens its URL (streamable HTTP)
// and performs the MCP handshake within ctx.
func (c *conn) start(ctx context.Context) error {
	opts := wire.ClientOptions{Info: wire.Implementation{Name: "awf", Version: c.cfg.Version}, Log: c.cfg.Log}
	if c.onListChanged != nil {
		opts.ToolListChanged = func() {
			go c.onListChanged() // it lists the tools: not on the session's reading goroutine
		}
	}
	sess, err := wire.Connect(ctx, c.transport(), opts)
	if err != nil {
		c.stopProcess()
		return fault.Wrap(fault.Execution, fmt.Errorf("start MCP server %q: %w%s", c.name, err, c.stderr.note()))
	}
	c.mu.Lock()
	c.sess = sess
	c.mu.Unlock()
	go c.watch(sess)
	return nil
}

// transport builds the command or HTTP transport of the server's spec.
func (c *conn) transport() wire.Transport {
	if c.spec.URL != "" {
		client := c.cfg.HTTPClient
		if client == nil {
			client = &http.Client{Transport: &http.Transport{Proxy: nil}}
		}
		return wire.NewHTTPTransport(expand(c.spec.URL, c.cfg.Environ), client)
	}
	args := make([]string, len(c.spec.Args))
	for i, a := range c.spec.Args {
		args[i] = expand(a, c.cfg.Environ)
	}
	cmd := exec.Command(expand(c.spec.Command, c.cfg.Environ), args...)
	cmd.Dir = c.cfg.Dir
	cmd.Env = c.environ()
	cmd.Stderr = c.stderr
	cmd.WaitDelay = stopGrace
	ownGroup(cmd)
	c.cmd = cmd
	return wire.NewCommandTransport(cmd, stopGrace)
}

// environ is the server's environment: the base environment with the spec's env: entries
// added, their ${VAR} references expanded from the base environment.
func (c *conn) environ() []string {
	base := c.cfg.Environ
	if base == nil {
		base = os.Environ()
	}
	env := slices.Clone(base)
	keys := make([]string, 0, len(c.spec.Env))
	for k := range c.spec.Env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, k+"=") })
		env = append(env, k+"="+expand(c.spec.Env[k], base))
	}
	return env
}

// expand replaces ${NAME} and $NAME with their values in environ; unset names become "".
func expand(s string, environ []string) string {
	if !strings.Contains(s, "$") {
		return s
	}
	if environ == nil {
		environ = os.Environ()
	}
	return os.Expand(s, func(name string) string {
		for _, kv := range slices.Backward(environ) {
			if k, v, ok := strings.Cut(kv, "="); ok && k == name {
				return v
			}
		}
		return ""
	})
}

// watch waits for the session to end and records why.
func (c *conn) watch(sess *wire.ClientSession) {
	err := sess.Wait()
	c.mu.Lock()
	closing := c.closing
	c.mu.Unlock()
	if !closing {
		// The server went away by itself; closing collects its exit status.
		if cerr := sess.Close(); cerr != nil {
			err = cerr
		}
		c.stopProcess()
	}
	if err == nil || errors.Is(err, wire.ErrConnectionClosed) {
		err = errors.New("the connection closed")
	}
	c.endErr = fmt.Errorf("MCP server %q stopped (%w)%s", c.name, err, c.stderr.note())
	if closing {
		c.cfg.Log.Debug("MCP server stopped", "server", c.name)
	} else {
		c.cfg.Log.Warn("MCP server stopped by itself", "server", c.name, "error", c.endErr)
	}
	close(c.done)
}

// session returns the live session, or the reason there is none.
func (c *conn) session() (*wire.ClientSession, error) {
	select {
	case <-c.done:
		return nil, c.endErr
	default:
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sess == nil {
		return nil, fmt.Errorf("MCP server %q is not running", c.name)
	}
	return c.sess, nil
}

// list returns every tool the server lists, following pagination.
func (c *conn) list(ctx context.Context) ([]*wire.Tool, error) {
	sess, err := c.session()
	if err != nil {
		return nil, err
	}
	tools, err := sess.ListTools(ctx)
	if err != nil {
		return nil, fault.Wrap(fault.Execution, fmt.Errorf("list the tools of MCP server %q: %w%s", c.name, err, c.stderr.note()))
	}
	return tools, nil
}

// call runs one tool call. It returns when the server answers, ctx ends or the server stops,
// whichever comes first: a server that dies mid-call never leaves the caller waiting.
func (c *conn) call(ctx context.Context, remote string, args map[string]any) (*wire.CallToolResult, error) {
	sess, err := c.session()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		res *wire.CallToolResult
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		res, err := sess.CallTool(ctx, remote, args)
		ch <- answer{res, err}
	}()
	select {
	case a := <-ch:
		if a.err != nil && c.cmd != nil && connectionLost(a.err) {
			// The session ended under the call: wait briefly for the reason (the exit
			// status and the server's last words) rather than report a bare EOF. (Over HTTP
			// a broken answer does not end the session: nothing to wait for.)
			timer := time.NewTimer(stopGrace)
			defer timer.Stop()
			select {
			case <-c.done:
				return nil, fmt.Errorf("%w during the call", c.endErr)
			case <-timer.C:
			}
		}
		return a.res, a.err
	case <-c.done:
		return nil, fmt.Errorf("%w during the call", c.endErr)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// connectionLost reports errors that mean the session ended, not that the server refused
// the call.
func connectionLost(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, wire.ErrConnectionClosed) ||
		strings.Contains(err.Error(), "EOF") || strings.Contains(err.Error(), "client is closing") ||
		strings.Contains(err.Error(), "connection closed")
}

// close ends the session and stops the server's process (and what it left in its process
// group). It waits for the session to end.
func (c *conn) close() error {
	c.mu.Lock()
	sess := c.sess
	c.closing = true
	c.mu.Unlock()
	if sess == nil {
		c.stopProcess()
		return nil
	}
	err := sess.Close()
	<-c.done
	c.stopProcess()
	if err != nil && c.cmd != nil && !isExitAfterClose(err) {
		return fmt.Errorf("stop MCP server %q: %w", c.name, err)
	}
	if err != nil {
		// An exit status once asked to stop, or an HTTP server already gone: nothing is
		// left running.
		c.cfg.Log.Debug("MCP server stopped with an error", "server", c.name, "error", err)
	}
	return nil
}

// isExitAfterClose reports errors that only say the server exited once asked to: a signal
// exit after SIGTERM, or a non-zero status some servers use on end of input.
func isExitAfterClose(err error) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit)
}

// stopProcess kills what is left of a stdio server's process group.
func (c *conn) stopProcess() {
	if c.cmd != nil && c.cmd.Process != nil {
		killGroup(c.cmd.Process.Pid)
	}
}

// tail keeps the last max bytes written to it: a server's standard error, quoted when the
// server fails. Safe for concurrent use.
type tail struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
	}
	return len(p), nil
}

// note is ": stderr: <last lines>" or "" when the server wrote nothing.
func (t *tail) note() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(strings.ToValidUTF8(string(t.buf), "?"))
	if s == "" {
		return ""
	}
	return "; its stderr ends with: " + s
}
