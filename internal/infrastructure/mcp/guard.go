package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
)

// maxLine bounds one JSON-RPC message on the stdio transport. A longer line is answered with
// a parse error and skipped, never buffered whole.
const maxLine = 16 << 20

// JSON-RPC error codes the guard answers with.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// stdioGuard sits between a client's stream and the SDK's stdio transport, which ends the
// session on a line that is not JSON and answers a request sent before initialize with error
// code 0. JSON-RPC 2.0 wants -32700 (parse error) and -32600 (invalid request) for these, and
// one bad line from a client must not end every later call: the guard answers them itself and
// passes on only what the transport can take.
type stdioGuard struct {
	in          io.ReadCloser
	r           *bufio.Reader
	out         *lockedWriter
	pending     []byte
	initialized bool
	// flight holds the requests passed on and not yet answered: the end of the client's
	// input is passed on only once they are (see inFlight).
	flight *inFlight
}

// lockedWriter serialises the SDK's writes (one Write per message) with the guard's answers,
// so that no two messages interleave on the stream. Each response written settles its
// request in flight.
type lockedWriter struct {
	mu     sync.Mutex
	w      io.WriteCloser
	flight *inFlight
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	n, err := l.w.Write(p)
	l.mu.Unlock()
	if err != nil {
		l.flight.stop()
	} else {
		l.flight.answered(p)
	}
	return n, err
}

func (l *lockedWriter) Close() error { return l.w.Close() }

func newStdioGuard(in io.ReadCloser, out io.WriteCloser) (*stdioGuard, *lockedWriter) {
	flight := newInFlight()
	lw := &lockedWriter{w: out, flight: flight}
	return &stdioGuard{in: in, r: bufio.NewReaderSize(in, 64<<10), out: lw, flight: flight}, lw
}

// Read hands the transport whole lines that are JSON-RPC messages it can take.
func (g *stdioGuard) Read(p []byte) (int, error) {
	for len(g.pending) == 0 {
		line, tooLong, err := g.readLine()
		if len(bytes.TrimSpace(line)) > 0 || tooLong {
			if answer := g.check(line, tooLong); answer != nil {
				if _, werr := g.out.Write(answer); werr != nil {
					return 0, werr
				}
			} else {
				g.pending = append(line, '\n')
			}
		}
		if err != nil && len(g.pending) == 0 {
			if errors.Is(err, io.EOF) {
				g.flight.wait() // the transport ends the session, and its calls, at EOF
			}
			return 0, err
		}
		if err != nil {
			break
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

func (g *stdioGuard) Close() error { return g.in.Close() }

// readLine reads one line without its newline. A line longer than maxLine is read to its end
// and dropped: it comes back empty with tooLong set.
func (g *stdioGuard) readLine() (line []byte, tooLong bool, err error) {
	for {
		chunk, err := g.r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > maxLine {
				line, tooLong = nil, true
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimRight(line, "\r\n"), tooLong, err
	}
}

// check returns the guard's own answer to a line the transport must not see, or nil to pass
// the line on.
func (g *stdioGuard) check(line []byte, tooLong bool) (answer []byte) {
	if tooLong {
		return rpcError(nil, codeParseError, "parse error: message longer than 16 MiB")
	}
	if !json.Valid(line) {
		return rpcError(nil, codeParseError, "parse error: the line is not JSON")
	}
	var msg message
	if line = bytes.TrimSpace(line); line[0] != '{' || json.Unmarshal(line, &msg) != nil {
		return rpcError(nil, codeInvalidRequest, "invalid request: a message is one JSON object")
	}
	defer func() {
		if answer == nil {
			g.flight.passed(msg)
		}
	}()
	switch {
	case msg.Method == "initialize":
		g.initialized = true
	case g.initialized || msg.Method == "" || msg.Method == "ping":
	case len(msg.ID) == 0 || string(msg.ID) == "null":
		return []byte{} // a notification before initialize: nothing to answer, nothing to do
	default:
		return rpcError(msg.ID, codeInvalidRequest, "invalid request: the session is not initialized; send initialize first")
	}
	return nil
}

// rpcError is a JSON-RPC error response line.
func rpcError(id json.RawMessage, code int, msg string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	data, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}})
	return append(data, '\n')
}

// message is what the guard reads of a JSON-RPC message: a request has a method and an id,
// a notification a method only, a response an id only; a cancellation names the request.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		RequestID json.RawMessage `json:"requestId"`
	} `json:"params"`
}

// inFlight is the set of the client's requests the server has not answered yet. A client
// that writes its requests and closes its input (printf ... | awf mcp serve) must still get
// every answer; the SDK's transport ends the session, cancelling its calls, when it reads
// EOF, so the guard holds EOF back until the set is empty, the output has broken, or the
// session was stopped.
type inFlight struct {
	mu      sync.Mutex
	cond    *sync.Cond
	ids     map[string]struct{}
	stopped bool
}

func newInFlight() *inFlight {
	f := &inFlight{ids: map[string]struct{}{}}
	f.cond = sync.NewCond(&f.mu)
	return f
}

// passed notes a message the server will see: a request is in flight until answered; a
// cancelled request will not be answered (MCP: the receiver should not respond).
func (f *inFlight) passed(msg message) {
	switch {
	case msg.Method == "notifications/cancelled":
		f.settle(msg.Params.RequestID)
	case msg.Method != "" && idKey(msg.ID) != "":
		f.mu.Lock()
		f.ids[idKey(msg.ID)] = struct{}{}
		f.mu.Unlock()
	}
}

// answered settles the request a written response answers.
func (f *inFlight) answered(line []byte) {
	var msg message
	if json.Unmarshal(line, &msg) == nil && msg.Method == "" {
		f.settle(msg.ID)
	}
}

func (f *inFlight) settle(id json.RawMessage) {
	key := idKey(id)
	if key == "" {
		return
	}
	f.mu.Lock()
	delete(f.ids, key)
	f.mu.Unlock()
	f.cond.Broadcast()
}

// stop ends every wait: nothing more will be answered (the output broke, the session ended).
func (f *inFlight) stop() {
	f.mu.Lock()
	f.stopped = true
	f.mu.Unlock()
	f.cond.Broadcast()
}

// wait returns once no request is in flight or stop was called.
func (f *inFlight) wait() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.ids) > 0 && !f.stopped {
		f.cond.Wait()
	}
}

// idKey is a request id in one spelling, as the client's and the server's encoders may
// differ (1 and 1.0 are one id, "1" another), or "" for no id or null.
func idKey(id json.RawMessage) string {
	var v any
	if len(id) == 0 || json.Unmarshal(id, &v) != nil || v == nil {
		return ""
	}
	key, _ := json.Marshal(v)
	return string(key)
}
