//go:build unix

package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSweepTempDirs: the private temporary directory of a dead awf (no lock held) is deleted
// by the next awf's first sandbox; one a live awf holds is not, nor one made a moment ago (its
// awf may not hold it yet), nor what a symbolic link with the prefix points to.
func TestSweepTempDirs(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	left := filepath.Join(os.TempDir(), tempPrefix+"left")
	must(t, os.MkdirAll(filepath.Join(left, "sub"), 0o700))
	must(t, os.WriteFile(filepath.Join(left, "sub", "f"), []byte("x"), 0o600))
	old := time.Now().Add(-time.Minute)
	must(t, os.Chtimes(left, old, old))
	fresh := filepath.Join(os.TempDir(), tempPrefix+"fresh")
	must(t, os.Mkdir(fresh, 0o700)) // created, not yet held by the awf that made it

	live, remove, err := makeTempDir()
	must(t, err)
	held := filepath.Join(os.TempDir(), tempPrefix+"held")
	must(t, os.Mkdir(held, 0o700))
	must(t, os.Chtimes(held, old, old)) // old enough: only its lock spares it
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
	}{{left, true}, {fresh, false}, {live, false}, {held, false}, {link, false}, {filepath.Join(target, "keep"), false}} {
		if _, err := os.Lstat(c.path); os.IsNotExist(err) != c.gone {
			t.Errorf("%s: removed = %v, want %v", filepath.Base(c.path), os.IsNotExist(err), c.gone)
		}
	}
	must(t, remove())
	if _, err := os.Lstat(live); !os.IsNotExist(err) {
		t.Errorf("remove left %s: %v", live, err)
	}
}
