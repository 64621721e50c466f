package audit

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/awf-dev/awf/internal/domain/ports"
)

// FuzzScanFile: whatever a log holds, reading it in two passes without holding it gives what
// holding every record gave (wholeRead), for a filter that folds started records and one
// that selects by tool, and never panics.
func FuzzScanFile(f *testing.F) {
	started := record(1)
	started.Outcome = ports.OutcomeStarted
	f.Add(lines(f, started, record(1), record(2)))
	f.Add(lines(f, started) + "not json\n" + `{"run_id":"run-1","tool":"shell","outcome":"started","call_id":"call_001"}` + "\n")
	f.Add(`{"run_id":"r","tool":"t","outcome":"started"}` + "\n" + `{"run_id":"r","tool":"t","outcome":"ok"}` + "\n" + `{"run_id":"r","to`)
	f.Fuzz(func(t *testing.T, log string) {
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, filter := range []Filter{{}, {Tool: "shell"}, {Outcome: ports.OutcomeStarted}} {
			var got []ports.AuditRecord
			_, err := ScanFile(path, filter, nil, nil, func(r ports.AuditRecord) error { got = append(got, r); return nil })
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(wholeRead(t, path, filter), got, cmpopts.EquateEmpty()); d != "" {
				t.Fatalf("filter %+v: ScanFile differs from reading the whole log (-whole +scan):\n%s", filter, d)
			}
		}
	})
}
