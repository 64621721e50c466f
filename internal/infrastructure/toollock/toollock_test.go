package toollock

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
