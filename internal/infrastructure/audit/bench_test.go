package audit

import (
	"path/filepath"
	"strings"
	"testing"
)

func BenchmarkMaskText(b *testing.B) {
	m := newMasker([]string{"secret-value"})
	for _, n := range []int{100, 3000} {
		s := "git commit -m '" + strings.Repeat("x", n) + "'"
		b.Run(strings.Repeat("x", 0)+string(rune('0'+n/1000)), func(b *testing.B) {
			for b.Loop() {
				m.text(s)
			}
		})
	}
}

func BenchmarkRecord(b *testing.B) {
	for _, sync := range []bool{true, false} {
		name := "fsync"
		if !sync {
			name = "nosync"
		}
		b.Run(name, func(b *testing.B) {
			l, err := Open(filepath.Join(b.TempDir(), "audit.jsonl"), Options{NoSync: !sync})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			rec := record(1)
			rec.Arguments = map[string]any{"command": "git status", "dir": "/work"}
			for b.Loop() {
				if err := l.Record(b.Context(), rec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
