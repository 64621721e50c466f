package mcp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// serverBin is testdata/mcp/server, built once by TestMain.
var serverBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "awf-mcp-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	serverBin = filepath.Join(dir, "testserver")
	build := exec.Command("go", "build", "-o", serverBin, "../../../testdata/mcp/server")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build the test MCP server:", err)
		return 1
	}
	return m.Run()
}
