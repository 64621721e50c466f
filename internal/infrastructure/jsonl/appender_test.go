package jsonl

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAppendKeepsLinesWhole appends to a new file, to a whole one and to one that ends inside
// a line, as a later process would: each appended line is a line of its own, and no blank line
// appears where none was cut.
func TestAppendKeepsLinesWhole(t *testing.T) {
	tests := []struct {
		name, before, want string
	}{
		{"new file", "", "a\nb\n"},
		{"whole", "x\n", "x\na\nb\n"},
		{"cut short", "{\"x\":", "{\"x\":\na\nb\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "f.jsonl")
			if tc.before != "" {
				if err := os.WriteFile(path, []byte(tc.before), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			for _, line := range []string{"a\n", "b\n"} { // two writers, one after the other
				a, err := Open(path, 0o600)
				if err != nil {
					t.Fatal(err)
				}
				if err := a.Append([]byte(line)); err != nil {
					t.Fatal(err)
				}
				if err := a.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if got, _ := os.ReadFile(path); string(got) != tc.want {
				t.Errorf("file = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestAppendAfterAFailedWrite: a write that fails (here: a full device) may have left part of
// its line, so the next one starts with a newline.
func TestAppendAfterAFailedWrite(t *testing.T) {
	a, err := Open("/dev/full", 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer a.Close()
	if a.cut {
		t.Fatal("a device is taken as cut short")
	}
	if err := a.Append([]byte("a\n")); err == nil {
		t.Fatal("writing to /dev/full succeeded")
	}
	if !a.cut {
		t.Error("after a failed write, the next line does not start on a new line")
	}
}

// TestAppendAfterAnotherWriterWasCut: the file is shared, so a line cut short by another
// process after this one opened it (killed mid-write), whether the file was whole or empty at
// Open, is still followed by a line of its own.
func TestAppendAfterAnotherWriterWasCut(t *testing.T) {
	for _, before := range []string{"", "x\n"} {
		path := filepath.Join(t.TempDir(), "f.jsonl")
		if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
			t.Fatal(err)
		}
		a, err := Open(path, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Append([]byte("a\n")); err != nil {
			t.Fatal(err)
		}
		other, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.Write([]byte(`{"other":`)); err != nil { // then killed
			t.Fatal(err)
		}
		other.Close()
		if err := a.Append([]byte("b\n")); err != nil {
			t.Fatal(err)
		}
		a.Close()
		if got, want := readFile(t, path), before+"a\n{\"other\":\nb\n"; got != want {
			t.Errorf("file = %q, want %q", got, want)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// BenchmarkAppend measures one 300-byte line: the lock, the check of the file's last byte and
// the write (no sync).
func BenchmarkAppend(b *testing.B) {
	a, err := Open(filepath.Join(b.TempDir(), "f.jsonl"), 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	line := append(make([]byte, 299), '\n')
	for i := range line[:299] {
		line[i] = 'x'
	}
	for b.Loop() {
		if err := a.Append(line); err != nil {
			b.Fatal(err)
		}
	}
}
