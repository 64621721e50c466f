package file

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/awf-dev/awf/internal/domain/fault"
)

// These tests attack the policy: every refused call must be refused, every legitimate one must
// pass, and the secret outside the working directory must never appear in any output.

func TestTraversalRefused(t *testing.T) {
	fx := newFixture(t, map[string]string{"src/x.go": "package x\n"})
	ts := toolset(t, Policy{WorkDir: fx.work})
	outsideRel := "../outside/secret.txt"
	tests := []struct {
		name   string
		path   string
		want   string // fragment of the error
		inside bool   // a literal name: writing it creates a file inside the working directory
	}{
		{"dot dot", outsideRel, `is outside the allowed read paths [` + fx.work + `/**]`, false},
		{"deep dot dot", "src/../../outside/secret.txt", "is outside the allowed read paths", false},
		{"many dot dots", "../../../../../../../../etc/passwd", "is outside the allowed read paths", false},
		{"absolute", filepath.Join(fx.outside, "secret.txt"), "is outside the allowed read paths", false},
		{"absolute etc", "/etc/passwd", "is outside the allowed read paths", false},
		{"dot dot to work sibling prefix", "../work-other/x", "is outside the allowed read paths", false},
		{"encoded dots stay literal", "%2e%2e/outside/secret.txt", "no such file", true},
		{"backslashes stay literal", `..\outside\secret.txt`, "no such file", true},
		{"NUL byte", "src/x.go\x00../../outside/secret.txt", "NUL byte", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := call(t, ts["read_file"], map[string]any{"path": tc.path})
			wantError(t, r, "read_file "+tc.path, tc.want)
			if strings.Contains(r.Output+r.Error, "TOP-SECRET") {
				t.Fatalf("secret leaked: %q", r.Output+r.Error)
			}
			w := call(t, ts["write_file"], map[string]any{"path": tc.path, "content": "pwned"})
			if !tc.inside {
				wantError(t, w, "write_file "+tc.path)
				return
			}
			wantOK(t, w, "write_file "+tc.path)
			if got := readBack(t, fx.path(tc.path)); got != "pwned" {
				t.Errorf("literal name %q not written inside: %q", tc.path, got)
			}
		})
	}
	if got := readBack(t, filepath.Join(fx.outside, "secret.txt")); got != fx.secret {
		t.Fatalf("outside file changed to %q", got)
	}
	for _, tl := range []string{"list_dir", "glob", "grep"} {
		a := map[string]any{"path": "../outside", "pattern": "x"}
		if tl == "list_dir" {
			delete(a, "pattern")
		}
		wantError(t, call(t, ts[tl], a), tl+" ../outside", "outside the allowed read paths")
	}
}

func TestDeniedErrorsAreClassified(t *testing.T) {
	fx := newFixture(t, nil)
	c, err := Policy{WorkDir: fx.work}.compile()
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.openRead("../outside/secret.txt")
	if fault.KindOf(err) != fault.Denied {
		t.Errorf("KindOf(%v) = %v, want denied", err, fault.KindOf(err))
	}
	_, _, err = c.openRead("missing.txt")
	if fault.KindOf(err) == fault.Denied {
		t.Errorf("a missing file is classified as denied: %v", err)
	}
}

func TestSymlinkEscapes(t *testing.T) {
	fx := newFixture(t, map[string]string{"src/ok.go": "package ok\n"})
	symlink(t, filepath.Join(fx.outside, "secret.txt"), fx.path("abs-link"))     // absolute, out
	symlink(t, "../outside/secret.txt", fx.path("rel-link"))                     // relative, out
	symlink(t, fx.outside, fx.path("dir-link"))                                  // directory, out
	symlink(t, "../../outside/secret.txt", fx.path("src/deep-link"))             // from a subdir
	symlink(t, "/proc/self/root"+fx.outside+"/secret.txt", fx.path("proc-link")) // through /proc
	ts := toolset(t, Policy{WorkDir: fx.work})

	for _, p := range []string{"abs-link", "rel-link", "dir-link/secret.txt", "src/deep-link", "proc-link"} {
		t.Run(p, func(t *testing.T) {
			r := call(t, ts["read_file"], map[string]any{"path": p})
			wantError(t, r, "read_file "+p)
			if strings.Contains(r.Output, "TOP-SECRET") {
				t.Fatalf("secret leaked through %s", p)
			}
			wantError(t, call(t, ts["write_file"], map[string]any{"path": p, "content": "pwned"}), "write_file "+p)
			wantError(t, call(t, ts["write_file"], map[string]any{"path": p, "content": "pwned", "append": true}), "append "+p)
		})
	}
	wantError(t, call(t, ts["list_dir"], map[string]any{"path": "dir-link"}), "list_dir dir-link")
	if got := readBack(t, filepath.Join(fx.outside, "secret.txt")); got != fx.secret {
		t.Fatalf("outside file changed to %q", got)
	}
	if _, err := os.Stat(filepath.Join(fx.outside, "new.txt")); err == nil {
		t.Fatal("a file was created outside")
	}
	// Walks never follow the links out.
	for _, tl := range []string{"glob", "grep"} {
		a := map[string]any{"pattern": "**"}
		if tl == "grep" {
			a["pattern"] = "SECRET"
		}
		out := wantOK(t, call(t, ts[tl], a), tl)
		if strings.Contains(out, "TOP-SECRET") || strings.Contains(out, "secret.txt") {
			t.Errorf("%s output reaches outside: %q", tl, out)
		}
	}
	// The legitimate file next to the traps still reads.
	if got := wantOK(t, call(t, ts["read_file"], map[string]any{"path": "src/ok.go"}), "ok"); got != "package ok\n" {
		t.Errorf("read src/ok.go = %q", got)
	}
}

func TestSymlinkInsideRoot(t *testing.T) {
	fx := newFixture(t, map[string]string{"docs/README.md": "# readme\n", ".env": "API_KEY=x\n", "src/a.go": "package a\n"})
	symlink(t, "docs/README.md", fx.path("README.md"))
	symlink(t, ".env", fx.path("env-link"))
	symlink(t, "../src", fx.path("docs/src-link"))
	ts := toolset(t, Policy{WorkDir: fx.work})

	// A link to an allowed file inside the root is followed.
	if got := wantOK(t, call(t, ts["read_file"], map[string]any{"path": "README.md"}), "readme"); got != "# readme\n" {
		t.Errorf("read README.md link = %q", got)
	}
	// A link to a protected file is refused, naming the protection.
	wantError(t, call(t, ts["read_file"], map[string]any{"path": "env-link"}), "env-link", "protected")
	// Write replaces the link itself? No: it refuses to write through symlinks.
	wantError(t, call(t, ts["write_file"], map[string]any{"path": "README.md", "content": "x"}), "write link", "is a symlink", "does not write through symlinks")
	if got := readBack(t, fx.path("docs/README.md")); got != "# readme\n" {
		t.Errorf("link target changed to %q", got)
	}
	// A directory link inside the root leads to allowed files: fine.
	if got := wantOK(t, call(t, ts["read_file"], map[string]any{"path": "docs/src-link/a.go"}), "dir link"); got != "package a\n" {
		t.Errorf("read through dir link = %q", got)
	}
	// A narrower read policy: the link's target must be allowed too.
	narrow := toolset(t, Policy{WorkDir: fx.work, Read: []string{"docs/**", "README.md"}})
	wantError(t, call(t, narrow["read_file"], map[string]any{"path": "docs/src-link/a.go"}), "narrow dir link", "leads outside")
	if got := wantOK(t, call(t, narrow["read_file"], map[string]any{"path": "README.md"}), "narrow readme"); got != "# readme\n" {
		t.Errorf("narrow read README.md = %q", got)
	}
}

func TestSymlinkSwappedAfterRead(t *testing.T) {
	fx := newFixture(t, map[string]string{"src/a.txt": "hello\n"})
	ts := toolset(t, Policy{WorkDir: fx.work})
	if got := wantOK(t, call(t, ts["read_file"], map[string]any{"path": "src/a.txt"}), "first read"); got != "hello\n" {
		t.Fatalf("first read = %q", got)
	}
	if err := os.Remove(fx.path("src/a.txt")); err != nil {
		t.Fatal(err)
	}
	symlink(t, filepath.Join(fx.outside, "secret.txt"), fx.path("src/a.txt"))
	r := call(t, ts["read_file"], map[string]any{"path": "src/a.txt"})
	wantError(t, r, "read after swap", "leads outside")
	// The directory swapped for a link to outside.
	if err := os.RemoveAll(fx.path("src")); err != nil {
		t.Fatal(err)
	}
	symlink(t, fx.outside, fx.path("src"))
	wantError(t, call(t, ts["read_file"], map[string]any{"path": "src/secret.txt"}), "read after dir swap")
	wantError(t, call(t, ts["write_file"], map[string]any{"path": "src/new.txt", "content": "x"}), "write after dir swap")
	if _, err := os.Stat(filepath.Join(fx.outside, "new.txt")); err == nil {
		t.Fatal("write went through the swapped directory")
	}
}

// TestSymlinkRace flips a name between a regular file and a link to the secret while reading
// it: every read returns the regular content or an error, never the secret.
func TestSymlinkRace(t *testing.T) {
	fx := newFixture(t, map[string]string{"src/a.txt": "hello\n", "src/real.txt": "hello\n"})
	symlink(t, filepath.Join(fx.outside, "secret.txt"), fx.path("src/evil"))
	ts := toolset(t, Policy{WorkDir: fx.work})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		tmp := fx.path("src/swap")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			src := "real.txt"
			if i%2 == 0 {
				src = filepath.Join(fx.outside, "secret.txt")
			}
			os.Remove(tmp)
			if err := os.Symlink(src, tmp); err != nil {
				continue
			}
			os.Rename(tmp, fx.path("src/a.txt")) // atomic swap
		}
	})
	for range 2000 {
		r := call(t, ts["read_file"], map[string]any{"path": "src/a.txt"})
		if strings.Contains(r.Output, "TOP-SECRET") {
			close(stop)
			wg.Wait()
			t.Fatal("secret read during a symlink race")
		}
	}
	close(stop)
	wg.Wait()
}

func TestDanglingSymlinkWrite(t *testing.T) {
	fx := newFixture(t, nil)
	target := filepath.Join(fx.outside, "created-by-attack.txt")
	symlink(t, target, fx.path("dangling"))
	symlink(t, "../outside/also-created", fx.path("dangling-rel"))
	symlink(t, "missing-inside.txt", fx.path("dangling-in"))
	ts := toolset(t, Policy{WorkDir: fx.work})
	for _, p := range []string{"dangling", "dangling-rel", "dangling-in"} {
		wantError(t, call(t, ts["write_file"], map[string]any{"path": p, "content": "x"}), "write "+p, "symlink")
		wantError(t, call(t, ts["write_file"], map[string]any{"path": p, "content": "x", "append": true}), "append "+p, "symlink")
	}
	for _, f := range []string{target, filepath.Join(fx.outside, "also-created"), fx.path("missing-inside.txt")} {
		if _, err := os.Lstat(f); err == nil {
			t.Errorf("%s was created through a dangling symlink", f)
		}
	}
}

func TestProtectedPaths(t *testing.T) {
	fx := newFixture(t, map[string]string{
		".git/config":              "[core]\n",
		".git/hooks/pre-commit":    "#!/bin/sh\n",
		".awf/tools/x/config.yaml": "name: x\n",
		".env":                     "KEY=1\n",
		"svc/.env.local":           "KEY=2\n",
		"src/a.go":                 "package a\n",
	})
	ts := toolset(t, Policy{WorkDir: fx.work, Write: []string{"**"}})
	refused := []string{
		".git/hooks/pre-commit", ".git/hooks/post-checkout", ".git/config", ".awf/tools/x/config.yaml",
		".awf/config.yaml", ".env", ".env.production", "svc/.env.local", ".ENV", "svc/.git/config", ".git",
		"./src/../.env", fx.path(".git/config"),
	}
	for _, p := range refused {
		t.Run(p, func(t *testing.T) {
			wantError(t, call(t, ts["write_file"], map[string]any{"path": p, "content": "pwned"}), "write "+p, "is protected")
			wantError(t, call(t, ts["write_file"], map[string]any{"path": p, "content": "pwned", "append": true}), "append "+p, "is protected")
			wantError(t, call(t, ts["read_file"], map[string]any{"path": p}), "read "+p, "is protected")
		})
	}
	if got := readBack(t, fx.path(".git/hooks/pre-commit")); got != "#!/bin/sh\n" {
		t.Errorf("hook changed to %q", got)
	}
	// A directory symlink inside the root may not lead a write into a protected directory.
	symlink(t, ".git/hooks", fx.path("hooks"))
	wantError(t, call(t, ts["write_file"], map[string]any{"path": "hooks/post-merge", "content": "pwned"}), "write via hooks link", "protected")
	if _, err := os.Lstat(fx.path(".git/hooks/post-merge")); err == nil {
		t.Error("hook created through a directory symlink")
	}
	symlink(t, ".awf", fx.path("awf-link"))
	wantError(t, call(t, ts["write_file"], map[string]any{"path": "awf-link/new/dir/config.yaml", "content": "pwned"}), "write via awf link", "protected")
	if _, err := os.Lstat(fx.path(".awf/new")); err == nil {
		t.Error("directories created in .awf through a symlink")
	}
	// User-added protection.
	user := toolset(t, Policy{WorkDir: fx.work, Protect: []string{"src/secret*"}})
	wantError(t, call(t, user["write_file"], map[string]any{"path": "src/secret.go", "content": "x"}), "user protect", "protected (matches "+fx.work+"/src/secret*)")
	// Legitimate writes next to protected ones pass.
	wantOK(t, call(t, ts["write_file"], map[string]any{"path": "src/b.go", "content": "package a\n"}), "legit write")
	wantOK(t, call(t, ts["write_file"], map[string]any{"path": ".envrc.example", "content": "x"}), "not .env")
	wantOK(t, call(t, ts["write_file"], map[string]any{"path": "gitconfig", "content": "x"}), "not .git/config")
	// Names still show, contents do not.
	out := wantOK(t, call(t, ts["list_dir"], map[string]any{"path": "."}), "list")
	if !strings.Contains(out, ".env  ") {
		t.Errorf("list_dir hides protected names: %q", out)
	}
	grep := wantOK(t, call(t, ts["grep"], map[string]any{"pattern": "KEY"}), "grep")
	if strings.Contains(grep, "KEY=") {
		t.Errorf("grep shows protected content: %q", grep)
	}
	wantError(t, call(t, ts["list_dir"], map[string]any{"path": ".awf"}), "list .awf", "protected")
}

func TestWriteOutsideWriteGlobs(t *testing.T) {
	fx := newFixture(t, map[string]string{"src/a.go": "package a\n", "docs/d.md": "d\n"})
	ts := toolset(t, Policy{WorkDir: fx.work, Read: []string{"**"}, Write: []string{"src/**"}})
	wantOK(t, call(t, ts["read_file"], map[string]any{"path": "docs/d.md"}), "read docs")
	wantError(t, call(t, ts["write_file"], map[string]any{"path": "docs/d.md", "content": "x"}), "write docs",
		`path "docs/d.md" is outside the allowed write paths [`+fx.work+`/src/**]`)
	wantError(t, call(t, ts["write_file"], map[string]any{"path": "src/../docs/d.md", "content": "x"}), "write dotdot", "outside the allowed write paths")
	wantError(t, call(t, ts["write_file"], map[string]any{"path": "srcx/a.go", "content": "x"}), "sibling prefix", "outside the allowed write paths")
	wantOK(t, call(t, ts["write_file"], map[string]any{"path": "./src/../src/b.go", "content": "package a\n"}), "write src")
	if got := readBack(t, fx.path("docs/d.md")); got != "d\n" {
		t.Errorf("docs/d.md changed to %q", got)
	}
	// A symlink in src leading to docs does not widen the write globs.
	symlink(t, "../docs", fx.path("src/docs-link"))
	wantError(t, call(t, ts["write_file"], map[string]any{"path": "src/docs-link/d.md", "content": "x"}), "write via link")
	if got := readBack(t, fx.path("docs/d.md")); got != "d\n" {
		t.Errorf("docs/d.md changed through a link to %q", got)
	}
	// Read-only policy: nothing may be written.
	ro := toolset(t, Policy{WorkDir: fx.work, Write: []string{}})
	wantError(t, call(t, ro["write_file"], map[string]any{"path": "src/a.go", "content": "x"}), "read-only", "outside the allowed write paths []")
}

func TestHardLinkAppendRefused(t *testing.T) {
	fx := newFixture(t, nil)
	if err := os.Link(filepath.Join(fx.outside, "secret.txt"), fx.path("hard.txt")); err != nil {
		t.Skipf("link: %v", err)
	}
	ts := toolset(t, Policy{WorkDir: fx.work})
	wantError(t, call(t, ts["write_file"], map[string]any{"path": "hard.txt", "content": "pwned", "append": true}), "append hard link", "hard links")
	// Replace is safe: the rename gives hard.txt a new inode and leaves the other name alone.
	wantOK(t, call(t, ts["write_file"], map[string]any{"path": "hard.txt", "content": "new"}), "replace hard link")
	if got := readBack(t, filepath.Join(fx.outside, "secret.txt")); got != fx.secret {
		t.Errorf("outside file changed through a hard link to %q", got)
	}
	// Known limit (os.Root does not see hard links): a pre-existing hard link is readable. L2
	// (Landlock, uid) is the layer that keeps such links from being made.
}

func TestAbsoluteGlobOutsideWorkDir(t *testing.T) {
	fx := newFixture(t, map[string]string{"src/a.go": "package a\n"})
	writeFile(t, filepath.Join(fx.outside, "lib", "l.txt"), "lib\n")
	ts := toolset(t, Policy{WorkDir: fx.work, Read: []string{"**", fx.outside + "/lib/**"}})
	if got := wantOK(t, call(t, ts["read_file"], map[string]any{"path": fx.outside + "/lib/l.txt"}), "abs glob"); got != "lib\n" {
		t.Errorf("read = %q", got)
	}
	if got := wantOK(t, call(t, ts["read_file"], map[string]any{"path": "../outside/lib/l.txt"}), "rel to abs glob"); got != "lib\n" {
		t.Errorf("read = %q", got)
	}
	wantError(t, call(t, ts["read_file"], map[string]any{"path": fx.outside + "/secret.txt"}), "next to abs glob", "outside the allowed read paths")
	wantError(t, call(t, ts["read_file"], map[string]any{"path": fx.outside + "/lib/../secret.txt"}), "dotdot out of abs glob", "outside the allowed read paths")
	out := wantOK(t, call(t, ts["list_dir"], map[string]any{"path": fx.outside}), "list parent of abs glob")
	if out != "lib/\n" {
		t.Errorf("list_dir(outside) = %q, want only the way to lib/", out)
	}
}

// TestWithoutRealPaths runs the tools as on a system without /proc/self/fd: any symlink on the
// way is refused, plain paths still work.
func TestWithoutRealPaths(t *testing.T) {
	fx := newFixture(t, map[string]string{"src/a.go": "package a\n", "docs/d.md": "d\n"})
	symlink(t, "src/a.go", fx.path("link.go"))
	symlink(t, "docs", fx.path("docs-link"))
	c, err := Policy{WorkDir: fx.work}.compile()
	if err != nil {
		t.Fatal(err)
	}
	c.realPath = func(*os.File) (string, error) { return "", errors.ErrUnsupported }
	read, write := &ReadFile{c}, &WriteFile{c}
	if got := wantOK(t, call(t, read, map[string]any{"path": "src/a.go"}), "plain read"); got != "package a\n" {
		t.Errorf("read = %q", got)
	}
	wantOK(t, call(t, write, map[string]any{"path": "src/new/b.go", "content": "b"}), "plain write")
	wantOK(t, call(t, write, map[string]any{"path": "src/a.go", "content": "x", "append": true}), "plain append")
	wantError(t, call(t, read, map[string]any{"path": "link.go"}), "read link", "symlinks cannot be verified")
	wantError(t, call(t, write, map[string]any{"path": "docs-link/new.md", "content": "x"}), "write via dir link", "symlinks cannot be verified")
}
