package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/state"
)

// requireOtherOS requires the OS layer of another system than this one: Seatbelt on Linux,
// Landlock on macOS and Windows.
func requireOtherOS() (layer, says string) {
	if runtime.GOOS == "linux" {
		return "seatbelt", "awf has no such layer on linux"
	}
	return "landlock", "Linux only (this is " + runtime.GOOS + ")"
}

// TestRequireALayerOfAnotherOS: a workflow that requires a layer this OS does not have
// refuses its tool (fail closed) with the layer's name and why, and runs nothing.
func TestRequireALayerOfAnotherOS(t *testing.T) {
	layer, says := requireOtherOS()
	e := newEnv(t)
	e.write("req.yaml", `name: req
approval: {default: auto}
sandbox: {require: [`+layer+`]}
steps:
  - {name: touch, type: tool, tool: shell, args: {command: "echo ran > ran"}, continue_on_error: true}
`)
	res := e.runJSON(0, "run", "req.yaml")
	s := e.state(res.RunID).States["touch"]
	if s.Status != state.Failed || !strings.Contains(s.Error, "required layer "+layer+" is not available") || !strings.Contains(s.Error, says) {
		t.Errorf("touch: %s, error %q; want it refused, naming %s (%q)", s.Status, s.Error, layer, says)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "ran")); err == nil {
		t.Error("the refused tool ran")
	}
}
