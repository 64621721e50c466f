package toollock

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/bom/bomtest"
	"github.com/awf-dev/awf/internal/domain/fault"
	"github.com/awf-dev/awf/internal/domain/tool"
)

func TestWriteRead(t *testing.T) {
	path := Path(filepath.Join(t.TempDir(), "wf.yaml"))
	if !strings.HasSuffix(path, "wf.yaml.lock") {
		t.Errorf("Path = %q", path)
	}
	if _, ok, err := Read(path); ok || err != nil {
		t.Fatalf("Read of no file = %v, %v", ok, err)
	}
	in := &File{Workflow: "wf.yaml", Tools: map[string]tool.Pin{"fs__echo": tool.PinOf("mcp", "mcp:fs", "Echo.", []byte(`{"type":"object"}`), nil)}}
	if err := Write(path, in); err != nil {
		t.Fatal(err)
	}
	got, ok, err := Read(path)
	if !ok || err != nil {
		t.Fatalf("Read = %v, %v", ok, err)
	}
	if d := cmp.Diff(in, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}

func TestReadBad(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"garbage": "{not json", "version": `{"version": 9, "tools": {}}`, "unknown": `{"version": 1, "tools": {}, "extra": 1}`} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := Read(p); fault.KindOf(err) != fault.Invalid || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: Read error = %v, want an Invalid error naming the file", name, err)
		}
	}
}

// A lock file saved with a byte order mark (after a person edited it) reads as without one; a
// UTF-16 one is refused with what to do.
func TestReadByteOrderMark(t *testing.T) {
	bomtest.TestFile(t, "wf.yaml.lock", []bomtest.Case{
		{Name: "valid", Doc: `{"version": 1, "workflow": "wf.yaml", "tools": {"t": {"kind": "wrapped", "description": "sha256:00"}}}`},
		{Name: "unknown field", Doc: `{"version": 1, "tools": {}, "extra": 1}`, Err: `unknown field "extra"`},
	}, func(path string) (string, error) {
		f, _, err := Read(path)
		return fmt.Sprintf("%+v", f), err
	})
}
