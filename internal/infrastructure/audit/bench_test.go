package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/awf-dev/awf/internal/domain/ports"
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

// BenchmarkRead reads a log of 10,000 calls, each a started and a completion record, with and
// without an outcome filter.
func BenchmarkRead(b *testing.B) {
	recs := make([]ports.AuditRecord, 0, 20000)
	for i := range 10000 {
		done := record(i)
		done.Arguments = map[string]any{"command": "git status"}
		if i%10 == 0 {
			done.Outcome = ports.OutcomeDenied
		}
		started := done
		started.Outcome = ports.OutcomeStarted
		recs = append(recs, started, done)
	}
	log := lines(b, recs...)
	for _, outcome := range []string{"", ports.OutcomeDenied, ports.OutcomeStarted} {
		b.Run("outcome="+outcome, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := Read(strings.NewReader(log), Filter{Outcome: outcome}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRunIndexRecords reads the 4,000 records of one run from a log it wrote alone, as
// the run viewer does at every refresh of the run's page once the log is indexed.
func BenchmarkRunIndexRecords(b *testing.B) {
	recs := make([]ports.AuditRecord, 4000)
	for i := range recs {
		recs[i] = record(i)
		recs[i].RunID = "run-1"
	}
	path := filepath.Join(b.TempDir(), "audit.jsonl")
	if err := os.WriteFile(path, []byte(lines(b, recs...)), 0o600); err != nil {
		b.Fatal(err)
	}
	x := NewRunIndex(path)
	for b.Loop() {
		got, _, err := x.Records("run-1")
		if err != nil || len(got) != len(recs) {
			b.Fatalf("%d records, %v", len(got), err)
		}
	}
}
