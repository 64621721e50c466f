package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Transport carries a client's session: NewCommandTransport (a stdio server awf starts),
// NewStreamTransport (a pair of streams) or NewHTTPTransport (streamable HTTP).
type Transport interface {
	// start opens the transport (starts the command).
	start(ctx context.Context) error
	// send writes one message; id is the key of the request it is ("" for a notification or
	// a response).
	send(ctx context.Context, data []byte, id string) error
	// recv returns the next message of the server; an error ends the session (io.EOF: it
	// ended cleanly).
	recv() (incoming, error)
	// setVersion tells the transport the negotiated protocol version.
	setVersion(v string)
	// ready says the handshake is done: the HTTP transport opens its stream of the server's
	// own messages.
	ready()
	// close ends the transport; recv then returns an error.
	close() error
}

// incoming is what a transport received: a message, or the news that the answer to request
// lost will not come (its HTTP response ended without it) because of err.
type incoming struct {
	data []byte
	lost string
	err  error
}

// ClientOptions configure a client session.
type ClientOptions struct {
	// Info names awf to the server.
	Info Implementation
	// ToolListChanged, when set, is called on the session's reading goroutine each time the
	// server says its list of tools changed: it must not block (start a goroutine to list).
	ToolListChanged func()
	Log             *slog.Logger
}

// ClientSession is an initialized session with a server. Safe for concurrent use: calls may
// be in flight together.
type ClientSession struct {
	t    Transport
	opts ClientOptions

	next    atomic.Int64
	mu      sync.Mutex
	pending map[string]chan reply

	done    chan struct{} // closed when reading ended
	readErr error         // why; set before done is closed

	closeOnce sync.Once
	closeErr  error

	version    string
	serverInfo *Implementation
}

type reply struct {
	msg *message
	err error
}

// Connect opens t and performs the handshake: initialize (asking for LatestSessionVersion,
// accepting any version of Versions the server answers), then notifications/initialized.
func Connect(ctx context.Context, t Transport, opts ClientOptions) (*ClientSession, error) {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if err := t.start(ctx); err != nil {
		return nil, err
	}
	s := &ClientSession{t: t, opts: opts, pending: map[string]chan reply{}, done: make(chan struct{})}
	go s.read()
	var res initializeResult
	err := s.call(ctx, "initialize", initializeParams{ProtocolVersion: LatestSessionVersion,
		Capabilities: json.RawMessage(`{}`), ClientInfo: &opts.Info}, &res)
	if err == nil && !slices.Contains(Versions, res.ProtocolVersion) || err == nil && res.ProtocolVersion == Version20260728 {
		err = fmt.Errorf("the server answered with protocol version %q, which awf does not speak", res.ProtocolVersion)
	}
	if err == nil {
		s.version, s.serverInfo = res.ProtocolVersion, res.ServerInfo
		t.setVersion(res.ProtocolVersion)
		err = s.notify(ctx, "notifications/initialized", struct{}{})
	}
	if err == nil {
		t.ready()
	}
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// ProtocolVersion is the version the server chose.
func (s *ClientSession) ProtocolVersion() string { return s.version }

// read dispatches the server's messages until the transport ends.
func (s *ClientSession) read() {
	for {
		in, err := s.t.recv()
		if err != nil {
			s.end(err)
			return
		}
		if in.lost != "" {
			s.deliver(in.lost, reply{err: fmt.Errorf("%w: %v", ErrConnectionClosed, in.err)})
			continue
		}
		m, derr := decode(in.data)
		switch {
		case derr != nil:
			s.opts.Log.Warn("MCP server sent a message that is not JSON-RPC", "error", derr.Message)
			if m != nil && hasID(m.ID) && m.Method != "" {
				go s.respond(m.ID, nil, derr)
			}
		case m.isResponse():
			s.deliver(idKey(m.ID), reply{msg: m})
		case m.isRequest():
			go s.answer(m)
		case m.Method == "notifications/tools/list_changed":
			if s.opts.ToolListChanged != nil {
				s.opts.ToolListChanged()
			}
		}
	}
}

// answer answers a request of the server: ping, and method not found for the rest (awf
// declares no client capability: no sampling, roots or elicitation).
func (s *ClientSession) answer(m *message) {
	if m.Method == "ping" {
		s.respond(m.ID, struct{}{}, nil)
		return
	}
	s.respond(m.ID, nil, &Error{Code: CodeMethodNotFound, Message: fmt.Sprintf("method %q is not supported by this client", m.Method)})
}

// notifyTimeout bounds sending what no caller waits for (a cancellation, an answer to the
// server's request): over HTTP, a POST to a server that does not answer.
const notifyTimeout = 10 * time.Second

func (s *ClientSession) respond(id json.RawMessage, result any, rerr *Error) {
	ctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
	defer cancel()
	if err := s.t.send(ctx, encodeResponse(id, result, rerr), ""); err != nil {
		s.opts.Log.Debug("answer to the MCP server not sent", "error", err)
	}
}

func (s *ClientSession) deliver(key string, r reply) {
	s.mu.Lock()
	ch, ok := s.pending[key]
	delete(s.pending, key)
	s.mu.Unlock()
	if ok {
		ch <- r
	}
}

// end records why reading stopped and fails the calls still waiting.
func (s *ClientSession) end(err error) {
	if errors.Is(err, io.EOF) {
		err = nil
	}
	s.mu.Lock()
	s.readErr = err
	pending := s.pending
	s.pending = map[string]chan reply{}
	s.mu.Unlock()
	close(s.done)
	for _, ch := range pending {
		ch <- reply{err: s.closedErr()}
	}
}

func (s *ClientSession) closedErr() error {
	if s.readErr != nil {
		return fmt.Errorf("%w: %v", ErrConnectionClosed, s.readErr)
	}
	return ErrConnectionClosed
}

// call sends a request and decodes its result into out. It returns when the answer comes,
// the session ends or ctx ends (then it tells the server with notifications/cancelled).
func (s *ClientSession) call(ctx context.Context, method string, params, out any) error {
	key := strconv.FormatInt(s.next.Add(1), 10)
	data, err := encodeCall(json.RawMessage(key), method, params)
	if err != nil {
		return err
	}
	ch := make(chan reply, 1)
	s.mu.Lock()
	select {
	case <-s.done:
		s.mu.Unlock()
		return s.closedErr()
	default:
	}
	s.pending[key] = ch
	s.mu.Unlock()
	forget := func() {
		s.mu.Lock()
		delete(s.pending, key)
		s.mu.Unlock()
	}
	// giveUp tells the server, which may have the request, that its answer is not wanted.
	giveUp := func() error {
		forget()
		go func() {
			nctx, cancel := context.WithTimeout(context.Background(), notifyTimeout)
			defer cancel()
			if err := s.notify(nctx, "notifications/cancelled",
				map[string]any{"requestId": json.RawMessage(key), "reason": ctx.Err().Error()}); err != nil {
				s.opts.Log.Debug("notifications/cancelled not sent", "method", method, "error", err)
			}
		}()
		return ctx.Err()
	}
	if err := s.t.send(ctx, data, key); err != nil {
		if ctx.Err() != nil {
			return giveUp()
		}
		forget()
		return fmt.Errorf("calling %q: %w", method, err)
	}
	var r reply
	select {
	case r = <-ch:
	case <-ctx.Done():
		return giveUp()
	}
	switch {
	case r.err != nil:
		return fmt.Errorf("calling %q: %w", method, r.err)
	case r.msg.Error != nil:
		return fmt.Errorf("calling %q: %w", method, r.msg.Error)
	}
	if err := json.Unmarshal(r.msg.Result, out); err != nil {
		return fmt.Errorf("calling %q: the server's result: %w", method, err)
	}
	return nil
}

func (s *ClientSession) notify(ctx context.Context, method string, params any) error {
	data, err := encodeCall(nil, method, params)
	if err != nil {
		return err
	}
	return s.t.send(ctx, data, "")
}

// maxPages bounds the pages of one listing, against a server whose cursors never end.
const maxPages = 10_000

// ListTools returns every tool the server lists, following its cursors.
func (s *ClientSession) ListTools(ctx context.Context) ([]*Tool, error) {
	var tools []*Tool
	cursor := ""
	seen := map[string]bool{}
	for range maxPages {
		var params any = struct{}{}
		if cursor != "" {
			params = map[string]string{"cursor": cursor}
		}
		var res listToolsResult
		if err := s.call(ctx, "tools/list", params, &res); err != nil {
			return nil, err
		}
		for _, t := range res.Tools {
			if t != nil {
				tools = append(tools, t)
			}
		}
		if res.NextCursor == "" {
			return tools, nil
		}
		if seen[res.NextCursor] {
			return nil, fmt.Errorf("listing tools: the server sent cursor %q twice", res.NextCursor)
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
	return nil, fmt.Errorf("listing tools: more than %d pages", maxPages)
}

// CallTool calls the tool name with args (a JSON object, or nil for none).
func (s *ClientSession) CallTool(ctx context.Context, name string, args any) (*CallToolResult, error) {
	var raw json.RawMessage
	if args != nil {
		data, err := json.Marshal(args)
		if err != nil {
			return nil, fmt.Errorf("calling %q: the arguments: %w", name, err)
		}
		raw = data
	}
	var res CallToolResult
	if err := s.call(ctx, "tools/call", callToolParams{Name: name, Arguments: raw}, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Ping asks the server to answer.
func (s *ClientSession) Ping(ctx context.Context) error {
	var res json.RawMessage
	return s.call(ctx, "ping", struct{}{}, &res)
}

// Wait returns when the session has ended: the error that ended it, or nil when the server
// closed its side cleanly.
func (s *ClientSession) Wait() error {
	<-s.done
	return s.readErr
}

// Done is closed when the session has ended.
func (s *ClientSession) Done() <-chan struct{} { return s.done }

// Close ends the session (for a command, stops it: see NewCommandTransport) and waits for
// its reading to stop. It returns the transport's error: a command's exit status. Later
// calls return the same.
func (s *ClientSession) Close() error {
	s.closeOnce.Do(func() {
		s.closeErr = s.t.close()
		<-s.done
	})
	return s.closeErr
}
