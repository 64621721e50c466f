package toolwire

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/application/registry"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/infrastructure/toollock"
)

func TestPinsAndCheck(t *testing.T) {
	dir := t.TempDir()
	def := filepath.Join(dir, "lister.tool")
	if err := os.WriteFile(def, []byte("@command ls"), 0o644); err != nil {
		t.Fatal(err)
	}
	schema := []byte(`{"type":"object"}`)
	entries := []registry.Entry{
		{Ref: "read_file", Level: tool.LevelBuiltin, Source: "builtin", Description: "Read.", Parameters: schema},
		{Ref: "shell", Level: tool.LevelWorkflow, Source: "builtin", Description: "Shell.", Parameters: schema},
		{Ref: "fs__echo", Kind: registry.KindTool, Level: tool.LevelWorkflow, Source: "mcp:fs", Description: "Echo.", Parameters: schema},
		{Ref: "lister", Kind: registry.KindWrapped, Level: tool.LevelProject, Source: def, Description: "List.", Parameters: schema},
	}
	pins := Pins(entries)
	if len(pins) != 2 || pins["fs__echo"].Kind != "mcp" || pins["lister"].Definition == "" {
		t.Fatalf("Pins = %+v, want fs__echo (mcp) and lister with its definition, no built-ins", pins)
	}

	wf := filepath.Join(dir, "wf.yaml")
	warnings, err := CheckPins(wf, pins)
	if err != nil || len(warnings) != 1 || !strings.Contains(warnings[0].Msg, "fs__echo is not pinned") {
		t.Errorf("no lock: %v, %v; want a warning for the MCP tool only", warnings, err)
	}
	if err := toollock.Write(toollock.Path(wf), &toollock.File{Tools: pins}); err != nil {
		t.Fatal(err)
	}
	if warnings, err := CheckPins(wf, pins); err != nil || len(warnings) != 0 {
		t.Errorf("locked: %v, %v", warnings, err)
	}
	if err := os.WriteFile(def, []byte("@command sh"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = CheckPins(wf, Pins(entries))
	if fault.KindOf(err) != fault.Denied || !strings.Contains(err.Error(), "tool lister changed since it was locked: definition") {
		t.Errorf("edited definition: %v, want a denial naming lister and its definition", err)
	}
}
