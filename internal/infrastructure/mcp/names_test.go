package mcp

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/domain/workflow"
)

func TestToolName(t *testing.T) {
	tests := []struct {
		server, remote string
		want           string
		wantErr        string
	}{
		{"fs", "read_text", "fs__read_text", ""},
		{"git-hub", "create-issue", "git-hub__create-issue", ""},
		{"fs", "get.data", "fs__get_data", ""},
		{"fs", "a/b c", "fs__a_b_c", ""},
		{"fs", "été", "fs___t_", ""},
		{"my_srv", "x", "my_srv__x", ""},
		{"fs", "", "", "no name"},
		{"a__b", "x", "", "MCP server name"},
		{"_a", "x", "", "MCP server name"},
		{"a.b", "x", "", "MCP server name"},
		{"fs", strings.Repeat("x", 61), "", "longer than 64"},
	}
	for _, tc := range tests {
		got, err := ToolName(tc.server, tc.remote)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ToolName(%q, %q) = %q, %v; want an error containing %q", tc.server, tc.remote, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("ToolName(%q, %q) = %q, %v; want %q", tc.server, tc.remote, got, err, tc.want)
		}
		if !tool.ValidName(got) {
			t.Errorf("ToolName(%q, %q) = %q, which the registry refuses", tc.server, tc.remote, got)
		}
	}
}

func TestParseRef(t *testing.T) {
	servers := []string{"fs", "gh"}
	tests := []struct {
		name string
		want Ref
		ok   bool
	}{
		{"fs.read", Ref{Server: "fs", Tool: "read", Dotted: true}, true},
		{"fs.*", Ref{Server: "fs", All: true, Dotted: true}, true},
		{"fs.get.data", Ref{Server: "fs", Tool: "get.data", Dotted: true}, true},
		{"fs__read", Ref{Server: "fs", Tool: "read"}, true},
		{"gh.*", Ref{Server: "gh", All: true, Dotted: true}, true},
		{"read_file", Ref{}, false},
		{"other.read", Ref{}, false},
		{"fs__", Ref{}, false},
		{"official/fs.x", Ref{}, false},
		{"fs.x@^1.0", Ref{}, false},
	}
	for _, tc := range tests {
		got, ok := ParseRef(tc.name, servers)
		if ok != tc.ok || got != tc.want {
			t.Errorf("ParseRef(%q) = %+v, %v; want %+v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestReferenced(t *testing.T) {
	wf := &workflow.Workflow{
		MCPServers: map[string]workflow.MCPServer{"fs": {}, "gh": {}, "web": {}, "unused": {}},
		Steps: []workflow.Step{
			{Name: "a", Agent: &workflow.AgentStep{Tools: []string{"read_file", "web.*"}}},
			{Name: "p", Parallel: &workflow.ParallelStep{Steps: []workflow.Step{
				{Name: "b", Tool: &workflow.ToolStep{Tool: "gh__issues"}},
				{Name: "c", Agent: &workflow.AgentStep{Tools: []string{"fs.read", "fs.write"}}},
			}}},
			{Name: "d", Shell: &workflow.ShellStep{Command: "echo fs.read"}},
		},
	}
	if diff := cmp.Diff([]string{"fs", "gh", "web"}, Referenced(wf)); diff != "" {
		t.Errorf("Referenced() (-want +got):\n%s", diff)
	}
}
