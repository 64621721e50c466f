package mcp

import (
	"fmt"
	"slices"
	"strings"

	"github.com/awf-dev/awf/internal/domain/workflow"
)

// Separator joins a server's name and a tool's name in the name awf gives an imported tool:
// tool read_text of server fs is fs__read_text. Model APIs (OpenAI, Anthropic, Gemini) accept
// only letters, digits, _ and - in tool names, so the workflow spelling fs.read_text cannot be
// what a model sees; one name everywhere (registry, model, state, audit, approval rules) keeps
// the records greppable and the rules exact.
const Separator = "__"

// maxName is the longest tool name the registry and the model APIs accept.
const maxName = 64

// ToolName returns the name awf registers tool remote of server under: server + "__" +
// remote, with each character other than a letter, digit, _ or - replaced by _. It fails
// when the server name is not valid (ValidServerName) or the result is longer than 64
// characters.
func ToolName(server, remote string) (string, error) {
	if err := ValidServerName(server); err != nil {
		return "", err
	}
	if remote == "" {
		return "", fmt.Errorf("MCP server %q lists a tool with no name", server)
	}
	var b strings.Builder
	b.WriteString(server + Separator)
	for _, r := range remote {
		if isNameRune(r) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := b.String()
	if len(name) > maxName {
		return "", fmt.Errorf("tool %q of MCP server %q: the name %s is longer than %d characters; use a shorter server name",
			remote, server, name, maxName)
	}
	return name, nil
}

func isNameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
}

// ValidServerName checks a name of mcp_servers: letters, digits, _ and -, at most 32, with no
// "__" (the separator) and no leading or trailing _, so that fs__read always splits one way.
func ValidServerName(name string) error {
	ok := name != "" && len(name) <= 32 && !strings.Contains(name, Separator) &&
		!strings.HasPrefix(name, "_") && !strings.HasSuffix(name, "_")
	for _, r := range name {
		ok = ok && isNameRune(r)
	}
	if !ok {
		return fmt.Errorf("MCP server name %q: use 1 to 32 letters, digits, - and single _ (not at either end)", name)
	}
	return nil
}

// Ref is a workflow's reference to imported tools: "fs.read_text", "fs.*" or the registered
// name "fs__read_text".
type Ref struct {
	Server string
	// Tool is the tool's name as the server lists it (as written, for the dotted form) or as
	// registered (for the fs__x form); empty when All is set.
	Tool string
	// All is set for "fs.*": every tool of the server.
	All bool
	// Dotted is set for the server.tool spelling, whose Tool is the server's own name.
	Dotted bool
}

// ParseRef reads name as a reference to an imported tool of one of servers. ok is false when
// name does not name one of them: a plain tool such as read_file, or a library reference
// (owner/name, name@^1.0).
func ParseRef(name string, servers []string) (Ref, bool) {
	if strings.ContainsAny(name, "/@") {
		return Ref{}, false
	}
	if server, rest, found := strings.Cut(name, "."); found && slices.Contains(servers, server) {
		if rest == "*" {
			return Ref{Server: server, All: true, Dotted: true}, true
		}
		return Ref{Server: server, Tool: rest, Dotted: true}, true
	}
	if server, rest, found := strings.Cut(name, Separator); found && slices.Contains(servers, server) && rest != "" {
		return Ref{Server: server, Tool: rest}, true
	}
	return Ref{}, false
}

// LooksLikeRef reports whether name has the server.tool form, whatever the server: a
// reference to a server the workflow does not declare is an error worth naming.
func LooksLikeRef(name string) (server string, ok bool) {
	if strings.ContainsAny(name, "/@") {
		return "", false
	}
	server, rest, found := strings.Cut(name, ".")
	return server, found && server != "" && rest != ""
}

// Referenced returns the sorted names of the servers in wf.MCPServers that a step uses: in
// an agent step's tools or a tool step's tool, at any depth of parallel steps. Only these
// need to start for a run.
func Referenced(wf *workflow.Workflow) []string {
	servers := serverNames(wf.MCPServers)
	var out []string
	walkToolRefs(wf.Steps, func(name *string) {
		if r, ok := ParseRef(*name, servers); ok && !slices.Contains(out, r.Server) {
			out = append(out, r.Server)
		}
	})
	slices.Sort(out)
	return out
}

// walkToolRefs calls fn with a pointer to every tool name steps use.
func walkToolRefs(steps []workflow.Step, fn func(name *string)) {
	for i := range steps {
		s := &steps[i]
		switch {
		case s.Agent != nil:
			for j := range s.Agent.Tools {
				fn(&s.Agent.Tools[j])
			}
		case s.Tool != nil:
			fn(&s.Tool.Tool)
		case s.Parallel != nil:
			walkToolRefs(s.Parallel.Steps, fn)
		}
	}
}

func serverNames(m map[string]workflow.MCPServer) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
