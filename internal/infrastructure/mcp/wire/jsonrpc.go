package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// JSON-RPC 2.0 error codes, and MCP's.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeUnsupportedProtocolVersion answers a stateless request (2026-07-28) of a version
	// the server does not speak; its data lists the supported ones.
	CodeUnsupportedProtocolVersion = -32022
)

// MaxMessage bounds one message: a longer stdio line is answered with a parse error and
// skipped (never buffered whole), a longer HTTP body is refused.
const MaxMessage = 16 << 20

// Error is a JSON-RPC error object: what a peer answered, or what this package answers.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string {
	return e.Message
}

// ErrConnectionClosed is the error of a call whose connection ended before its answer.
var ErrConnectionClosed = errors.New("connection closed")

// message is one JSON-RPC 2.0 message. A request has a method and an id, a notification a
// method only, a response an id and a result or an error.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
}

func (m *message) isRequest() bool      { return m.Method != "" && hasID(m.ID) }
func (m *message) isNotification() bool { return m.Method != "" && !hasID(m.ID) }
func (m *message) isResponse() bool     { return m.Method == "" && hasID(m.ID) }

func hasID(id json.RawMessage) bool { return len(id) > 0 && string(id) != "null" }

// decode reads one message. It never panics: input that is not JSON is a parse error; JSON
// that is not one message object (an array: a batch, which MCP dropped in 2025-06-18 and awf
// never sends; an id that is not a string or a number; a method that is not a string; no
// jsonrpc "2.0") is an invalid request, with the message's id when it has a usable one.
// Unknown fields are ignored.
func decode(data []byte) (*message, *Error) {
	data = bytes.TrimSpace(data)
	if !json.Valid(data) {
		return nil, &Error{Code: CodeParseError, Message: "parse error: not JSON"}
	}
	if len(data) == 0 || data[0] != '{' {
		return nil, &Error{Code: CodeInvalidRequest, Message: "invalid request: a message is one JSON object (batches are not supported)"}
	}
	var raw struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Params  json.RawMessage `json:"params"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, &Error{Code: CodeInvalidRequest, Message: "invalid request: " + err.Error()}
	}
	m := &message{}
	if hasID(raw.ID) {
		if !validID(raw.ID) {
			return nil, &Error{Code: CodeInvalidRequest, Message: "invalid request: an id is a string or a number"}
		}
		m.ID = raw.ID
	}
	invalid := func(why string) (*message, *Error) {
		return m, &Error{Code: CodeInvalidRequest, Message: "invalid request: " + why}
	}
	if string(raw.JSONRPC) != `"2.0"` {
		return invalid(`jsonrpc must be "2.0"`)
	}
	if len(raw.Method) > 0 && string(raw.Method) != "null" {
		if json.Unmarshal(raw.Method, &m.Method) != nil || m.Method == "" {
			return invalid("method must be a non-empty string")
		}
	}
	if len(raw.Params) > 0 && string(raw.Params) != "null" {
		if c := raw.Params[0]; c != '{' && c != '[' {
			return invalid("params must be an object or an array")
		}
		m.Params = raw.Params
	}
	if m.Method != "" {
		return m, nil
	}
	if !hasID(m.ID) {
		return invalid("a message needs a method or an id")
	}
	if len(raw.Error) > 0 && string(raw.Error) != "null" {
		m.Error = &Error{}
		if json.Unmarshal(raw.Error, m.Error) != nil {
			m.Error = &Error{Code: CodeInternalError, Message: "the peer sent an error that is not a JSON-RPC error object"}
		}
		return m, nil
	}
	if len(raw.Result) == 0 {
		return invalid("a response needs a result or an error")
	}
	m.Result = raw.Result
	return m, nil
}

// validID reports whether id is a JSON string or number.
func validID(id json.RawMessage) bool {
	switch c := id[0]; {
	case c == '"':
		return true
	case c == '-' || c >= '0' && c <= '9':
		return true
	}
	return false
}

// idKey is an id in one spelling, as two encoders may differ (1 and 1.0 are one id, "1"
// another), or "" for no id.
func idKey(id json.RawMessage) string {
	if !hasID(id) {
		return ""
	}
	if id[0] == '"' {
		var s string
		if json.Unmarshal(id, &s) != nil {
			return ""
		}
		return strconv.Quote(s)
	}
	f, err := strconv.ParseFloat(string(id), 64)
	if err != nil {
		return string(id)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// encodeResponse is the response to the request id: result, or err when it is not nil.
func encodeResponse(id json.RawMessage, result any, rerr *Error) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	m := message{JSONRPC: "2.0", ID: id}
	if rerr != nil {
		m.Error = rerr
	} else {
		data, err := json.Marshal(result)
		if err != nil {
			m.Error = &Error{Code: CodeInternalError, Message: fmt.Sprintf("internal error: the result cannot be encoded: %v", err)}
		} else {
			m.Result = data
		}
	}
	data, _ := json.Marshal(m)
	return data
}

// encodeCall is a request (id set) or a notification.
func encodeCall(id json.RawMessage, method string, params any) ([]byte, error) {
	m := message{JSONRPC: "2.0", ID: id, Method: method}
	if params != nil {
		data, err := json.Marshal(params)
		if err != nil {
			return nil, fmt.Errorf("encode the params of %s: %w", method, err)
		}
		m.Params = data
	}
	return json.Marshal(m)
}
