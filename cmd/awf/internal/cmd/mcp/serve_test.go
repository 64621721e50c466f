package mcp

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/ports"
)

// TestServeWorkflowTools is the scenario: an MCP client lists awf's tools and calls
// one allowed, one refused by the file policy, one denied by the workflow, one needing
// approval with nobody to ask, one that fails; the server keeps serving and the audit log
// holds every call.
func TestServeWorkflowTools(t *testing.T) {
	for _, l := range launchers {
		t.Run(l.name, func(t *testing.T) {
			e := newEnv(t)
			sess := l.start(e, "--workflow", "serve.yaml", "--input", "greeting=hi")

			res, err := sess.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
				switch tl.Name {
				case "read_file":
					if !tl.Annotations.ReadOnlyHint || !strings.Contains(tl.Description, "Read a text file") {
						t.Errorf("read_file = %q %+v, want the built-in's description, read-only", tl.Description, tl.Annotations)
					}
				case "greet":
					schema, _ := tl.InputSchema.(map[string]any)
					props, _ := schema["properties"].(map[string]any)
					if tl.Description != "Greet someone" || props["name"] == nil || tl.Annotations.ReadOnlyHint {
						t.Errorf("greet = %q %v %+v", tl.Description, tl.InputSchema, tl.Annotations)
					}
				}
			}
			slices.Sort(names)
			if diff := cmp.Diff([]string{"broken", "forbidden", "greet", "read_file", "write_file"}, names); diff != "" {
				t.Fatalf("served tools (-want +got):\n%s", diff)
			}

			calls := []struct {
				tool    string
				args    map[string]any
				want    string
				isError bool
			}{
				{"read_file", map[string]any{"path": "hello.txt"}, "hello from the workspace", false},
				{"read_file", map[string]any{"path": "../outside.txt"}, "outside the allowed read paths", true},
				{"forbidden", map[string]any{}, "denied", true},
				{"write_file", map[string]any{"path": "new.txt", "content": "x"}, "approval", true},
				{"greet", map[string]any{"name": "world"}, "hi world", false},
				{"broken", map[string]any{}, "going down", true},
				{"greet", map[string]any{"name": 42}, "invalid arguments", true},
				{"read_file", map[string]any{"path": "hello.txt"}, "hello from the workspace", false},
			}
			for _, c := range calls {
				got, isErr := callTool(t, sess, c.tool, c.args)
				if isErr != c.isError || !strings.Contains(got, c.want) {
					t.Errorf("%s(%v) = %q (isError %v), want %q (isError %v)", c.tool, c.args, got, isErr, c.want, c.isError)
				}
			}
			if _, err := os.Stat(filepath.Join(e.dir, "new.txt")); !os.IsNotExist(err) {
				t.Errorf("write_file ran without approval: stat = %v", err)
			}
			sess.Close()

			type row struct{ Tool, Outcome, By string }
			var got []row
			recs := e.auditRecords()
			for _, r := range recs {
				by := ""
				if r.Approval != nil {
					by = r.Approval.By
				}
				got = append(got, row{r.Tool, r.Outcome, by})
			}
			want := []row{
				{"read_file", ports.OutcomeOK, ports.ByAuto},
				{"read_file", ports.OutcomeDenied, ports.ByAuto}, // approved, then refused by the path policy
				{"forbidden", ports.OutcomeDenied, ports.ByPolicy},
				{"write_file", ports.OutcomeDenied, ports.ByNonInteractive},
				{"greet", ports.OutcomeOK, ports.ByAuto},
				{"broken", ports.OutcomeError, ports.ByAuto},
				{"greet", ports.OutcomeDenied, ports.ByGate},
				{"read_file", ports.OutcomeOK, ports.ByAuto},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("audit log (-want +got):\n%s", diff)
			}
			runID := recs[0].RunID
			for i, r := range recs {
				if !strings.HasPrefix(r.RunID, "mcp-") || r.RunID != runID || r.Step != "mcp:awf-test" || r.CallID == "" {
					t.Errorf("audit record %d: run %q step %q call %q; want one mcp-... run, step mcp:awf-test, a call id", i, r.RunID, r.Step, r.CallID)
				}
			}
			if got := recs[1].Error; !strings.Contains(got, "outside the allowed read paths") {
				t.Errorf("audit error of the refused read = %q", got)
			}
		})
	}
}

// TestServeProxiesMCPTools serves a workflow's MCP server's tools next to a built-in: awf is an
// MCP client of the test server and an MCP server to the test, with every call audited.
func TestServeProxiesMCPTools(t *testing.T) {
	for _, l := range launchers {
		t.Run(l.name, func(t *testing.T) {
			e := newEnv(t)
			sess := l.start(e, "--workflow", "serve.yaml", "--tools", "read_file,fs.*")
			res, err := sess.ListTools(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range res.Tools {
				names = append(names, tl.Name)
			}
			slices.Sort(names)
			want := []string{"fs__add", "fs__crash", "fs__echo", "fs__fail", "fs__get_data", "fs__hang", "fs__write_note", "read_file"}
			if diff := cmp.Diff(want, names); diff != "" {
				t.Fatalf("served tools (-want +got):\n%s", diff)
			}
			if got, isErr := callTool(t, sess, "fs__echo", map[string]any{"text": "through awf"}); isErr || got != "echo: through awf" {
				t.Errorf("fs__echo = %q (isError %v)", got, isErr)
			}
			// Not declared read-only by its server: approval needed, nobody to ask.
			if got, isErr := callTool(t, sess, "fs__write_note", map[string]any{"text": "x"}); !isErr || !strings.Contains(got, "approval") {
				t.Errorf("fs__write_note = %q (isError %v), want a denial", got, isErr)
			}
			if _, err := os.Stat(e.notes); !os.IsNotExist(err) {
				t.Errorf("the note was written without approval")
			}
			// The MCP server dies mid-call: an error result, and awf goes on serving.
			if got, isErr := callTool(t, sess, "fs__crash", nil); !isErr || !strings.Contains(got, "stopped") {
				t.Errorf("fs__crash = %q (isError %v), want an error result saying the server stopped", got, isErr)
			}
			if got, isErr := callTool(t, sess, "read_file", map[string]any{"path": "hello.txt"}); isErr || !strings.Contains(got, "hello") {
				t.Errorf("read_file after the crash = %q (isError %v)", got, isErr)
			}
			sess.Close()
			var tools []string
			for _, r := range e.auditRecords() {
				tools = append(tools, r.Tool+":"+r.Outcome)
			}
			if diff := cmp.Diff([]string{"fs__echo:ok", "fs__write_note:denied", "fs__crash:error", "read_file:ok"}, tools); diff != "" {
				t.Errorf("audit log (-want +got):\n%s", diff)
			}
		})
	}
}

// TestServeToolsWithoutWorkflow serves built-ins by name, and --all.
func TestServeToolsWithoutWorkflow(t *testing.T) {
	e := newEnv(t)
	sess := inProcess(e, "--tools", "read_file,grep")
	res, err := sess.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 2 {
		t.Errorf("ListTools() = %d tools, want read_file and grep", len(res.Tools))
	}
	if got, isErr := callTool(t, sess, "grep", map[string]any{"pattern": "workspace"}); isErr || !strings.Contains(got, "hello.txt") {
		t.Errorf("grep = %q (isError %v)", got, isErr)
	}

	sess.Close()
	for _, r := range e.auditRecords() {
		if r.Tool != "grep" || !strings.HasPrefix(r.RunID, "mcp-") || r.Step != "mcp:awf-test" {
			t.Errorf("audit record = %+v, want grep in a run of its own", r)
		}
	}

	// Started for an agent CLI of a run, the server records its calls under that run.
	e = newEnv(t)
	named := inProcess(e, "--tools", "read_file", "--run-id", "run-42", "--step", "implement")
	callTool(t, named, "read_file", map[string]any{"path": "hello.txt"})
	named.Close()
	if recs := e.auditRecords(); len(recs) != 1 || recs[0].RunID != "run-42" || recs[0].Step != "implement" {
		t.Errorf("audit log = %+v, want the call under run-42, step implement", recs)
	}

	all := inProcess(newEnv(t), "--all")
	res, err = all.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"read_file", "write_file", "shell", "http_request", "glob", "grep", "list_dir", "run_command"} {
		if !slices.Contains(names, want) {
			t.Errorf("--all serves %v, missing %s", names, want)
		}
	}
}
