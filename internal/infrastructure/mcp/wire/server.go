package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
)

// Server serves tools to MCP clients: over a pair of streams (ServeStream: stdio) or
// streamable HTTP (Handler). It lists Tools and runs each call through Call; it asks
// clients nothing. Build it once; it is safe for concurrent use.
type Server struct {
	// Info names the server to clients.
	Info Implementation
	// Tools are listed in one page, in this order.
	Tools []*Tool
	// Call runs one tools/call. A *Error it returns is answered as that JSON-RPC error (an
	// unknown tool: CodeInvalidParams); any other error as an internal error. A tool's own
	// failure is a result with IsError, not an error.
	Call func(ctx context.Context, req *CallRequest) (*CallToolResult, error)
	Log  *slog.Logger
}

// CallRequest is one tools/call.
type CallRequest struct {
	Name      string
	Arguments json.RawMessage
	// Client is how the client named itself: in initialize on a session, in the request's
	// _meta in the stateless protocol; nil when it did not.
	Client *Implementation
}

// session is the state of one client: a stdio stream, or one stateless HTTP request.
type session struct {
	srv *Server
	// stateful sessions (stdio) need initialize before anything but ping.
	stateful bool

	mu          sync.Mutex
	initialized bool
	client      *Implementation
}

// handle answers one request.
func (ss *session) handle(ctx context.Context, m *message) (any, *Error) {
	meta, perr := requestMeta(m)
	if perr != nil {
		return nil, perr
	}
	if meta.stateless {
		if !supported(meta.version) {
			data, _ := json.Marshal(map[string]any{"supported": Versions, "requested": meta.version})
			return nil, &Error{Code: CodeUnsupportedProtocolVersion, Message: "unsupported protocol version", Data: data}
		}
		res, rerr := ss.dispatch(ctx, m, meta)
		if rerr != nil {
			return nil, rerr
		}
		return ss.statelessResult(res), nil
	}
	return ss.dispatch(ctx, m, meta)
}

func (ss *session) dispatch(ctx context.Context, m *message, meta reqMeta) (any, *Error) {
	switch m.Method {
	case "initialize", "ping":
		if meta.stateless {
			return nil, &Error{Code: CodeMethodNotFound, Message: fmt.Sprintf("%q is not supported in protocol version %s", m.Method, meta.version)}
		}
		if m.Method == "ping" {
			return struct{}{}, nil
		}
		return ss.initialize(m.Params)
	case "server/discover":
		if !meta.stateless {
			return nil, &Error{Code: CodeMethodNotFound, Message: fmt.Sprintf("%q is only supported in protocol version %s and later", m.Method, Version20260728)}
		}
		return map[string]any{"supportedVersions": Versions, "capabilities": json.RawMessage(capabilities), "ttlMs": 0}, nil
	case "tools/list":
		var p struct {
			Cursor string `json:"cursor"`
		}
		if len(m.Params) > 0 && json.Unmarshal(m.Params, &p) != nil {
			return nil, &Error{Code: CodeInvalidParams, Message: "invalid params of tools/list"}
		}
		if p.Cursor != "" {
			return nil, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("invalid cursor %q", p.Cursor)}
		}
		tools := ss.srv.Tools
		if tools == nil {
			tools = []*Tool{}
		}
		return map[string]any{"tools": tools}, nil
	case "tools/call":
		return ss.call(ctx, m.Params, meta)
	}
	return nil, &Error{Code: CodeMethodNotFound, Message: fmt.Sprintf("method %q not found", m.Method)}
}

// capabilities are the server's: tools, whose list does not change.
const capabilities = `{"tools":{}}`

// initialize negotiates the protocol version: the client's when this package speaks it (and
// it opens a session: not 2026-07-28), else LatestSessionVersion, for the client to accept
// or leave.
func (ss *session) initialize(params json.RawMessage) (any, *Error) {
	var p initializeParams
	if len(params) == 0 || json.Unmarshal(params, &p) != nil {
		return nil, &Error{Code: CodeInvalidParams, Message: "invalid params of initialize"}
	}
	version := LatestSessionVersion
	if supported(p.ProtocolVersion) && p.ProtocolVersion != Version20260728 {
		version = p.ProtocolVersion
	}
	ss.mu.Lock()
	ss.client = p.ClientInfo
	ss.mu.Unlock()
	return initializeResult{ProtocolVersion: version, Capabilities: json.RawMessage(capabilities), ServerInfo: &ss.srv.Info}, nil
}

func mustJSON(v any) json.RawMessage {
	data, _ := json.Marshal(v)
	return data
}

func (ss *session) call(ctx context.Context, params json.RawMessage, meta reqMeta) (any, *Error) {
	var p callToolParams
	if len(params) == 0 || json.Unmarshal(params, &p) != nil || p.Name == "" {
		return nil, &Error{Code: CodeInvalidParams, Message: "invalid params of tools/call: it needs a tool name"}
	}
	client := meta.client
	if client == nil {
		ss.mu.Lock()
		client = ss.client
		ss.mu.Unlock()
	}
	res, err := ss.srv.Call(ctx, &CallRequest{Name: p.Name, Arguments: p.Arguments, Client: client})
	var rerr *Error
	switch {
	case errors.As(err, &rerr):
		return nil, rerr
	case err != nil:
		return nil, &Error{Code: CodeInternalError, Message: err.Error()}
	case res == nil:
		return nil, &Error{Code: CodeInternalError, Message: "the tool returned no result"}
	}
	if res.Content == nil {
		res.Content = []Content{}
	}
	return res, nil
}

// statelessResult adds to a result what the stateless protocol wants in each: its type
// (complete) and the server's name.
func (ss *session) statelessResult(res any) any {
	data, err := json.Marshal(res)
	var obj map[string]json.RawMessage
	if err != nil || json.Unmarshal(data, &obj) != nil {
		return res
	}
	obj["resultType"] = json.RawMessage(`"complete"`)
	obj["_meta"] = mustJSON(map[string]any{metaServerInfo: ss.srv.Info})
	return obj
}

// reqMeta is what a request's _meta says of the stateless protocol (2026-07-28).
type reqMeta struct {
	stateless bool
	version   string
	client    *Implementation
}

// requestMeta reads a request's _meta: a protocol version of 2026-07-28 or later makes it a
// stateless request, which must then carry the client's capabilities.
func requestMeta(m *message) (reqMeta, *Error) {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if !m.isRequest() || len(m.Params) == 0 || m.Params[0] != '{' || json.Unmarshal(m.Params, &p) != nil {
		return reqMeta{}, nil
	}
	var version string
	if json.Unmarshal(p.Meta[metaProtocolVersion], &version) != nil || version < Version20260728 {
		return reqMeta{}, nil
	}
	meta := reqMeta{stateless: true, version: version}
	if raw, ok := p.Meta[metaClientInfo]; ok {
		if json.Unmarshal(raw, &meta.client) != nil {
			return reqMeta{}, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("invalid _meta field %q", metaClientInfo)}
		}
	}
	var caps map[string]json.RawMessage
	if raw, ok := p.Meta[metaClientCapabilities]; !ok || json.Unmarshal(raw, &caps) != nil || caps == nil {
		return reqMeta{}, &Error{Code: CodeInvalidParams, Message: fmt.Sprintf("missing or invalid _meta field %q", metaClientCapabilities)}
	}
	return meta, nil
}

// ServeStream serves one client over a pair of streams, one JSON-RPC message per line (the
// stdio transport when they are standard input and output), until the client closes its
// input or ctx ends. Nothing else may write to out. A line that is not JSON (or longer than
// MaxMessage) is answered with a parse error (-32700, id null), one that is not a message
// object with an invalid request (-32600), a request sent before initialize with -32600 and
// its id (a notification before it is dropped); the session goes on. Requests run
// concurrently; notifications/cancelled cancels one, which is then not answered. When the
// client closes its input, the requests in flight are answered before ServeStream returns,
// unless cancelled, ctx ends or out breaks. It returns an error only when reading in fails.
func (s *Server) ServeStream(ctx context.Context, in io.Reader, out io.Writer) error {
	ss := &session{srv: s, stateful: true}
	st := &stream{ss: ss, out: &lockedWriter{w: out}, flight: map[string]context.CancelFunc{}}
	st.cond = sync.NewCond(&st.mu)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(ctx, st.stop)()

	type line struct {
		data    []byte
		tooLong bool
		err     error
	}
	lines := make(chan line)
	go func() {
		r := newLineReader(in)
		for {
			data, tooLong, err := r.next()
			select {
			case lines <- line{data, tooLong, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		var l line
		select {
		case l = <-lines:
		case <-ctx.Done():
			return nil
		}
		if len(l.data) > 0 || l.tooLong {
			st.receive(ctx, l.data, l.tooLong)
		}
		if l.err != nil {
			if !errors.Is(l.err, io.EOF) {
				if ctx.Err() != nil {
					return nil
				}
				return l.err
			}
			st.wait()
			return nil
		}
	}
}

// stream is a stdio session: its output and the requests in flight.
type stream struct {
	ss  *session
	out *lockedWriter

	mu      sync.Mutex
	cond    *sync.Cond
	flight  map[string]context.CancelFunc
	stopped bool
}

// receive acts on one line of the client.
func (st *stream) receive(ctx context.Context, data []byte, tooLong bool) {
	if tooLong {
		st.write(encodeResponse(nil, nil, &Error{Code: CodeParseError, Message: "parse error: message longer than 16 MiB"}))
		return
	}
	m, derr := decode(data)
	if derr != nil {
		if derr.Code == CodeParseError {
			derr.Message = "parse error: the line is not JSON"
		}
		var id json.RawMessage
		if m != nil && m.Method != "" {
			id = m.ID
		}
		st.write(encodeResponse(id, nil, derr))
		return
	}
	ss := st.ss
	ss.mu.Lock()
	switch {
	case m.Method == "initialize":
		ss.initialized = true
	case ss.initialized || m.Method == "" || m.Method == "ping":
	case m.isNotification():
		ss.mu.Unlock()
		return // before initialize: nothing to answer, nothing to do
	default:
		ss.mu.Unlock()
		st.write(encodeResponse(m.ID, nil, &Error{Code: CodeInvalidRequest,
			Message: "invalid request: the session is not initialized; send initialize first"}))
		return
	}
	ss.mu.Unlock()
	switch {
	case m.Method == "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			st.settle(idKey(p.RequestID), true)
		}
	case m.isRequest():
		st.start(ctx, m)
	}
	// Other notifications (initialized, progress) and responses (awf sends no requests)
	// need nothing.
}

// start runs a request on its own goroutine.
func (st *stream) start(ctx context.Context, m *message) {
	key := idKey(m.ID)
	ctx, cancel := context.WithCancel(ctx)
	st.mu.Lock()
	if _, dup := st.flight[key]; dup {
		st.mu.Unlock()
		cancel()
		st.write(encodeResponse(m.ID, nil, &Error{Code: CodeInvalidRequest, Message: "invalid request: the id of a request in flight"}))
		return
	}
	st.flight[key] = cancel
	st.mu.Unlock()
	go func() {
		defer cancel()
		res, rerr := st.ss.handle(ctx, m)
		// Answered, then out of flight: the end of the input waits for the answer's write.
		if st.inFlight(key) {
			st.write(encodeResponse(m.ID, res, rerr))
		}
		st.settle(key, false)
	}()
}

// inFlight reports whether a request is still to be answered (the client did not cancel it).
func (st *stream) inFlight(key string) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	_, ok := st.flight[key]
	return ok
}

// settle takes a request out of flight, cancelling it when the client did.
func (st *stream) settle(key string, cancelled bool) {
	st.mu.Lock()
	cancel, ok := st.flight[key]
	delete(st.flight, key)
	st.mu.Unlock()
	if ok && cancelled {
		cancel()
	}
	st.cond.Broadcast()
}

func (st *stream) write(data []byte) {
	if err := st.out.writeLine(data); err != nil {
		st.ss.srv.log().Debug("MCP client's stream closed", "error", err)
		st.stop()
	}
}

// stop ends every wait: nothing more will be answered.
func (st *stream) stop() {
	st.mu.Lock()
	st.stopped = true
	st.mu.Unlock()
	st.cond.Broadcast()
}

// wait returns once no request is in flight or stop was called.
func (st *stream) wait() {
	st.mu.Lock()
	defer st.mu.Unlock()
	for len(st.flight) > 0 && !st.stopped {
		st.cond.Wait()
	}
}

func (s *Server) log() *slog.Logger {
	if s.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Log
}
