package config

import (
	"os"
	"path/filepath"
	"testing"
)

func TestFindProject(t *testing.T) {
	root := t.TempDir()
	mk := func(p string, mode os.FileMode) string {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(full, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(full, mode); err != nil {
			t.Fatal(err)
		}
		return full
	}
	mk("proj/.awf", 0o755)
	deep := mk("proj/a/b", 0o755)
	mk("repo/.git", 0o755)
	inRepo := mk("repo/x/y", 0o755)
	home := mk("home", 0o755)
	mk("home/.awf", 0o755)
	underHome := mk("home/code/p", 0o755)
	mk("tmp/.awf", 0o755)
	mk("tmp", 0o1777)
	inTmp := mk("tmp/mine", 0o755)
	for _, c := range []struct {
		name, cwd, flag, env, wantDir, found string
	}{
		{"found upwards", deep, "", "", filepath.Join(root, "proj", ".awf"), "found"},
		{"git work tree top", inRepo, "", "", filepath.Join(root, "repo", ".awf"), "git work tree"},
		{"not above home", underHome, "", "", filepath.Join(underHome, ".awf"), "working directory"},
		{"home itself", home, "", "", filepath.Join(home, ".awf"), "found"},
		{"not above a shared dir", inTmp, "", "", filepath.Join(inTmp, ".awf"), "working directory"},
		{"env, relative to cwd", deep, "", "st", filepath.Join(deep, "st"), DirEnv},
		{"flag wins", deep, "/x/y", "st", "/x/y", "--awf-dir"},
	} {
		p := FindProject(c.cwd, home, c.flag, c.env)
		if p.Dir != c.wantDir || p.Found != c.found || p.Root != filepath.Dir(p.Dir) {
			t.Errorf("%s: FindProject(%s) = %+v, want %s (%s)", c.name, c.cwd, p, c.wantDir, c.found)
		}
	}
}

func TestProjectPathRelativeOnlyInTheRoot(t *testing.T) {
	p := Project{Dir: "/p/.awf", Root: "/p"}
	if got := p.Path("/p", "runs"); got != filepath.Join(".awf", "runs") {
		t.Errorf("in the root: %s", got)
	}
	if got := p.Path("/p/sub", "runs"); got != "/p/.awf/runs" {
		t.Errorf("in a subdirectory: %s", got)
	}
}
