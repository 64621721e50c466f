package file

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/awf-dev/awf/internal/domain/tool"
)

func benchFixture(b *testing.B) string {
	b.Helper()
	work, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	os.MkdirAll(filepath.Join(work, "src", "pkg"), 0o755)
	os.WriteFile(filepath.Join(work, "src", "pkg", "main.go"), []byte("package main\n\nfunc main() {}\n"), 0o644)
	return work
}

// BenchmarkReadFileSmall measures one read_file call of a small file through the whole policy:
// resolve, glob and protect checks, os.Root open, real-path check, read.
func BenchmarkReadFileSmall(b *testing.B) {
	work := benchFixture(b)
	for _, p := range []Policy{
		{WorkDir: work},
		{WorkDir: work, Read: []string{"src/**/*.go", "docs/**"}, Protect: []string{"**/secret*"}},
	} {
		read, err := NewReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		inv := tool.Invocation{Args: map[string]any{"path": "src/pkg/main.go"}}
		b.Run(fmt.Sprintf("read=%v", p.Read), func(b *testing.B) {
			for b.Loop() {
				if r := read.Execute(context.Background(), inv); !r.Succeeded() {
					b.Fatal(r.Error)
				}
			}
		})
	}
}

// BenchmarkOSReadFile is the baseline: os.ReadFile of the same file, no policy.
func BenchmarkOSReadFile(b *testing.B) {
	name := filepath.Join(benchFixture(b), "src", "pkg", "main.go")
	for b.Loop() {
		if _, err := os.ReadFile(name); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPathCheck measures the lexical part alone: resolve and glob/protect checks.
func BenchmarkPathCheck(b *testing.B) {
	c, err := Policy{WorkDir: benchFixture(b)}.compile()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		abs, err := c.resolve("./src/../src/pkg/main.go")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.check("src/pkg/main.go", abs, accessRead); err != nil {
			b.Fatal(err)
		}
	}
}
