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
}

// lockedWriter serialises the SDK's writes (one Write per message) with the guard's answers,
// so that no two messages interleave on the stream.
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return l.w.Close() }

func newStdioGuard(in io.ReadCloser, out io.WriteCloser) (*stdioGuard, *lockedWriter) {
	lw := &lockedWriter{w: out}
	return &stdioGuard{in: in, r: bufio.NewReaderSize(in, 64<<10), out: lw}, lw
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
func (g *stdioGuard) check(line []byte, tooLong bool) []byte {
	if tooLong {
		return rpcError(nil, codeParseError, "parse error: message longer than 16 MiB")
	}
	if !json.Valid(line) {
		return rpcError(nil, codeParseError, "parse error: the line is not JSON")
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if line = bytes.TrimSpace(line); line[0] != '{' || json.Unmarshal(line, &msg) != nil {
		return rpcError(nil, codeInvalidRequest, "invalid request: a message is one JSON object")
	}
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
