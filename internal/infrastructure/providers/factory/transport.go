package factory

import (
	"fmt"
	"maps"
	"math"
	"time"

	"github.com/awf-dev/awf/internal/domain/fault"
	awfmcp "github.com/awf-dev/awf/internal/infrastructure/mcp"
)

// transport holds the options of a provider definition that configure the client rather than
// the request: everything else in options: is passed to the model with every request.
type transport struct {
	stream     bool
	maxRetries int
	timeout    time.Duration
	headers    map[string]string
	toolFormat string
	maxRepairs int
	cassette   string
	// mcp is options.mcp of a cli provider: unset (mcpSet false) hands the step's tools to
	// known agent CLIs through MCP, true requires it, false never does it. agent is
	// options.agent: which agent CLI the command is, when its name does not say.
	mcp, mcpSet bool
	agent       string
}

// transportKeys are the options transportOf takes out, by provider type.
var transportKeys = map[string][]string{
	TypeOpenAI:    {"stream", "max_retries", "timeout", "headers"},
	TypeAnthropic: {"stream", "max_retries", "timeout", "headers"},
	TypeOllama:    {"stream", "max_retries", "timeout", "headers"},
	TypeCLI:       {"timeout", "tool_format", "max_repairs", "mcp", "agent"},
	TypeReplay:    {"cassette"},
}

// transportOf splits a definition's options into client settings and request options.
func transportOf(s spec) (transport, map[string]any, error) {
	var t transport
	rest := maps.Clone(s.Options)
	for _, k := range transportKeys[s.Type] {
		v, ok := rest[k]
		if !ok {
			continue
		}
		delete(rest, k)
		var err error
		switch k {
		case "stream":
			t.stream, err = boolOpt(v)
		case "max_retries":
			t.maxRetries, err = intOpt(v)
		case "max_repairs":
			t.maxRepairs, err = intOpt(v)
		case "timeout":
			t.timeout, err = durationOpt(v)
		case "headers":
			t.headers, err = headersOpt(v)
		case "tool_format":
			t.toolFormat, err = stringOpt(v)
		case "cassette":
			t.cassette, err = stringOpt(v)
		case "mcp":
			t.mcp, err = boolOpt(v)
			t.mcpSet = true
		case "agent":
			t.agent, err = agentOpt(v)
		}
		if err != nil {
			return transport{}, nil, fault.New(fault.Usage, "provider %q (%s): options.%s: %v", s.Name, s.from, k, err)
		}
	}
	if len(rest) == 0 {
		rest = nil
	}
	return t, rest, nil
}

func boolOpt(v any) (bool, error) {
	b, ok := v.(bool)
	if !ok {
		return false, fmt.Errorf("want true or false, got %v", v)
	}
	return b, nil
}

// agentOpt reads the name of an agent CLI awf can hand tools to through MCP.
func agentOpt(v any) (string, error) {
	s, err := stringOpt(v)
	if err != nil || awfmcp.KnownAgent(s) {
		return s, err
	}
	return "", fmt.Errorf("want %s, %s or %s, got %q", awfmcp.AgentClaude, awfmcp.AgentCodex, awfmcp.AgentGemini, s)
}

func stringOpt(v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("want a string, got %v", v)
	}
	return s, nil
}

func intOpt(v any) (int, error) {
	switch n := v.(type) {
	case int:
		return n, nil
	case int64:
		return int(n), nil
	case uint64:
		if n <= math.MaxInt32 {
			return int(n), nil
		}
	case float64:
		if n == math.Trunc(n) && math.Abs(n) <= math.MaxInt32 {
			return int(n), nil
		}
	}
	return 0, fmt.Errorf("want a whole number, got %v", v)
}

// durationOpt reads "90s", "2m" or a number of seconds.
func durationOpt(v any) (time.Duration, error) {
	if s, ok := v.(string); ok {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("want a duration such as 90s or 2m, got %q", s)
		}
		return d, nil
	}
	n, err := intOpt(v)
	if err != nil {
		return 0, fmt.Errorf("want a duration such as 90s or 2m, got %v", v)
	}
	return time.Duration(n) * time.Second, nil
}

func headersOpt(v any) (map[string]string, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a mapping of header names to values, got %v", v)
	}
	out := make(map[string]string, len(m))
	for k, e := range m {
		s, ok := e.(string)
		if !ok {
			return nil, fmt.Errorf("header %q: want a string, got %v", k, e)
		}
		out[k] = s
	}
	return out, nil
}
