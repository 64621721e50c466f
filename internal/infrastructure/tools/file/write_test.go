package file

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/awf-dev/awf/internal/domain/tool"
)

func TestWriteFile(t *testing.T) {
	fx := newFixture(t, map[string]string{"src/old.go": "old content\n"})
	write := toolset(t, Policy{WorkDir: fx.work})["write_file"]
	tests := []struct {
		name    string
		args    map[string]any
		file    string
		want    string
		wantOut string
	}{
		{"new file", map[string]any{"path": "src/new.go", "content": "package x\n"}, "src/new.go", "package x\n", "wrote 10 bytes to src/new.go (new file)"},
		{"creates parents", map[string]any{"path": "a/b/c/d.txt", "content": "deep"}, "a/b/c/d.txt", "deep", "wrote 4 bytes to a/b/c/d.txt (new file)"},
		{"replace", map[string]any{"path": "src/old.go", "content": "new\n"}, "src/old.go", "new\n", "wrote 4 bytes to src/old.go (replaced 12 bytes)"},
		{"dot dot inside", map[string]any{"path": "./src/../src/x.go", "content": "x"}, "src/x.go", "x", "wrote 1 bytes to src/x.go (new file)"},
		{"absolute inside", map[string]any{"path": fx.path("abs.txt"), "content": "abs"}, "abs.txt", "abs", "wrote 3 bytes to abs.txt (new file)"},
		{"empty content", map[string]any{"path": "empty.txt", "content": ""}, "empty.txt", "", "wrote 0 bytes to empty.txt (new file)"},
		{"append creates", map[string]any{"path": "log.txt", "content": "one\n", "append": true}, "log.txt", "one\n", "appended 4 bytes to log.txt (now 4 bytes)"},
		{"append adds", map[string]any{"path": "log.txt", "content": "two\n", "append": true}, "log.txt", "one\ntwo\n", "appended 4 bytes to log.txt (now 8 bytes)"},
		{"append false replaces", map[string]any{"path": "log.txt", "content": "three\n", "append": false}, "log.txt", "three\n", "wrote 6 bytes to log.txt (replaced 8 bytes)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := wantOK(t, call(t, write, tc.args), tc.name)
			if out != tc.wantOut {
				t.Errorf("write_file(%v) output = %q, want %q", tc.args, out, tc.wantOut)
			}
			if got := readBack(t, fx.path(tc.file)); got != tc.want {
				t.Errorf("after write_file(%v), %s = %q, want %q", tc.args, tc.file, got, tc.want)
			}
		})
	}
	assertNoTempFiles(t, fx.work)
}

func TestWriteFileErrors(t *testing.T) {
	fx := newFixture(t, map[string]string{"src/a.go": "a", "file.txt": "f"})
	write := toolset(t, Policy{WorkDir: fx.work, MaxWriteBytes: 10})["write_file"]
	tests := []struct {
		name      string
		args      map[string]any
		fragments []string
	}{
		{"too big", map[string]any{"path": "big.txt", "content": strings.Repeat("x", 11)}, []string{"content is 11 bytes, over the limit of 10 bytes", "append=true"}},
		{"directory", map[string]any{"path": "src", "content": "x"}, []string{"src is a directory"}},
		{"working directory", map[string]any{"path": ".", "content": "x"}, []string{"is a directory"}},
		{"trailing slash", map[string]any{"path": "new/", "content": "x"}, []string{"names a directory"}},
		{"parent is a file", map[string]any{"path": "file.txt/x", "content": "x"}, []string{"not a directory"}},
		{"missing content", map[string]any{"path": "x.txt"}, []string{`missing required argument "content"`}},
		{"append not boolean", map[string]any{"path": "x.txt", "content": "x", "append": "yes"}, []string{`argument "append" must be a boolean`}},
		{"unknown argument", map[string]any{"path": "x.txt", "content": "x", "mode": "0777"}, []string{"unknown argument mode"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wantError(t, call(t, write, tc.args), tc.name, tc.fragments...)
		})
	}
	if _, err := os.Stat(fx.path("big.txt")); err == nil {
		t.Error("an oversized write created the file")
	}
	assertNoTempFiles(t, fx.work)
}

func TestWriteFileKeepsMode(t *testing.T) {
	fx := newFixture(t, map[string]string{"run.sh": "#!/bin/sh\n"})
	if err := os.Chmod(fx.path("run.sh"), 0o750); err != nil {
		t.Fatal(err)
	}
	wantOK(t, call(t, toolset(t, Policy{WorkDir: fx.work})["write_file"], map[string]any{"path": "run.sh", "content": "#!/bin/sh\necho hi\n"}), "replace script")
	fi, err := os.Stat(fx.path("run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o750 {
		t.Errorf("mode after replace = %v, want 0750", got)
	}
}

// TestWriteFileAtomic replaces a file many times while another goroutine reads it: every read
// sees one whole version, and no temporary file is left.
func TestWriteFileAtomic(t *testing.T) {
	fx := newFixture(t, map[string]string{"data.txt": strings.Repeat("a", 4096)})
	write := toolset(t, Policy{WorkDir: fx.work})["write_file"]
	versions := []string{strings.Repeat("a", 4096), strings.Repeat("b", 8192)}
	done := make(chan struct{})
	torn := make(chan string, 1)
	go func() {
		defer close(torn)
		for {
			select {
			case <-done:
				return
			default:
			}
			b, err := os.ReadFile(fx.path("data.txt"))
			if err == nil && !slices.Contains(versions, string(b)) {
				torn <- string(b)
				return
			}
		}
	}()
	for i := range 60 {
		wantOK(t, call(t, write, map[string]any{"path": "data.txt", "content": versions[i%2]}), "replace")
	}
	close(done)
	if got, ok := <-torn; ok {
		t.Fatalf("a reader saw a torn file of %d bytes", len(got))
	}
	assertNoTempFiles(t, fx.work)
}

func TestWriteFileLiteralGlob(t *testing.T) {
	fx := newFixture(t, map[string]string{"notes.txt": "n"})
	ts := toolset(t, Policy{WorkDir: fx.work, Read: []string{"notes.txt"}, Write: []string{"notes.txt", "out/**"}})
	wantOK(t, call(t, ts["write_file"], map[string]any{"path": "notes.txt", "content": "new"}), "literal glob")
	wantOK(t, call(t, ts["read_file"], map[string]any{"path": "notes.txt"}), "literal read")
	wantError(t, call(t, ts["write_file"], map[string]any{"path": "other.txt", "content": "new"}), "next to literal", "outside the allowed write paths")
	// The static prefix of a write glob is created when missing.
	wantOK(t, call(t, ts["write_file"], map[string]any{"path": "out/sub/r.txt", "content": "r"}), "missing prefix")
	if got := readBack(t, fx.path("out/sub/r.txt")); got != "r" {
		t.Errorf("out/sub/r.txt = %q", got)
	}
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	var temps []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".awf-") && strings.HasSuffix(d.Name(), ".tmp") {
			temps = append(temps, p)
		}
		return nil
	})
	if diff := cmp.Diff([]string(nil), temps); diff != "" {
		t.Errorf("temporary files left (-want +got):\n%s", diff)
	}
}

// TestWriteRecordsTheChange: write_file records the file's digests before and after and, for
// a text file, a unified diff; a binary file gets digests only.
func TestWriteRecordsTheChange(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tools, err := NewTools(Policy{WorkDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	w := tools[1]
	res := w.Execute(t.Context(), tool.Invocation{Args: map[string]any{"path": "a.txt", "content": "one\n2\nthree\n"}})
	if !res.Succeeded() || len(res.Changes) != 1 {
		t.Fatalf("result = %+v, want one change", res)
	}
	c := res.Changes[0]
	wantDiff := "--- a.txt\n+++ a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
	if c.Path != "a.txt" || !strings.HasPrefix(c.Before, "sha256:") || !strings.HasPrefix(c.After, "sha256:") ||
		c.Before == c.After || c.Diff != wantDiff {
		t.Errorf("change = %+v, want digests and the diff\n%s", c, wantDiff)
	}
	res = w.Execute(t.Context(), tool.Invocation{Args: map[string]any{"path": "new.bin", "content": "a\x00b"}})
	if c := res.Changes[0]; c.Before != "" || c.After == "" || c.Diff != "" || c.DiffOmitted != "after: binary" {
		t.Errorf("change of a new binary file = %+v, want the digest after only", c)
	}
}
