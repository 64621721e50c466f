package mcp

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/awf-dev/awf/internal/infrastructure/process"
)

// Built once by TestMain: the test MCP server (testdata/mcp/server) and the awf binary. When
// awf does not build, or does not have the mcp command yet, awfSkip says why and the tests
// that run it as a subprocess skip; the same scenarios still run in-process.
var (
	testServerBin string
	awfBin        string
	awfSkip       string
)

// moduleRoot is the repository's root, made absolute by TestMain (tests change directory).
var moduleRoot = "../../../../.."

func TestMain(m *testing.M) {
	// Command tools run through the process runner's helper: this test binary re-executed.
	if process.IsHelper(os.Args) {
		os.Exit(process.HelperMain())
	}
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	root, err := filepath.Abs(moduleRoot)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	moduleRoot = root
	dir, err := os.MkdirTemp("", "awf-mcp-serve-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	testServerBin = filepath.Join(dir, "testserver")
	if out, err := goBuild(testServerBin, "./testdata/mcp/server"); err != nil {
		fmt.Fprintf(os.Stderr, "build the test MCP server: %v\n%s", err, out)
		return 1
	}
	awfBin = filepath.Join(dir, "awf")
	flag.Parse()
	if bin := os.Getenv("AWF_TEST_BIN"); bin != "" { // a binary built elsewhere
		awfBin = bin
	} else if testing.Short() {
		awfSkip = "-short: the awf binary is not built"
	} else if out, err := goBuild(awfBin, "./cmd/awf"); err != nil {
		awfSkip = fmt.Sprintf("awf does not build: %v\n%s", err, out)
	}
	if awfSkip == "" {
		awfSkip = mcpCommandMissing(awfBin)
	}
	return m.Run()
}

// mcpCommandMissing says why bin cannot run `awf mcp serve`, or "" when it can.
func mcpCommandMissing(bin string) string {
	if out, err := exec.Command(bin, "mcp", "serve", "--help").CombinedOutput(); err != nil {
		return fmt.Sprintf("awf has no mcp command yet (register mcp.NewCmdMCP in the root command): %v: %s", err, out)
	}
	return ""
}

func goBuild(out, pkg string) ([]byte, error) {
	args := []string{"build", "-o", out}
	if os.Getenv("GOCOVERDIR") != "" && pkg == "./cmd/awf" {
		args = append(args, "-cover")
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Dir = moduleRoot
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.Bytes(), err
}
