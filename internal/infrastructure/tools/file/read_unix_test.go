//go:build unix

package file

import (
	"strings"
	"syscall"
	"testing"
)

func TestReadFileRefusesFIFO(t *testing.T) {
	fx := newFixture(t, nil)
	if err := syscall.Mkfifo(fx.path("pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	ts := toolset(t, Policy{WorkDir: fx.work})
	// Without O_NONBLOCK this would block forever waiting for a writer.
	wantError(t, call(t, ts["read_file"], map[string]any{"path": "pipe"}), "read fifo", "not a regular file (a named pipe)")
	wantError(t, call(t, ts["write_file"], map[string]any{"path": "pipe", "content": "x"}), "write fifo", "not a regular file (a named pipe)")
	wantError(t, call(t, ts["write_file"], map[string]any{"path": "pipe", "content": "x", "append": true}), "append fifo", "not a regular file")
	wantError(t, call(t, ts["list_dir"], map[string]any{"path": "pipe"}), "list fifo", "not a directory")
	out := wantOK(t, call(t, ts["list_dir"], map[string]any{"path": "."}), "list")
	if !strings.Contains(out, "pipe  (named pipe)") {
		t.Errorf("list_dir output %q does not mark the fifo", out)
	}
}
