package file

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzPathCheck states the property of the path check: for any path a model sends, an allowed
// result resolves inside the allowed root, and a file that opens really is inside the working
// directory, allowed and not protected, whatever symlinks lie on the way.
func FuzzPathCheck(f *testing.F) {
	for _, s := range []string{
		"src/a.go", "./src/../src/a.go", "../outside/secret.txt", "/etc/passwd", "src/../../x",
		"link-out", "link-in", "src/dir-out/secret.txt", ".env", "src/.env.local", ".git/config",
		"hooks/pre-commit", "src/./././a.go", "src//a.go", "..", ".", "", "src/\x00", "a/../../..",
	} {
		f.Add(s)
	}
	base := f.TempDir()
	base, _ = filepath.EvalSymlinks(base)
	work := filepath.Join(base, "work")
	outside := filepath.Join(base, "outside")
	for name, content := range map[string]string{
		"work/src/a.go": "package a\n", "work/.env": "KEY=1\n", "work/.git/config": "[core]\n",
		"work/.git/hooks/pre-commit": "#!/bin/sh\n", "outside/secret.txt": "TOP-SECRET\n",
		"work/docs/d.md": "d\n",
	} {
		p := filepath.Join(base, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(content), 0o644)
	}
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(work, "link-out"))
	os.Symlink("src/a.go", filepath.Join(work, "link-in"))
	os.Symlink(outside, filepath.Join(work, "src", "dir-out"))
	os.Symlink(".git/hooks", filepath.Join(work, "hooks"))
	os.Symlink("../.env", filepath.Join(work, "src", "env-link"))

	policies := []Policy{
		{WorkDir: work},
		{WorkDir: work, Read: []string{"src/**"}, Write: []string{"src/*.go"}},
	}
	var checkers []*checker
	for _, p := range policies {
		c, err := p.compile()
		if err != nil {
			f.Fatal(err)
		}
		checkers = append(checkers, c)
	}
	f.Fuzz(func(t *testing.T, arg string) {
		for i, c := range checkers {
			abs, err := c.resolve(arg)
			if err != nil {
				continue
			}
			for _, a := range []access{accessRead, accessWrite} {
				root, err := c.check(arg, abs, a)
				if err != nil {
					continue
				}
				if !within(abs, root) || !within(root, work) || c.protectedBy(abs) != nil {
					t.Fatalf("policy %d: %s check(%q) allowed %s with root %s", i, a, arg, abs, root)
				}
			}
			file, _, err := c.openRead(arg)
			if err != nil {
				continue
			}
			real, rerr := fdRealPath(file)
			b := make([]byte, 64)
			n, _ := file.Read(b)
			file.Close()
			if strings.Contains(string(b[:n]), "SECRET") || strings.Contains(string(b[:n]), "KEY=") {
				t.Fatalf("policy %d: openRead(%q) read protected or outside content %q", i, arg, b[:n])
			}
			if rerr == nil && (!within(real, work) || !c.readable(real)) {
				t.Fatalf("policy %d: openRead(%q) opened %s", i, arg, real)
			}
		}
	})
}
