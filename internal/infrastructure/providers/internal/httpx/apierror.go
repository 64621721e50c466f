package httpx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/awf-dev/awf/internal/domain/fault"
)

// APIError is a refusal by the API: a non-2xx status, or an error object inside a 2xx body or
// a stream. Its kind is Usage for 4xx statuses other than 408 and 429 (a key, model or
// request the user must fix) and Execution otherwise.
type APIError struct {
	// Provider names the adapter, as in "openai".
	Provider string
	// Status is the HTTP status, or for an error inside a body the status it implies; 0 if
	// nothing says.
	Status int
	// Type is the API's error type when it sends one ("rate_limit_error").
	Type string
	// Message is the API's own explanation, redacted and shortened.
	Message string
	// RetryAfter is how long the server asked to wait; 0 if it did not say.
	RetryAfter time.Duration
}

// Error reads like "openai: 401 Unauthorized: Incorrect API key provided".
func (e *APIError) Error() string {
	var b strings.Builder
	b.WriteString(e.Provider)
	b.WriteString(": ")
	if e.Status > 0 {
		fmt.Fprintf(&b, "%d %s", e.Status, statusText(e.Status))
	} else {
		b.WriteString("error in response")
	}
	switch {
	case e.Message != "":
		b.WriteString(": " + e.Message)
	case e.Type != "":
		b.WriteString(": " + e.Type)
	}
	return b.String()
}

// FaultKind classifies the error for fault.KindOf.
func (e *APIError) FaultKind() fault.Kind {
	if e.Status >= 400 && e.Status < 500 && e.Status != http.StatusTooManyRequests && e.Status != http.StatusRequestTimeout {
		return fault.Usage
	}
	return fault.Execution
}

// Temporary reports whether the same request may succeed later: rate limits, overload and
// gateway failures.
func (e *APIError) Temporary() bool {
	switch e.Status {
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout, StatusOverloaded:
		return true
	}
	return false
}

// StatusOverloaded is Anthropic's "overloaded" status, which net/http does not name.
const StatusOverloaded = 529

func statusText(code int) string {
	if code == StatusOverloaded {
		return "Overloaded"
	}
	if t := http.StatusText(code); t != "" {
		return t
	}
	return "status"
}

// ParseError builds the error for a non-2xx response from its body: the message of an
// {"error": {"message", "type"}} object (OpenAI, Anthropic, vLLM), of {"error": "text"}
// (Ollama, llama.cpp), of {"message"} or {"detail"} (FastAPI servers), else the body's first
// line when it is not HTML.
func ParseError(provider string, status int, body []byte) *APIError {
	e := &APIError{Provider: provider, Status: status}
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) != nil {
		e.Message = plainText(body)
		return e
	}
	if len(v.Error) > 0 && string(v.Error) != "null" {
		embedded := ParseEmbedded(provider, v.Error)
		e.Type, e.Message = embedded.Type, embedded.Message
		return e
	}
	e.Type, e.Message = v.Type, shorten(v.Message)
	if e.Message == "" && len(v.Detail) > 0 {
		e.Message = detail(v.Detail)
	}
	return e
}

// ParseEmbedded builds the error for an "error" member found inside a 2xx body or a stream:
// a string, or an object with message, type and perhaps a numeric code taken as the status.
func ParseEmbedded(provider string, raw json.RawMessage) *APIError {
	e := &APIError{Provider: provider}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		e.Message = shorten(s)
		return e
	}
	var o struct {
		Message string          `json:"message"`
		Type    string          `json:"type"`
		Code    json.RawMessage `json:"code"`
	}
	if json.Unmarshal(raw, &o) != nil {
		e.Message = plainText(raw)
		return e
	}
	e.Type, e.Message = o.Type, shorten(o.Message)
	var code int
	if json.Unmarshal(o.Code, &code) == nil && code >= 400 && code < 600 {
		e.Status = code
	}
	return e
}

// EmbeddedError is [ParseEmbedded] for an "error" member that may be missing: nil when raw is
// empty or JSON null, as a body without an error decodes.
func EmbeddedError(provider string, raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return ParseEmbedded(provider, raw)
}

// detail reads FastAPI's "detail": a string, or a list of {"msg"} objects.
func detail(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return shorten(s)
	}
	var list []struct {
		Msg string `json:"msg"`
	}
	if json.Unmarshal(raw, &list) == nil && len(list) > 0 && list[0].Msg != "" {
		return shorten(list[0].Msg)
	}
	return plainText(raw)
}

func plainText(body []byte) string {
	body = bytes.TrimSpace(body)
	if bytes.HasPrefix(body, []byte("<")) {
		return "" // an HTML error page says nothing the status does not
	}
	line, _, _ := bytes.Cut(body, []byte("\n"))
	return shorten(string(line))
}

// shorten keeps an API message to one readable line of at most 300 characters.
func shorten(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= 300 {
		return s
	}
	r := []rune(s)
	return string(r[:300]) + "..."
}
