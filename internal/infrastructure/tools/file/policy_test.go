package file

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/fault"
)

func TestPolicyErrors(t *testing.T) {
	fx := newFixture(t, map[string]string{"file.txt": "x"})
	tests := []struct {
		name string
		p    Policy
		want string
	}{
		{"no work dir", Policy{}, "WorkDir is required"},
		{"missing work dir", Policy{WorkDir: fx.path("nope")}, "work dir"},
		{"work dir is a file", Policy{WorkDir: fx.path("file.txt")}, "is not a directory"},
		{"bad read glob", Policy{WorkDir: fx.work, Read: []string{"src/[a"}}, "read"},
		{"bad write glob", Policy{WorkDir: fx.work, Write: []string{"{a,b"}}, "write"},
		{"bad protect glob", Policy{WorkDir: fx.work, Protect: []string{"a}"}}, "protect"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewTools(tc.p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("NewTools(%+v) = %v, want an error containing %q", tc.p, err, tc.want)
			}
			if k := fault.KindOf(err); k != fault.Invalid {
				t.Errorf("KindOf(%v) = %v, want invalid", err, k)
			}
		})
	}
}

func TestWorkDirThroughSymlink(t *testing.T) {
	fx := newFixture(t, map[string]string{"src/a.go": "package a\n"})
	via := filepath.Join(filepath.Dir(fx.work), "via")
	symlink(t, fx.work, via)
	ts := toolset(t, Policy{WorkDir: via, Read: []string{"src/**"}, Write: []string{"src/**"}})
	for _, p := range []string{"src/a.go", filepath.Join(via, "src/a.go"), fx.path("src/a.go")} {
		if got := wantOK(t, call(t, ts["read_file"], map[string]any{"path": p}), p); got != "package a\n" {
			t.Errorf("read %s = %q", p, got)
		}
	}
	wantOK(t, call(t, ts["write_file"], map[string]any{"path": filepath.Join(via, "src/b.go"), "content": "b"}), "write via")
	if d := ts["read_file"].Description(toolContext(via)); !strings.Contains(d, via) {
		t.Errorf("description %q does not show the working directory as configured", d)
	}
}

func TestWorkDirWithGlobCharacters(t *testing.T) {
	base := newFixture(t, nil)
	work := filepath.Join(base.work, "a[1]{x,y}*")
	sibling := filepath.Join(base.work, "a1x")
	writeFile(t, filepath.Join(work, "f.txt"), "inside\n")
	writeFile(t, filepath.Join(sibling, "f.txt"), "sibling\n")
	ts := toolset(t, Policy{WorkDir: work})
	if got := wantOK(t, call(t, ts["read_file"], map[string]any{"path": "f.txt"}), "inside"); got != "inside\n" {
		t.Errorf("read f.txt = %q", got)
	}
	wantError(t, call(t, ts["read_file"], map[string]any{"path": "../a1x/f.txt"}), "sibling", "outside the allowed read paths")
	wantOK(t, call(t, ts["write_file"], map[string]any{"path": "g.txt", "content": "g"}), "write")
	if _, err := os.Stat(filepath.Join(work, "g.txt")); err != nil {
		t.Errorf("g.txt not written inside: %v", err)
	}
}

func TestSuggestionsStayInPolicy(t *testing.T) {
	fx := newFixture(t, map[string]string{"src/main.go": "x", "src/mainx.txt": "secret-ish"})
	ts := toolset(t, Policy{WorkDir: fx.work, Read: []string{"src/*.go", "src/*.tat"}})
	wantError(t, call(t, ts["read_file"], map[string]any{"path": "src/mian.go"}), "suggest", "did you mean src/main.go?")
	r := call(t, ts["read_file"], map[string]any{"path": "src/mainx.tat"})
	wantError(t, r, "no suggestion", "no such file")
	if strings.Contains(r.Error, "mainx.txt") {
		t.Errorf("suggestion names a file outside the read globs: %q", r.Error)
	}
}
