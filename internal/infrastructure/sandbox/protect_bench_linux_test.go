//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkProtectIndexUnchanged is the walk of each sandboxed call in a workspace of 5,000
// directories and 50,000 files (a node_modules) that did not change since the last call:
// lstat of every directory, or inotify (no system call per directory).
func BenchmarkProtectIndexUnchanged(b *testing.B) {
	ws := nodeModules(b, 50, 100, "lib")
	pats := []string{filepath.Join(ws, "**/.env"), filepath.Join(ws, "**/*.pem")}
	for _, statOnly := range []bool{true, false} {
		b.Run(map[bool]string{true: "lstat", false: "watched"}[statOnly], func(b *testing.B) {
			// The directories are seconds old for the index, as in a real workspace.
			idx := ProtectIndex{statOnly: statOnly, eager: !statOnly, now: func() time.Time { return time.Now().Add(2 * racyWindow) }}
			defer idx.Close()
			idx.Matches(ws, pats)
			reads, stats := idx.reads, idx.stats
			for b.Loop() {
				idx.Matches(ws, pats)
			}
			b.ReportMetric(float64(idx.reads-reads)/float64(b.N), "reads/op")
			b.ReportMetric(float64(idx.stats-stats)/float64(b.N), "lstats/op")
		})
	}
}

// BenchmarkProtectIndexManyPatterns is the walk of a sandboxed call in a workspace of 2,000
// files whose policy protects 10 or 4,000 directories by ** patterns: the cost per entry
// must not grow with the patterns that cannot match it (each entry was compared with every
// pattern).
func BenchmarkProtectIndexManyPatterns(b *testing.B) {
	ws := b.TempDir()
	for i := range 100 {
		d := filepath.Join(ws, "src", fmt.Sprintf("pkg%d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
		for k := range 20 {
			if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.go", k)), nil, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, n := range []int{10, 4000} {
		b.Run(fmt.Sprintf("patterns=%d", n), func(b *testing.B) {
			pats := []string{filepath.Join(ws, "**/.env")}
			for i := range n {
				pats = append(pats, filepath.Join(ws, fmt.Sprintf("gen%d/**", i)))
			}
			idx := ProtectIndex{statOnly: true, now: func() time.Time { return time.Now().Add(2 * racyWindow) }}
			defer idx.Close()
			for b.Loop() {
				idx.Matches(ws, pats)
			}
		})
	}
}

// BenchmarkProtectIndexFirstWalk is a run's first sandboxed call in a workspace of 1,000
// directories and 10,000 files with a few ** patterns: every entry is read and matched (the
// case BenchmarkProtectIndexManyPatterns must not make dearer; at ff62609 about 30 ms and
// 45,000 allocations here).
func BenchmarkProtectIndexFirstWalk(b *testing.B) {
	ws := nodeModules(b, 50, 20, "Lib")
	pats := []string{filepath.Join(ws, "**/.env"), filepath.Join(ws, "**/*.pem"), filepath.Join(ws, "**/.git/hooks")}
	b.ReportAllocs()
	for b.Loop() {
		idx := ProtectIndex{statOnly: true, now: func() time.Time { return time.Now().Add(2 * racyWindow) }}
		idx.Matches(ws, pats)
		idx.Close()
	}
}

// nodeModules makes a workspace of packages x libs directories (node_modules/pI/<lib>J) of
// 10 files each, and returns it.
func nodeModules(b *testing.B, packages, libs int, lib string) string {
	ws := b.TempDir()
	for i := range packages {
		for j := range libs {
			d := filepath.Join(ws, "node_modules", fmt.Sprintf("p%d", i), fmt.Sprintf("%s%d", lib, j))
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
			for k := range 10 {
				if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%d.js", k)), nil, 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	return ws
}
