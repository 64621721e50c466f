//go:build unix

package regfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A regular file reads; a FIFO (no writer), a device, a directory and a link to a device are
// refused at once; a missing file is os.ErrNotExist.
func TestOnlyRegularFiles(t *testing.T) {
	dir := t.TempDir()
	p := func(name string) string { return filepath.Join(dir, name) }
	if err := os.WriteFile(p("reg"), []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(p("fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", p("zero")); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(p("reg")); err != nil || string(data) != "data" {
		t.Errorf("regular file: %q, %v", data, err)
	}
	for _, name := range []string{"fifo", "zero", "."} {
		if _, err := ReadFile(p(name)); err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: %v, want not a regular file", name, err)
		}
	}
	if _, err := Open(p("missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing: %v, want ErrNotExist", err)
	}
}
