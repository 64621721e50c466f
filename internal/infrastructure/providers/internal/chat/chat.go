// Package chat holds what the HTTP provider adapters share above the transport: their Config
// and the Chat call around each adapter's own wire format ([Endpoint]); turning tool-call
// arguments in any shape a server sends into JSON object text, ids for calls that came without
// one, provider-neutral finish reasons, the checks on model, key and options, and the bookkeeping
// of a streamed reply. Of the providers' wire formats it holds only what two of them share
// to the letter (the function-tool declaration).
package chat

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/ports"
	"github.com/awf-dev/awf/internal/domain/state"
)

// Finish reasons reported in ports.ChatResponse, whatever the provider called them.
const (
	FinishStop          = ports.FinishStop
	FinishToolCalls     = ports.FinishToolCalls
	FinishLength        = ports.FinishLength
	FinishContentFilter = ports.FinishContentFilter
	FinishRefusal       = ports.FinishRefusal
)

// Finish settles the reason a reply ended: a reply carrying calls ended for tool_calls even when
// the server said "stop" or nothing, and a reply without calls or reason ended with "stop".
// Other reasons pass through.
func Finish(reason string, hasCalls bool) string {
	switch {
	case hasCalls && (reason == "" || reason == FinishStop):
		return FinishToolCalls
	case reason == "":
		return FinishStop
	}
	return reason
}

// Arguments turns a tool call's arguments as a server sent them into JSON object text: an
// object stays itself (compacted), a JSON string is read as text (see [ArgumentsText]), and
// null or nothing becomes "{}".
func Arguments(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "{}"
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return string(raw)
		}
		return ArgumentsText(s)
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// ArgumentsText settles arguments sent as text: empty text is "{}", an object encoded twice
// (a JSON string holding the object's text) is unwrapped, and anything else is returned as
// sent: an object, or text that is not one, which the agent loop rejects back to the model.
func ArgumentsText(s string) string {
	t := strings.TrimSpace(s)
	if t == "" {
		return "{}"
	}
	if t[0] == '"' {
		var inner string
		if json.Unmarshal([]byte(t), &inner) == nil {
			inner = strings.TrimSpace(inner)
			if strings.HasPrefix(inner, "{") && json.Valid([]byte(inner)) {
				return inner
			}
		}
	}
	return t
}

// Object returns arguments text as a JSON object for APIs that take the arguments as an object
// (Anthropic's input, Ollama's arguments). Text that is not an object (only a model of another
// provider can have produced it) is sent as "{}".
func Object(args string) json.RawMessage {
	t := strings.TrimSpace(args)
	if strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	return json.RawMessage("{}")
}

// Schema returns a tool's parameters schema, or an empty object schema when the tool has none:
// every API wants one.
func Schema(raw json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return raw
}

// FunctionTool is a tool declared as OpenAI's API does and Ollama's copies:
// {"type": "function", "function": {"name", "description", "parameters"}}.
type FunctionTool struct {
	Type     string       `json:"type"`
	Function FunctionDecl `json:"function"`
}

// FunctionDecl is the function a [FunctionTool] declares.
type FunctionDecl struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// FunctionTools declares tools as [FunctionTool]s, each with a parameters schema ([Schema]).
func FunctionTools(in []ports.ToolSchema) []FunctionTool {
	out := make([]FunctionTool, 0, len(in))
	for _, t := range in {
		out = append(out, FunctionTool{Type: "function", Function: FunctionDecl{Name: t.Name, Description: t.Description, Parameters: Schema(t.Parameters)}})
	}
	return out
}

// CountCalls counts the tool calls already in a conversation, so that ids generated for a new
// reply's calls ([CallID]) never repeat an earlier one.
func CountCalls(msgs []state.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.ToolCalls)
	}
	return n
}

// CallID is the id given to the n-th call (counted from 1) of a conversation when the server
// sent none: "call_3". Deterministic, so recorded and replayed runs agree.
func CallID(n int) string { return "call_" + strconv.Itoa(n) }

// ToolNames maps the ids of the calls in a conversation to the tools they called, for APIs
// whose tool results name the tool rather than the call.
func ToolNames(msgs []state.Message) map[string]string {
	names := map[string]string{}
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Name
		}
	}
	return names
}

// Model picks the model: the request's, else the configured one. None is a Usage error.
func Model(provider, requested, configured string) (string, error) {
	if requested != "" {
		return requested, nil
	}
	if configured != "" {
		return configured, nil
	}
	return "", fault.New(fault.Usage, "%s: no model: use --model, or set model: in the provider's definition or options.model in the step", provider)
}

// Key checks an API key read from the environment variable env. Missing is a Usage error naming
// the variable; the key itself never appears in an error.
func Key(provider, key, env string) (string, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return "", fault.New(fault.Usage, "%s: no API key: set %s", provider, env)
	}
	if strings.ContainsAny(key, "\r\n\x00") {
		return "", fault.New(fault.Usage, "%s: the API key in %s contains a line break", provider, env)
	}
	return key, nil
}

// BaseURL checks a configured base URL (http or https with a host) and drops a trailing slash.
func BaseURL(provider, raw, def string) (string, error) {
	if raw == "" {
		raw = def
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fault.New(fault.Usage, "%s: base URL %q: want http(s)://host[:port][/path]", provider, raw)
	}
	return strings.TrimRight(raw, "/"), nil
}

// Merge adds options to an encoded request object. An option naming a field the body already
// has, or one of reserved (fields the adapter controls even when it leaves them out, such as
// stream), is an Invalid error rather than a silent override.
func Merge(provider string, body []byte, options map[string]any, reserved ...string) ([]byte, error) {
	if err := CheckReserved(provider, options, reserved...); err != nil || len(options) == 0 {
		return body, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		return nil, fmt.Errorf("%s: merge options: %w", provider, err)
	}
	for _, k := range slices.Sorted(maps.Keys(options)) {
		if _, taken := fields[k]; taken {
			return nil, reservedError(provider, k)
		}
		v, err := Encode(options[k])
		if err != nil {
			return nil, fault.New(fault.Invalid, "%s: option %q: %w", provider, k, err)
		}
		fields[k] = v
	}
	return Encode(fields)
}

// CheckReserved returns an Invalid error for the first option (in sorted order) named in
// reserved.
func CheckReserved(provider string, options map[string]any, reserved ...string) error {
	for _, k := range slices.Sorted(maps.Keys(options)) {
		if slices.Contains(reserved, k) {
			return reservedError(provider, k)
		}
	}
	return nil
}

func reservedError(provider, option string) error {
	return fault.New(fault.Invalid, "%s: option %q is set by awf and cannot be overridden", provider, option)
}

// Encode marshals a request body without escaping <, > and & (a model should read the prompt
// it was given, not \u003c).
func Encode(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// Strings reads a stop option given as one string or a list of strings.
func Strings(v any) ([]string, bool) {
	switch s := v.(type) {
	case string:
		return []string{s}, true
	case []string:
		return s, true
	case []any:
		out := make([]string, 0, len(s))
		for _, e := range s {
			str, ok := e.(string)
			if !ok {
				return nil, false
			}
			out = append(out, str)
		}
		return out, true
	}
	return nil, false
}

// DefaultTimeout bounds one attempt of a provider whose configured timeout is zero: long enough
// for a slow local model to answer without streaming.
const DefaultTimeout = 10 * time.Minute

// Retries reads a configured retry count: 0 means the default of 3, negative means none.
func Retries(n int) int {
	switch {
	case n == 0:
		return 3
	case n < 0:
		return 0
	}
	return n
}

// Timeout reads a configured per-attempt timeout: 0 means [DefaultTimeout], negative none.
func Timeout(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultTimeout
	case d < 0:
		return 0
	}
	return d
}

// Malformed is the error for a body or chunk that is not the JSON the API promised: it names the
// provider and shows the start of the data.
func Malformed(provider, what string, data []byte, err error) error {
	return fault.New(fault.Execution, "%s: malformed %s: %w: %s", provider, what, err, Snippet(data))
}

// Snippet quotes the start of a body for an error message.
func Snippet(data []byte) string {
	const n = 120
	if len(data) > n {
		return fmt.Sprintf("%q...", data[:n])
	}
	return fmt.Sprintf("%q", data)
}
