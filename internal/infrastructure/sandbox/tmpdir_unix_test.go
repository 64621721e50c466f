//go:build unix

package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSweepTempDirs: the private temporary directory of a dead awf (no lock held) is deleted
// by the next awf's first sandbox; one a live awf holds is not, nor what a symbolic link with
// the prefix points to.
func TestSweepTempDirs(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	left := filepath.Join(os.TempDir(), tempPrefix+"left")
	must(t, os.MkdirAll(filepath.Join(left, "sub"), 0o700))
	must(t, os.WriteFile(filepath.Join(left, "sub", "f"), []byte("x"), 0o600))

	live, remove, err := makeTempDir()
	must(t, err)
	held := filepath.Join(os.TempDir(), tempPrefix+"held")
	must(t, os.Mkdir(held, 0o700))
	release, err := holdDir(held)
	must(t, err)
	defer release()

	target := t.TempDir()
	must(t, os.WriteFile(filepath.Join(target, "keep"), nil, 0o600))
	link := filepath.Join(os.TempDir(), tempPrefix+"link")
	must(t, os.Symlink(target, link))

	sweepTempDirs()
	for _, c := range []struct {
		path string
		gone bool
	}{{left, true}, {live, false}, {held, false}, {link, false}, {filepath.Join(target, "keep"), false}} {
		if _, err := os.Lstat(c.path); os.IsNotExist(err) != c.gone {
			t.Errorf("%s: removed = %v, want %v", filepath.Base(c.path), os.IsNotExist(err), c.gone)
		}
	}
	must(t, remove())
	if _, err := os.Lstat(live); !os.IsNotExist(err) {
		t.Errorf("remove left %s: %v", live, err)
	}
}
