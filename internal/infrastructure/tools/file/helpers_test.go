package file

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/awf-dev/awf/internal/domain/tool"
	"github.com/awf-dev/awf/internal/infrastructure/tools/internal/tooltest"
)

// cmpSorted compares string slices as sets.
var cmpSorted = cmpopts.SortSlices(func(a, b string) bool { return a < b })

func toolContext(dir string) tool.Context { return tool.Context{WorkDir: dir} }

// fixture is a working directory with files, and a directory outside it with a secret.
type fixture struct {
	work    string // working directory (real path)
	outside string // a sibling directory the tools must never reach
	secret  string // content of outside/secret.txt
}

// newFixture creates a working directory holding files (slash path -> content) and an outside
// directory with secret.txt.
func newFixture(t *testing.T, files map[string]string) *fixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	fx := &fixture{work: filepath.Join(base, "work"), outside: filepath.Join(base, "outside"), secret: "TOP-SECRET\n"}
	mkdir(t, fx.work)
	mkdir(t, fx.outside)
	writeFile(t, filepath.Join(fx.outside, "secret.txt"), fx.secret)
	for name, content := range files {
		writeFile(t, filepath.Join(fx.work, filepath.FromSlash(name)), content)
	}
	return fx
}

func (fx *fixture) path(rel string) string { return filepath.Join(fx.work, filepath.FromSlash(rel)) }

func mkdir(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, name, content string) {
	t.Helper()
	mkdir(t, filepath.Dir(name))
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, name string) {
	t.Helper()
	mkdir(t, filepath.Dir(name))
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

func readBack(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// toolset builds the five tools for a policy and indexes them by name.
func toolset(t testing.TB, p Policy) map[string]tool.Tool {
	t.Helper()
	ts, err := NewTools(p)
	if err != nil {
		t.Fatalf("NewTools(%+v): %v", p, err)
	}
	m := map[string]tool.Tool{}
	for _, tl := range ts {
		m[tl.Name()] = tl
	}
	return m
}

// call, wantOK and wantError are the shared tool assertions (tooltest).
var (
	call      = tooltest.Call
	wantOK    = tooltest.WantOK
	wantError = tooltest.WantError
)

func contextWithCancel(t *testing.T) (context.Context, context.CancelFunc) {
	return context.WithCancel(t.Context())
}

func invocation(a map[string]any) tool.Invocation { return tool.Invocation{ID: "call_1", Args: a} }
