package mcp

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/awf-dev/awf/cmd/awf/internal/iostreams"
	"github.com/awf-dev/awf/internal/domain/ports"
)

// TestServedShellIsSandboxed: tools served over MCP run under the same default sandbox as in
// runs, even when the workflow has no sandbox: block (an absent policy must not mean none).
func TestServedShellIsSandboxed(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox of tool processes is Linux-only")
	}
	e := newEnv(t)
	t.Chdir(e.dir)
	ios, _, _, _ := iostreams.Test()
	f := e.factory(ios)
	f.Flags.Yes = true
	ts, err := BuildToolset(f, ToolsetRequest{WorkDir: e.dir, RunID: "run-1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Close() })
	res, err := ts.Invoker.Invoke(t.Context(), ports.ToolRequest{RunID: "run-1", CallID: "c1", Name: "shell",
		Args: map[string]any{"command": "id -u"}})
	if err != nil || !res.Succeeded() {
		t.Fatalf("shell id -u = %+v, %v", res, err)
	}
	if os.Geteuid() == 0 && strings.TrimSpace(res.Output) == "0" {
		t.Errorf("the served shell tool ran as root: no sandbox applied")
	}
	recs := e.auditRecords()
	if len(recs) != 1 || recs[0].Sandbox.Backend != "clone" || recs[0].Sandbox.Applied["layers"] == "" {
		t.Errorf("audit sandbox = %+v, want the clone backend and its layers", recs)
	}
}
