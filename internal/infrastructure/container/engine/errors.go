package engine

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Errors that errors.Is finds in what a Client returns.
var (
	// ErrNotFound: the engine has no such image, container or network (HTTP 404).
	ErrNotFound = errors.New("not found")
	// ErrConflict: the request conflicts with the object's state, such as killing a container
	// that is not running (HTTP 409).
	ErrConflict = errors.New("conflict")
	// ErrConnectionFailed: the engine could not be reached, or it hung up before it answered.
	ErrConnectionFailed = errors.New("docker engine not reachable")
)

// Error is an error answer of the engine: an HTTP status of 400 or more and the engine's
// message. errors.Is matches it against ErrNotFound (404) and ErrConflict (409).
type Error struct {
	// Op says what the client was doing, as in "create container".
	Op string
	// StatusCode is the HTTP status.
	StatusCode int
	// Message is the engine's explanation ("No such image: x"), or the start of a body that
	// is not the engine's JSON.
	Message string
}

// Error reads like "create container: No such image: x (HTTP 404)".
func (e *Error) Error() string {
	return e.Op + ": " + e.Message + " (HTTP " + strconv.Itoa(e.StatusCode) + ")"
}

// Is reports whether target is the sentinel of e's status.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrConflict:
		return e.StatusCode == http.StatusConflict
	}
	return false
}

// readError reads an error answer, at most maxErrorBody bytes of it: the engine sends
// {"message": "..."}; anything else is kept as text.
func readError(op string, resp *http.Response) *Error {
	data, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var body struct {
		Message string `json:"message"`
	}
	msg := ""
	if json.Unmarshal(data, &body) == nil {
		msg = body.Message
	}
	if msg == "" {
		msg = strings.TrimSpace(strings.ToValidUTF8(string(data), "?"))
	}
	if msg == "" {
		msg = http.StatusText(resp.StatusCode)
	}
	return &Error{Op: op, StatusCode: resp.StatusCode, Message: msg}
}
